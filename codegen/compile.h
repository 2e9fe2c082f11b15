// Compile: lowers the entry graph of a module, as the graph passes left it
// (the callers run them first: passes/pipelines.h), to a runtime
// Executable (docs/compiler.md §3-4).
//
// What lowers natively: each lowering chooses a schedule and returns a
// tile-IR nest (tile_ir.h) for the op's step; Compile verifies the nest
// (tile_verifier.h), places the scratch, constant slots and per-thread
// slices it declared (nest_buffers.h) and has the one emitter
// (tile_emitter.h) turn it into an LLVM step function with the KernelFrame
// ABI:
//   - "matmul" / "mlp" groups in f32, bf16, u8 x s8 and s8 x s8
//     (lower_matmul.h): tile loops + BRGEMM calls + post-ops on the hot C
//     tile; constant weights packed once in init steps;
//   - "attention" groups in f32, bf16 or f16 (lower_attention.h): one
//     flash-style nest;
//   - "elementwise" groups and lone elementwise ops of any dtype
//     (lower_elementwise.h);
//   - "softmax" / "layernorm" / "reduce" groups in f32, bf16 or f16 over
//     trailing dims (lower_rowwise.h).
// A group with too little work to split is compiled for one thread and
// runs on the calling thread alone. Transposes, and reductions over other
// axes (f32, bf16, f16; integer sums and maxes over any axes), are
// allocation-free host steps (transpose_step.h, reduce_step.h); `reshape`
// is a copy. What is left (ops outside fusion groups, groups a lowering
// declines as Unimplemented or the CPU has no kernel for) becomes a
// *fallback* host step that evaluates the op with the portable kernels
// (portable::EvaluateOp, runtime/portable/evaluate.h; the reference
// interpreter runs the same ones) and copies the result into the step's
// buffer.
// Fallback steps allocate on every run; CompileStats counts them so that
// `hgc --stats` shows them.
//
// Constants: literal constants are evaluated at compile time into constant
// slots; ops depending only on constants run once per SetConstants as
// init steps. Buffers: non-const params are inputs, const params
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
  int fallback_steps = 0;  // main steps run on the portable kernels
  int copy_steps =
      0;  // data-movement host steps (reshape, transpose, result copies)
  int pack_steps = 0;  // per-call B packing steps (host or pool-shared)
  int init_steps = 0;           // run once per SetConstants
  int init_fallback_steps = 0;  // of init_steps, on the portable kernels
  int llvm_modules = 0;         // the step code's modules, compiled in parallel
  // Of llvm_modules, the objects the on-disk cache had and those compiled,
  // and its directory (empty without one: codegen/llvm/object_cache.h).
  int objects_from_cache = 0;
  int objects_compiled = 0;
  std::string object_cache_dir;
  // The cache had the graph's list of objects: no LLVM IR was emitted.
  bool graph_from_cache = false;
  int64_t arena_bytes = 0;
  // Of arena_bytes, what each thread of a step uses alone (tiles, rows),
  // summed over the steps; plus their stack locals.
  int64_t per_thread_scratch_bytes = 0;
  double seconds = 0;  // wall time of Compile
};

struct CompileOptions {
  int num_threads = 1;
  // Threads that optimize and generate the LLVM code, each taking a share
  // of the steps; 0: one per hardware thread, up to 8. The results are the
  // same, bit for bit, whatever the count. --emit=llvm / --emit=asm compile
  // on one thread, so that the text lists the steps in order.
  int compile_threads = 0;
  // Where parallel steps run: hgc's own thread pool or the caller's OpenMP.
  Threading threading = Threading::kOwnPool;
  // ISA cap for the generated LLVM code ("" = the process-wide cap).
  std::string max_isa;
  // When set, `--dump-kernels`: each LLVM module is written there.
  std::string dump_dir;
  // When non-null, receive the optimized LLVM IR / the assembly of the
  // step functions (`--emit=llvm`, `--emit=asm`).
  std::string* llvm_ir = nullptr;
  std::string* assembly = nullptr;
  // When non-null, receives the tile IR of every LLVM step (`--emit=loops`).
  std::string* loops = nullptr;
  // When set (`--target-cpu`), that text is optimized for this LLVM CPU
  // name and its own features (codegen::NamedTargetSpec) instead of the
  // host, so that it reads the same on every machine. The JIT'd code is
  // always compiled for the host.
  std::string emit_target_cpu;
  // When non-null, filled with what the compile did.
  CompileStats* stats = nullptr;
};

// Compiles the graph named like `entry` in `module` (a copy is kept for the
// fallback steps) into an Executable with options.num_threads threads (of
// the kind options.threading says). Errors: InvalidArgument when the module
// has no such graph, Internal for LLVM failures, FailedPrecondition when
// the CPU cannot run the kernels.
absl::StatusOr<std::unique_ptr<Executable>> Compile(
    const Module& module, const Graph& entry, const CompileOptions& options);

}  // namespace hgc

#endif  // HGC_CODEGEN_COMPILE_H_
