#include "codegen/llvm/ir_compiler.h"

#include <memory>
#include <string>

#include "codegen/llvm/array_kernel.h"
#include "codegen/llvm/llvm_util.h"
#include "codegen/llvm/vector_math.h"
#include "gtest/gtest.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "support/cpu_features.h"

namespace hgc {
namespace codegen {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

llvm::StringMap<bool> FakeSapphireRapids() {
  llvm::StringMap<bool> host;
  for (const char* f :
       {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq",
        "avx512cd", "avx512vnni", "avx512bf16", "avx512fp16", "avx512vbmi",
        "amx-tile", "amx-bf16", "amx-int8"}) {
    host[f] = true;
  }
  host["avx512er"] = false;
  return host;
}

TEST(CapFeaturesTest, RemovesEverythingAboveTheCap) {
  const llvm::StringMap<bool> host = FakeSapphireRapids();
  std::vector<std::string> bf16 = CapFeatures(host, Isa::kAvx512CoreBf16);
  EXPECT_TRUE(Contains(bf16, "+avx512f"));
  EXPECT_TRUE(Contains(bf16, "+avx512vnni"));
  EXPECT_TRUE(Contains(bf16, "+avx512bf16"));
  EXPECT_TRUE(Contains(bf16, "+avx2"));
  EXPECT_TRUE(Contains(bf16, "-avx512fp16"));
  EXPECT_TRUE(Contains(bf16, "-avx512vbmi"));  // Ice Lake era, not Cooper Lake
  EXPECT_TRUE(Contains(bf16, "-amx-tile"));
  EXPECT_TRUE(Contains(bf16, "-avx512er"));  // absent on the host stays off
  EXPECT_TRUE(std::is_sorted(bf16.begin(), bf16.end(),
                             [](const std::string& a, const std::string& b) {
                               return a.substr(1) < b.substr(1);
                             }));

  std::vector<std::string> core = CapFeatures(host, Isa::kAvx512Core);
  EXPECT_TRUE(Contains(core, "+avx512bw"));
  EXPECT_TRUE(Contains(core, "-avx512vnni"));
  EXPECT_TRUE(Contains(core, "-avx512bf16"));

  std::vector<std::string> none = CapFeatures(host, Isa::kNone);
  EXPECT_TRUE(Contains(none, "-avx512f"));
  EXPECT_TRUE(Contains(none, "+avx2"));
  EXPECT_TRUE(Contains(none, "+fma"));

  std::vector<std::string> all = CapFeatures(host, Isa::kAvx512CoreAmx);
  EXPECT_TRUE(Contains(all, "+amx-tile"));
  EXPECT_TRUE(Contains(all, "+avx512fp16"));
}

TEST(HostTargetSpecTest, ParsesCapSpellings) {
  absl::StatusOr<TargetSpec> core = HostTargetSpec("avx512_core");
  ASSERT_TRUE(core.ok()) << core.status();
  EXPECT_FALSE(core->HasFeature("avx512bf16"));
  EXPECT_FALSE(core->HasFeature("avx512vnni"));
  EXPECT_LE(static_cast<int>(core->isa), static_cast<int>(Isa::kAvx512Core));
  if (IsaAvailable(Isa::kAvx512Core)) {
    EXPECT_TRUE(core->HasFeature("avx512f"));
    EXPECT_EQ(core->isa, Isa::kAvx512Core);
  }
  absl::StatusOr<TargetSpec> all = HostTargetSpec("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->isa, DetectCpuFeatures().HighestIsa());
  EXPECT_NE(all->ToString().find(all->cpu), std::string::npos);
  EXPECT_EQ(HostTargetSpec("avx9000").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(NamedTargetSpecTest, UsesTheNamedCpusFeaturesNotTheHosts) {
  absl::StatusOr<TargetSpec> skx = NamedTargetSpec("skylake-avx512", "all");
  ASSERT_TRUE(skx.ok()) << skx.status();
  EXPECT_EQ(skx->cpu, "skylake-avx512");
  EXPECT_EQ(skx->isa, Isa::kAvx512Core);
  EXPECT_TRUE(skx->HasFeature("avx512f"));
  EXPECT_TRUE(skx->HasFeature("fma"));
  EXPECT_FALSE(skx->HasFeature("avx512vnni"));
  EXPECT_FALSE(skx->HasFeature("amx-tile"));
  // Any cap at or above the CPU's own family gives the same target.
  absl::StatusOr<TargetSpec> capped =
      NamedTargetSpec("skylake-avx512", "avx512_core");
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->features, skx->features);
  EXPECT_EQ(capped->FeatureString(), skx->FeatureString());

  absl::StatusOr<TargetSpec> spr = NamedTargetSpec("sapphirerapids", "all");
  ASSERT_TRUE(spr.ok());
  EXPECT_EQ(spr->isa, Isa::kAvx512CoreAmx);
  EXPECT_TRUE(spr->HasFeature("amx-bf16"));
  absl::StatusOr<TargetSpec> spr_bf16 =
      NamedTargetSpec("sapphirerapids", "avx512_core_bf16");
  ASSERT_TRUE(spr_bf16.ok());
  EXPECT_EQ(spr_bf16->isa, Isa::kAvx512CoreBf16);
  EXPECT_TRUE(spr_bf16->HasFeature("avx512bf16"));
  EXPECT_FALSE(spr_bf16->HasFeature("avx512fp16"));
  EXPECT_FALSE(spr_bf16->HasFeature("amx-tile"));

  EXPECT_EQ(NamedTargetSpec("pentium9000", "all").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(NamedTargetSpec("i686", "all").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(NamedTargetSpec("skylake-avx512", "avx9000").status().code(),
            absl::StatusCode::kInvalidArgument);
  // A TargetMachine can be built for it whatever the host.
  EXPECT_TRUE(IrCompiler::Create(*spr).ok());
}

// An exp kernel over float arrays, optimized for `max_isa`.
struct CompiledText {
  std::string ir, assembly, object;
};
CompiledText CompileExpKernel(absl::string_view max_isa,
                              IrCompilerOptions options = {}) {
  absl::StatusOr<TargetSpec> spec = HostTargetSpec(max_isa);
  EXPECT_TRUE(spec.ok());
  absl::StatusOr<std::unique_ptr<IrCompiler>> compiler =
      IrCompiler::Create(*spec, options);
  EXPECT_TRUE(compiler.ok()) << compiler.status();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> module = BuildArrayModule(
      ctx, "exp_kernel", {Elem::kF32}, Elem::kF32,
      [](llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& in) {
        return EmitExp(b, in[0]);
      },
      16);
  EXPECT_TRUE((*compiler)->Optimize(*module).ok());
  CompiledText out;
  out.ir = IrCompiler::EmitLlvmIr(*module);
  absl::StatusOr<std::string> assembly = (*compiler)->EmitAssembly(*module);
  EXPECT_TRUE(assembly.ok()) << assembly.status();
  out.assembly = assembly.value_or("");
  // Emission left the module intact: printing it again gives the same text.
  EXPECT_EQ(IrCompiler::EmitLlvmIr(*module), out.ir);
  absl::StatusOr<std::string> object = (*compiler)->EmitObject(*module);
  EXPECT_TRUE(object.ok()) << object.status();
  out.object = object.value_or("");
  return out;
}

TEST(IrCompilerTest, EmitsZmmCodeWithoutLibmCalls) {
  if (!IsaAvailable(Isa::kAvx512Core)) {
    GTEST_SKIP() << "SKIPPED: AVX-512 not available on this CPU";
  }
  CompiledText text = CompileExpKernel("all");
  EXPECT_NE(text.ir.find("<16 x float>"), std::string::npos);
  EXPECT_NE(text.ir.find("\"prefer-vector-width\"=\"512\""), std::string::npos);
  EXPECT_NE(text.ir.find("llvm.fma.v16f32"), std::string::npos);
  EXPECT_EQ(text.ir.find("@expf"), std::string::npos);
  EXPECT_NE(text.assembly.find("%zmm"), std::string::npos);
  EXPECT_NE(text.assembly.find("vfmadd"), std::string::npos);
  EXPECT_NE(text.assembly.find("vcvttps2dq"), std::string::npos);
  EXPECT_EQ(text.assembly.find("call"), std::string::npos) << text.assembly;
  EXPECT_EQ(text.object.substr(0, 4),
            "\x7f"
            "ELF");
}

TEST(IrCompilerTest, EveryPipelineKeepsTheKernelInZmmVectors) {
  if (!IsaAvailable(Isa::kAvx512Core)) {
    GTEST_SKIP() << "SKIPPED: AVX-512 not available on this CPU";
  }
  for (bool llvm_default : {false, true}) {
    for (bool auto_vectorize : {false, true}) {
      IrCompilerOptions options;
      options.llvm_default_pipeline = llvm_default;
      options.auto_vectorize = auto_vectorize;
      CompiledText text = CompileExpKernel("all", options);
      SCOPED_TRACE(testing::Message()
                   << "llvm_default_pipeline " << llvm_default
                   << ", auto_vectorize " << auto_vectorize);
      EXPECT_NE(text.ir.find("llvm.fma.v16f32"), std::string::npos);
      EXPECT_NE(text.assembly.find("vfmadd"), std::string::npos);
      EXPECT_NE(text.assembly.find("%zmm"), std::string::npos);
      EXPECT_EQ(text.assembly.find("call"), std::string::npos);
    }
  }
}

TEST(IrCompilerTest, CapBelowAvx512EmitsYmmOnly) {
  CompiledText text = CompileExpKernel("none");
  EXPECT_NE(text.assembly.find("%ymm"), std::string::npos);
  EXPECT_EQ(text.assembly.find("%zmm"), std::string::npos);
}

TEST(IrCompilerTest, OptimizeRejectsBrokenModules) {
  absl::StatusOr<TargetSpec> spec = HostTargetSpec("all");
  ASSERT_TRUE(spec.ok());
  absl::StatusOr<std::unique_ptr<IrCompiler>> compiler =
      IrCompiler::Create(*spec);
  ASSERT_TRUE(compiler.ok());
  llvm::LLVMContext ctx;
  llvm::Module module("broken", ctx);
  llvm::Function* fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
      llvm::Function::ExternalLinkage, "f", &module);
  llvm::BasicBlock::Create(ctx, "entry", fn);
  EXPECT_EQ((*compiler)->Optimize(module).code(), absl::StatusCode::kInternal);
}

// hgc's pipeline generates code at O1, LLVM's at O2, opt_level 0 at O0.
TEST(IrCompilerTest, CodegenLevelFollowsThePipeline) {
  absl::StatusOr<TargetSpec> spec = HostTargetSpec("all");
  ASSERT_TRUE(spec.ok());
  struct Case {
    int opt_level;
    bool llvm_default_pipeline;
    llvm::CodeGenOpt::Level want;
  };
  for (const Case& c : {Case{2, false, llvm::CodeGenOpt::Less},
                        Case{3, false, llvm::CodeGenOpt::Less},
                        Case{2, true, llvm::CodeGenOpt::Default},
                        Case{0, false, llvm::CodeGenOpt::None}}) {
    IrCompilerOptions options;
    options.opt_level = c.opt_level;
    options.llvm_default_pipeline = c.llvm_default_pipeline;
    absl::StatusOr<std::unique_ptr<IrCompiler>> compiler =
        IrCompiler::Create(*spec, options);
    ASSERT_TRUE(compiler.ok());
    EXPECT_EQ((*compiler)->target_machine().getOptLevel(), c.want)
        << "opt_level " << c.opt_level << ", llvm_default_pipeline "
        << c.llvm_default_pipeline;
  }
}

TEST(IrCompilerTest, PrepareModuleSetsTripleAndLayout) {
  absl::StatusOr<TargetSpec> spec = HostTargetSpec("all");
  ASSERT_TRUE(spec.ok());
  IrCompilerOptions options;
  options.opt_level = 0;
  absl::StatusOr<std::unique_ptr<IrCompiler>> compiler =
      IrCompiler::Create(*spec, options);
  ASSERT_TRUE(compiler.ok());
  llvm::LLVMContext ctx;
  llvm::Module module("m", ctx);
  (*compiler)->PrepareModule(module);
  EXPECT_EQ(module.getTargetTriple(), spec->triple);
  EXPECT_EQ(module.getDataLayout(), (*compiler)->data_layout());
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
