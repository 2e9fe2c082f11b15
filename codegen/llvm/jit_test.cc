#include "codegen/llvm/jit.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "codegen/llvm/array_kernel.h"
#include "codegen/llvm/llvm_util.h"
#include "codegen/llvm/vector_math.h"
#include "gtest/gtest.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "support/perf_map.h"

namespace hgc {
namespace codegen {
namespace {

// Called from JIT'd code through an absolute symbol.
int32_t TimesThreePlusOne(int32_t x) { return 3 * x + 1; }
int32_t g_external_data = 42;

// A fresh context and module for the JIT's target.
struct NewModule {
  std::unique_ptr<llvm::LLVMContext> ctx =
      std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module;
  explicit NewModule(const std::string& name)
      : module(std::make_unique<llvm::Module>(name, *ctx)) {}
};

// i32 name(i32 x) { return body(x); }
llvm::Function* DefineI32Fn(
    llvm::Module& m, const std::string& name,
    const std::function<llvm::Value*(llvm::IRBuilder<>&, llvm::Value*)>& body) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Function* fn =
      llvm::Function::Create(llvm::FunctionType::get(i32, {i32}, false),
                             llvm::Function::ExternalLinkage, name, &m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  b.CreateRet(body(b, fn->getArg(0)));
  return fn;
}

llvm::FunctionCallee DeclareI32Fn(llvm::Module& m, const std::string& name) {
  llvm::Type* i32 = llvm::Type::getInt32Ty(m.getContext());
  return m.getOrInsertFunction(name,
                               llvm::FunctionType::get(i32, {i32}, false));
}

std::unique_ptr<Jit> MakeJit(JitOptions options = {}) {
  absl::StatusOr<TargetSpec> spec = HostTargetSpec("all");
  EXPECT_TRUE(spec.ok());
  absl::StatusOr<std::unique_ptr<Jit>> jit = Jit::Create(*spec, options);
  EXPECT_TRUE(jit.ok()) << jit.status();
  return std::move(jit).value();
}

using I32Fn = int32_t (*)(int32_t);

TEST(JitTest, CompilesAndRuns) {
  std::unique_ptr<Jit> jit = MakeJit();
  NewModule m("add");
  DefineI32Fn(*m.module, "add5", [](llvm::IRBuilder<>& b, llvm::Value* x) {
    return b.CreateAdd(x, b.getInt32(5));
  });
  ASSERT_TRUE(jit->AddModule(std::move(m.ctx), std::move(m.module)).ok());
  absl::StatusOr<I32Fn> fn = jit->LookupFunction<I32Fn>("add5");
  ASSERT_TRUE(fn.ok()) << fn.status();
  EXPECT_EQ((*fn)(37), 42);
  EXPECT_EQ(jit->Lookup("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(JitTest, ModulesCallEachOtherAndAbsoluteSymbols) {
  std::unique_ptr<Jit> jit = MakeJit();
  ASSERT_TRUE(jit->DefineAbsoluteSymbols(
                     {{"hgc_test_helper",
                       reinterpret_cast<const void*>(&TimesThreePlusOne)},
                      {"hgc_test_data", &g_external_data}})
                  .ok());
  NewModule a("a");
  llvm::FunctionCallee helper = DeclareI32Fn(*a.module, "hgc_test_helper");
  DefineI32Fn(*a.module, "f", [&](llvm::IRBuilder<>& b, llvm::Value* x) {
    return b.CreateCall(helper, {x});
  });
  NewModule c("c");
  llvm::FunctionCallee f = DeclareI32Fn(*c.module, "f");
  llvm::Type* i32 = llvm::Type::getInt32Ty(*c.ctx);
  auto* data = new llvm::GlobalVariable(*c.module, i32, /*isConstant=*/false,
                                        llvm::GlobalValue::ExternalLinkage,
                                        nullptr, "hgc_test_data");
  DefineI32Fn(*c.module, "g", [&](llvm::IRBuilder<>& b, llvm::Value* x) {
    return b.CreateAdd(b.CreateCall(f, {x}), b.CreateLoad(i32, data));
  });
  ASSERT_TRUE(jit->AddModule(std::move(a.ctx), std::move(a.module)).ok());
  ASSERT_TRUE(jit->AddModule(std::move(c.ctx), std::move(c.module)).ok());
  absl::StatusOr<I32Fn> g = jit->LookupFunction<I32Fn>("g");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)(10), 31 + 42);
  g_external_data = 100;  // read through the symbol, not copied
  EXPECT_EQ((*g)(0), 1 + 100);
  absl::StatusOr<void*> address = jit->Lookup("hgc_test_helper");
  ASSERT_TRUE(address.ok());
  EXPECT_EQ(*address, reinterpret_cast<void*>(&TimesThreePlusOne));
}

TEST(JitTest, AddModulesCompilesOnSeveralThreads) {
  std::unique_ptr<Jit> jit = MakeJit();
  ASSERT_TRUE(jit->DefineAbsoluteSymbols(
                     {{"hgc_test_helper",
                       reinterpret_cast<const void*>(&TimesThreePlusOne)}})
                  .ok());
  // Module i defines chain_i(x) = chain_{i-1}(x) + i, calling the previous
  // module's function (module 0 calls the absolute helper, 3x + 1).
  constexpr int kModules = 5;
  std::vector<ContextAndModule> modules;
  for (int i = 0; i < kModules; ++i) {
    NewModule m("chain" + std::to_string(i));
    llvm::FunctionCallee previous =
        DeclareI32Fn(*m.module, i == 0 ? std::string("hgc_test_helper")
                                       : "chain" + std::to_string(i - 1));
    DefineI32Fn(*m.module, "chain" + std::to_string(i),
                [&](llvm::IRBuilder<>& b, llvm::Value* x) {
                  return b.CreateAdd(b.CreateCall(previous, {x}),
                                     b.getInt32(i));
                });
    modules.push_back({std::move(m.ctx), std::move(m.module)});
  }
  ASSERT_TRUE(jit->AddModules(std::move(modules), 3).ok());
  absl::StatusOr<I32Fn> last =
      jit->LookupFunction<I32Fn>("chain" + std::to_string(kModules - 1));
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ((*last)(2), 3 * 2 + 1 + (0 + 1 + 2 + 3 + 4));

  // A module that does not verify fails the call, whichever thread took it.
  std::vector<ContextAndModule> with_bad;
  for (const char* name : {"fine", "bad"}) {
    NewModule m(name);
    llvm::Function* fn = llvm::Function::Create(
        llvm::FunctionType::get(llvm::Type::getVoidTy(*m.ctx), false),
        llvm::Function::ExternalLinkage, std::string(name) + "_fn",
        m.module.get());
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(*m.ctx, "entry", fn));
    if (std::string(name) == "fine") b.CreateRetVoid();
    with_bad.push_back({std::move(m.ctx), std::move(m.module)});
  }
  EXPECT_EQ(jit->AddModules(std::move(with_bad), 2).code(),
            absl::StatusCode::kInternal);
  // ... and adds neither of them.
  EXPECT_EQ(jit->Lookup("fine_fn").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(jit->AddModules({}, 2).ok());
}

TEST(JitTest, ErrorsAreStatuses) {
  std::unique_ptr<Jit> jit = MakeJit();
  // An unresolved external: the module adds, lookup fails as Internal (not
  // NotFound: the function itself exists) naming the missing symbol.
  NewModule m("m");
  llvm::FunctionCallee missing = DeclareI32Fn(*m.module, "hgc_no_such_fn");
  DefineI32Fn(*m.module, "h", [&](llvm::IRBuilder<>& b, llvm::Value* x) {
    return b.CreateCall(missing, {x});
  });
  ASSERT_TRUE(jit->AddModule(std::move(m.ctx), std::move(m.module)).ok());
  absl::Status s = jit->Lookup("h").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("hgc_no_such_fn"), absl::string_view::npos) << s;

  // libm is not visible: only the memcpy/memset family is.
  NewModule l("libm");
  llvm::Type* f32 = llvm::Type::getFloatTy(*l.ctx);
  llvm::FunctionCallee expf = l.module->getOrInsertFunction(
      "expf", llvm::FunctionType::get(f32, {f32}, false));
  DefineI32Fn(*l.module, "uses_expf",
              [&](llvm::IRBuilder<>& b, llvm::Value* x) {
                llvm::Value* r = b.CreateCall(expf, {b.CreateSIToFP(x, f32)});
                return b.CreateFPToSI(r, b.getInt32Ty());
              });
  ASSERT_TRUE(jit->AddModule(std::move(l.ctx), std::move(l.module)).ok());
  EXPECT_EQ(jit->Lookup("uses_expf").status().code(),
            absl::StatusCode::kInternal);

  // A duplicate definition.
  NewModule d("dup");
  DefineI32Fn(*d.module, "add5_twice",
              [](llvm::IRBuilder<>&, llvm::Value* x) { return x; });
  NewModule d2("dup2");
  DefineI32Fn(*d2.module, "add5_twice",
              [](llvm::IRBuilder<>&, llvm::Value* x) { return x; });
  ASSERT_TRUE(jit->AddModule(std::move(d.ctx), std::move(d.module)).ok());
  EXPECT_FALSE(jit->AddModule(std::move(d2.ctx), std::move(d2.module)).ok());

  // A broken module.
  NewModule bad("bad");
  llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(*bad.ctx), false),
      llvm::Function::ExternalLinkage, "bad", bad.module.get());
  llvm::BasicBlock::Create(*bad.ctx, "entry", bad.module->getFunction("bad"));
  EXPECT_EQ(jit->AddModule(std::move(bad.ctx), std::move(bad.module)).code(),
            absl::StatusCode::kInternal);
}

TEST(JitTest, MemsetIdiomResolves) {
  // O2 turns this zeroing loop into a memset call, which the JIT resolves
  // from the process.
  std::unique_ptr<Jit> jit = MakeJit();
  NewModule m("zero");
  llvm::LLVMContext& ctx = *m.ctx;
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Function* fn = llvm::Function::Create(
      llvm::FunctionType::get(b.getVoidTy(), {PointerTo(i32), b.getInt64Ty()},
                              false),
      llvm::Function::ExternalLinkage, "zero", m.module.get());
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", fn);
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSGT(fn->getArg(1), b.getInt64(0)), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(b.getInt64(0), entry);
  b.CreateStore(b.getInt32(0), b.CreateGEP(i32, fn->getArg(0), i));
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, fn->getArg(1)), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  ASSERT_TRUE(jit->AddModule(std::move(m.ctx), std::move(m.module)).ok());
  auto zero = jit->LookupFunction<void (*)(int32_t*, int64_t)>("zero");
  ASSERT_TRUE(zero.ok()) << zero.status();
  std::vector<int32_t> v(1000, 7);
  (*zero)(v.data(), 999);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[998], 0);
  EXPECT_EQ(v[999], 7);
}

TEST(JitTest, ConcurrentJitsAndLookups) {
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int32_t> results(kThreads, -1);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &results] {
      std::unique_ptr<Jit> jit = MakeJit();
      NewModule m("t" + std::to_string(t));
      DefineI32Fn(*m.module, "f", [t](llvm::IRBuilder<>& b, llvm::Value* x) {
        return b.CreateMul(x, b.getInt32(t + 1));
      });
      if (!jit->AddModule(std::move(m.ctx), std::move(m.module)).ok()) return;
      // Several threads race for the first lookup (which compiles).
      std::vector<std::thread> lookups;
      std::vector<int32_t> seen(3);
      for (int k = 0; k < 3; ++k) {
        lookups.emplace_back([&jit, &seen, k] {
          absl::StatusOr<I32Fn> fn = jit->LookupFunction<I32Fn>("f");
          seen[k] = fn.ok() ? (*fn)(10) : -1;
        });
      }
      for (std::thread& l : lookups) l.join();
      results[t] = seen[0] == seen[1] && seen[1] == seen[2] ? seen[0] : -2;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(results[t], 10 * (t + 1));
}

TEST(JitTest, DumpsOptimizedIrAndAssembly) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  JitOptions options;
  options.dump_dir = tmp != nullptr ? tmp : P_tmpdir;
  std::unique_ptr<Jit> jit = MakeJit(options);
  NewModule m("dumped_kernel");
  DefineI32Fn(*m.module, "d", [](llvm::IRBuilder<>& b, llvm::Value* x) {
    return b.CreateShl(x, b.getInt32(1));
  });
  ASSERT_TRUE(jit->AddModule(std::move(m.ctx), std::move(m.module)).ok());
  for (const char* ext : {".ll", ".s"}) {
    std::ifstream in(options.dump_dir + "/dumped_kernel" + ext);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("d"), std::string::npos) << ext;
    EXPECT_FALSE(text.str().empty()) << ext;
  }
  options.dump_dir = "/nonexistent/dir";
  std::unique_ptr<Jit> bad = MakeJit(options);
  NewModule m2("k");
  DefineI32Fn(*m2.module, "k",
              [](llvm::IRBuilder<>&, llvm::Value* x) { return x; });
  EXPECT_EQ(bad->AddModule(std::move(m2.ctx), std::move(m2.module)).code(),
            absl::StatusCode::kFailedPrecondition);
}

// A small elementwise module (a gelu over float arrays, ~150 IR
// instructions after inlining the math) through Jit creation, O2 and
// codegen, five times; prints the latency of each phase (jit_bench is the
// benchmark; no timing is asserted here).
TEST(JitTest, CompileLatency) {
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  constexpr int kRuns = 5;
  double create = 0, add = 0, lookup = 0;
  for (int run = 0; run < kRuns; ++run) {
    auto t0 = Clock::now();
    std::unique_ptr<Jit> jit = MakeJit();
    auto t1 = Clock::now();
    auto ctx = std::make_unique<llvm::LLVMContext>();
    std::unique_ptr<llvm::Module> module = BuildArrayModule(
        *ctx, "gelu_kernel", {Elem::kF32}, Elem::kF32,
        [](llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& in) {
          return EmitGeluErf(b, in[0]);
        },
        16);
    ASSERT_TRUE(jit->AddModule(std::move(ctx), std::move(module)).ok());
    auto t2 = Clock::now();
    ASSERT_TRUE(jit->Lookup("gelu_kernel").ok());
    auto t3 = Clock::now();
    if (run == 0) continue;  // first run pays one-time LLVM initialization
    create += ms(t1 - t0);
    add += ms(t2 - t1);
    lookup += ms(t3 - t2);
  }
  const int n = kRuns - 1;
  std::printf(
      "JIT compile latency (gelu array kernel, mean of %d): create %.2f ms, "
      "build+O2 %.2f ms, codegen+link %.2f ms, total %.2f ms\n",
      n, create / n, add / n, lookup / n, (create + add + lookup) / n);
}

// Every function the JIT loads, by AddModule or AddModules, is named in the
// perf map at the address Lookup returns, and the code still runs.
TEST(JitTest, NamesLoadedFunctionsInThePerfMap) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path =
      std::string(tmp != nullptr ? tmp : ".") + "/jit_test_perf.map";
  std::remove(path.c_str());
  absl::StatusOr<std::unique_ptr<PerfMap>> map = PerfMap::Open(path);
  ASSERT_TRUE(map.ok()) << map.status();
  JitOptions options;
  options.perf_map = map->get();
  std::unique_ptr<Jit> jit = MakeJit(options);
  NewModule one("one");
  DefineI32Fn(*one.module, "plus_two",
              [](llvm::IRBuilder<>& b, llvm::Value* x) {
                return b.CreateAdd(x, b.getInt32(2));
              });
  ASSERT_TRUE(jit->AddModule(std::move(one.ctx), std::move(one.module)).ok());
  std::vector<ContextAndModule> several;
  NewModule two("two");
  DefineI32Fn(*two.module, "times_four",
              [](llvm::IRBuilder<>& b, llvm::Value* x) {
                return b.CreateMul(x, b.getInt32(4));
              });
  several.push_back({std::move(two.ctx), std::move(two.module)});
  ASSERT_TRUE(jit->AddModules(std::move(several), 1).ok());

  for (const auto& [name, input, output] :
       {std::tuple<std::string, int, int>{"plus_two", 40, 42},
        std::tuple<std::string, int, int>{"times_four", 5, 20}}) {
    absl::StatusOr<I32Fn> fn = jit->LookupFunction<I32Fn>(name);
    ASSERT_TRUE(fn.ok()) << fn.status();
    EXPECT_EQ((*fn)(input), output);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::ostringstream line_start;
    line_start << std::hex << reinterpret_cast<uintptr_t>(*fn) << " ";
    bool found = false;
    for (std::string line; std::getline(text, line);) {
      if (line.rfind(line_start.str(), 0) == 0 && line.size() > name.size() &&
          line.compare(line.size() - name.size(), name.size(), name) == 0) {
        found = true;
      }
    }
    EXPECT_TRUE(found) << name << " at " << line_start.str() << " in\n"
                       << text.str();
  }
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
