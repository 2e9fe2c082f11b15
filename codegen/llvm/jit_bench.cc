// JIT compile latency per small module: Jit creation, IR build + the IR
// pipeline, and codegen + link at first lookup, for array kernels of
// increasing body size.
//
//   bazel run -c opt //codegen/llvm:jit_bench
//
// The compile budget is design-level: a whole MLP (a few such modules)
// must compile in under 200 ms.
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "codegen/llvm/array_kernel.h"
#include "codegen/llvm/elemental_emitter.h"
#include "codegen/llvm/ir_compiler.h"
#include "codegen/llvm/jit.h"
#include "ir/attribute.h"
#include "llvm/IR/LLVMContext.h"

namespace hgc {
namespace codegen {
namespace {

// One benchmarked kernel: out = chain(in0 + in1), 16 lanes plus a scalar
// tail (so each body is emitted twice).
struct KernelCase {
  const char* name;
  std::vector<UnaryKind> unary_chain;  // applied in order
};

const KernelCase kCases[] = {
    {"add", {}},
    {"relu", {UnaryKind::kRelu}},
    {"exp", {UnaryKind::kExp}},
    {"gelu", {UnaryKind::kGelu}},
    {"bias_gelu_tanh_sigmoid",
     {UnaryKind::kGelu, UnaryKind::kTanh, UnaryKind::kSigmoid}},
};

std::unique_ptr<llvm::Module> BuildCase(llvm::LLVMContext& ctx,
                                        const KernelCase& c) {
  return BuildArrayModule(
      ctx, "kernel", {Elem::kF32, Elem::kF32}, Elem::kF32,
      [&c](llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& in) {
        llvm::Value* v =
            *EmitBinary(b, BinaryKind::kAdd, DType::kF32, in[0], in[1]);
        for (UnaryKind kind : c.unary_chain) {
          v = *EmitUnary(b, kind, DType::kF32, v, {});
        }
        return v;
      },
      16);
}

// Whole pipeline: new Jit, build, optimize, add, codegen.
void BM_CompileKernel(benchmark::State& state) {
  const KernelCase& c = kCases[state.range(0)];
  state.SetLabel(std::string(c.name) + " O" + std::to_string(state.range(1)));
  const TargetSpec spec = *HostTargetSpec("all");
  JitOptions options;
  options.compiler.opt_level = static_cast<int>(state.range(1));
  for (auto _ : state) {
    std::unique_ptr<Jit> jit = *Jit::Create(spec, options);
    auto ctx = std::make_unique<llvm::LLVMContext>();
    std::unique_ptr<llvm::Module> module = BuildCase(*ctx, c);
    if (!jit->AddModule(std::move(ctx), std::move(module)).ok() ||
        !jit->Lookup("kernel").ok()) {
      state.SkipWithError("compile failed");
      return;
    }
  }
}
BENCHMARK(BM_CompileKernel)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {1, 2}})
    ->Unit(benchmark::kMillisecond);

// An MLP-sized compile: one Jit, three modules (bias + relu over a tile,
// one per layer), three lookups.
void BM_CompileThreeLayers(benchmark::State& state) {
  const TargetSpec spec = *HostTargetSpec("all");
  const KernelCase& c = kCases[1];  // relu
  for (auto _ : state) {
    std::unique_ptr<Jit> jit = *Jit::Create(spec);
    for (int layer = 0; layer < 3; ++layer) {
      auto ctx = std::make_unique<llvm::LLVMContext>();
      std::unique_ptr<llvm::Module> module = BuildArrayModule(
          *ctx, "layer" + std::to_string(layer), {Elem::kF32, Elem::kF32},
          Elem::kF32,
          [&c](llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& in) {
            llvm::Value* v =
                *EmitBinary(b, BinaryKind::kAdd, DType::kF32, in[0], in[1]);
            for (UnaryKind kind : c.unary_chain) {
              v = *EmitUnary(b, kind, DType::kF32, v, {});
            }
            return v;
          },
          16);
      if (!jit->AddModule(std::move(ctx), std::move(module)).ok()) {
        state.SkipWithError("compile failed");
        return;
      }
    }
    for (int layer = 0; layer < 3; ++layer) {
      if (!jit->Lookup("layer" + std::to_string(layer)).ok()) {
        state.SkipWithError("lookup failed");
        return;
      }
    }
  }
}
BENCHMARK(BM_CompileThreeLayers)->Unit(benchmark::kMillisecond);

// The IR pipeline alone: hgc's (RunEmittedCodePipeline) or LLVM's O2.
void BM_OptimizeOnly(benchmark::State& state) {
  const KernelCase& c = kCases[state.range(0)];
  state.SetLabel(std::string(c.name) + (state.range(1) ? " +autovec" : "") +
                 (state.range(2) ? " llvm-O2" : ""));
  IrCompilerOptions options;
  options.auto_vectorize = state.range(1) != 0;
  options.llvm_default_pipeline = state.range(2) != 0;
  std::unique_ptr<IrCompiler> compiler =
      *IrCompiler::Create(*HostTargetSpec("all"), options);
  for (auto _ : state) {
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> module = BuildCase(ctx, c);
    benchmark::DoNotOptimize(compiler->Optimize(*module).ok());
  }
}
BENCHMARK(BM_OptimizeOnly)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

// Creating an empty Jit (LLJIT, two TargetMachines, the process symbol
// generator).
void BM_CreateJit(benchmark::State& state) {
  const TargetSpec spec = *HostTargetSpec("all");
  for (auto _ : state) benchmark::DoNotOptimize(Jit::Create(spec).ok());
}
BENCHMARK(BM_CreateJit)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace codegen
}  // namespace hgc

BENCHMARK_MAIN();
