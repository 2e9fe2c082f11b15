// Compile: lowers the entry graph of a module, after the graph pipeline, to
// a runtime Executable (docs/compiler.md §3-4).
//
// What lowers natively (LLVM step functions, KernelFrame ABI):
//   - "matmul" / "mlp" fusion groups in f32 (lower_matmul.h): tile loops +
//     BRGEMM microkernel calls + fused post-ops; constant weights packed once
//     in init steps;
//   - "elementwise" groups and lone elementwise ops in f32
//     (lower_elementwise.h);
//   - "softmax" / "layernorm" / "reduce" groups in f32 over the last dim
//     (lower_rowwise.h).
// Everything else (bf16/int8, other axes, transposes,
// casts, quantization...) becomes a *fallback* host step that evaluates the
// op with the reference interpreter (EvaluateOp) and copies the result into
// the step's buffer. Fallback steps allocate on every run; CompileStats
// counts them so that `hgc --stats` shows them. `reshape` is a copy.
//
// Constants: literal constants are evaluated at compile time into constant
// slots; ops depending only on constants run once per SetConstants as
// (fallback) init steps. Buffers: non-const params are inputs, const params
// constant slots, results outputs (a result that is a parameter, a constant,
// or returned twice gets a copy step), intermediates arena offsets from
// PlanBuffers plus scratch appended by the lowerings.
#ifndef HGC_CODEGEN_COMPILE_H_
#define HGC_CODEGEN_COMPILE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "runtime/executable.h"
#include "runtime/threading.h"

namespace hgc {

// What Compile did, for --stats and tests.
struct CompileStats {
  int native_steps = 0;    // LLVM step functions
  int fallback_steps = 0;  // interpreter-evaluated main steps
  int copy_steps =
      0;  // data-movement host steps (reshape, transpose, result copies)
  int pack_steps = 0;  // per-call B packing host steps
  int init_steps = 0;  // run once per SetConstants
  int64_t arena_bytes = 0;
  double seconds = 0;  // wall time of Compile
};

struct CompileOptions {
  int num_threads = 1;
  // Where parallel steps run: hgc's own thread pool or the caller's OpenMP.
  Threading threading = Threading::kOwnPool;
  // The graph pipeline run (on a copy of the module) before lowering.
  std::string pipeline = "O2";
  // ISA cap for the generated LLVM code ("" = the process-wide cap).
  std::string max_isa;
  // When set, `--dump-kernels`: each LLVM module is written there.
  std::string dump_dir;
  // When non-null, receive the optimized LLVM IR / the assembly of the
  // step functions (`--emit=llvm`, `--emit=asm`).
  std::string* llvm_ir = nullptr;
  std::string* assembly = nullptr;
  // When non-null, filled with what the compile did.
  CompileStats* stats = nullptr;
};

// Compiles the entry graph `entry` of `module` (runs options.pipeline on a
// copy first) into an Executable with options.num_threads threads (of the
// kind options.threading says). Errors:
// InvalidArgument for a bad pipeline or a graph the passes reject, Internal
// for LLVM failures, FailedPrecondition when the CPU cannot run the kernels.
absl::StatusOr<std::unique_ptr<Executable>> Compile(
    const Module& module, const Graph& entry, const CompileOptions& options);

}  // namespace hgc

#endif  // HGC_CODEGEN_COMPILE_H_
