// LowerState, the state one Compile call threads through the lowerings
// and the emitter: where each value lives, the arena and constant slots
// Compile appends (the lowerings only read it: a nest declares the scratch
// and slots it needs, and Compile places them once the nest is verified),
// the LLVM module steps go to, and what --emit=loops and --stats collect.
#ifndef HGC_CODEGEN_LOWER_STATE_H_
#define HGC_CODEGEN_LOWER_STATE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/const_only.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "microkernels/brgemm_kernel.h"
#include "runtime/executable.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace hgc {
namespace codegen {

// Bytes left unused between the per-thread slices of a scratch region
// (LowerState::AllocPerThread).
inline constexpr int64_t kThreadSliceGap = 64 * 1024;

// The state one Compile call threads through the lowerings.
struct LowerState {
  // Where the step functions go; null when the graph's objects came from
  // the object cache (jit_steps.h), so no IR is emitted.
  llvm::LLVMContext* context = nullptr;
  llvm::Module* module = nullptr;
  Program* program = nullptr;
  // Where each value of the entry graph lives.
  absl::flat_hash_map<const Value*, BufferRef> refs;
  // Which entry values depend only on constants.
  const ConstOnlyAnalysis* const_only = nullptr;
  // Bytes of the main arena in use (the buffer plan, then the scratch
  // regions Compile places for the nests and host steps).
  int64_t arena_bytes = 0;
  // Kernels referenced by steps; kept alive with the executable.
  std::vector<std::shared_ptr<const microkernels::BrgemmKernel>> kernels;
  // Unique names for step functions.
  int next_step_id = 0;
  // When set, the tile IR of every step is appended here (--emit=loops).
  std::string* loops = nullptr;
  // Bytes of per-thread arena slices and stack locals, summed over steps.
  int64_t per_thread_scratch_bytes = 0;
  // The JIT target (and the --emit target, when one is named) has
  // AVX-512F and DQ, so step code may use AVX-512 intrinsics (vscalefps,
  // vreduceps).
  bool avx512 = false;

  // Appends a 64-byte aligned scratch region to the main arena.
  int64_t AllocArena(int64_t bytes);
  // Appends a region of one `bytes` slice for each of `num_threads` threads
  // and returns its offset; the slices lie `*thread_stride` apart. With
  // several threads the slices are kThreadSliceGap apart beyond their
  // size: a thread walking its slice with a stride (rows of a score tile,
  // of a transposed K) makes AMD's stride prefetchers read lines past its
  // end, and when those are the next thread's, each write of that thread
  // has to take them back. With slices back to back, two-thread attention
  // ran 30 % slower than two single-thread runs side by side on a Zen 5;
  // with 32 KiB between them, as fast (the gap is twice that, for longer
  // strides).
  int64_t AllocPerThread(int64_t bytes, int num_threads,
                         int64_t* thread_stride);
  // Appends a constant-cache slot holding `value` (a literal constant a
  // step reads, or a zeroed slot an init step fills) and returns its index.
  int64_t AddConstant(Tensor value);
  // A fresh function name "<prefix>_<n>".
  std::string StepName(const std::string& prefix);
};

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LOWER_STATE_H_
