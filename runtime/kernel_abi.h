// The one calling convention of every compiled step (docs/compiler.md §2).
//
// The runtime's thread pool calls a step's entry point once per thread with
// a frame; generated code reads its buffers and kernels from the frame and
// takes its share of the outer parallel loop from thread_id / num_threads.
// The layout is C (LLVM code indexes it by field offset), so change it only
// together with codegen.
#ifndef HGC_RUNTIME_KERNEL_ABI_H_
#define HGC_RUNTIME_KERNEL_ABI_H_

#include <cstddef>
#include <cstdint>

namespace hgc {

struct KernelFrame {
  // The step's operands, then its results, in the order codegen assigned.
  void* const* buffers;
  // Entry points of the BRGEMM microkernels the step calls.
  const void* const* kernels;
  int64_t thread_id;
  int64_t num_threads;
  // All threads of the step wait in barrier(barrier_ctx) until every one
  // has arrived.
  void (*barrier)(void* ctx);
  void* barrier_ctx;
};

// The signature of a step's entry point.
using StepFn = void (*)(const KernelFrame* frame);

// Field offsets generated code loads from.
constexpr int kFrameBuffers = offsetof(KernelFrame, buffers);
constexpr int kFrameKernels = offsetof(KernelFrame, kernels);
constexpr int kFrameThreadId = offsetof(KernelFrame, thread_id);
constexpr int kFrameNumThreads = offsetof(KernelFrame, num_threads);
constexpr int kFrameBarrier = offsetof(KernelFrame, barrier);
constexpr int kFrameBarrierCtx = offsetof(KernelFrame, barrier_ctx);

}  // namespace hgc

#endif  // HGC_RUNTIME_KERNEL_ABI_H_
