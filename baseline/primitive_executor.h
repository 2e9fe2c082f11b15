// The primitive-based baseline executor (docs/compiler.md §5): runs a graph
// one oneDNN 2.6 primitive per op, the way a framework (PyTorch or
// TensorFlow with oneDNN) runs it. It is the performance yardstick the
// compiler is measured against (`hgc --bench`, bench/), so it does what a
// good framework integration does and no more:
//
// * matmul -> dnnl::matmul (f32; bf16 with f32 accumulation; u8/s8 x s8 ->
//   s32). transpose_a/b are strides, batch broadcasting is oneDNN's. A
//   weight that is a const parameter or a `constant` is declared with
//   format_tag::any and reordered into the primitive's preferred layout once,
//   in SetConstants, never in Run.
// * With Options::fuse_post_ops, the ops following a matmul are folded into
//   it while each one is the single user of the value before it (not a graph
//   result), keeps its type, and oneDNN accepts it with an optimized
//   (non-reference) implementation: first `add` of a row vector [N] ->
//   matmul bias; relu/gelu (erf or tanh)/sigmoid/tanh/exp/log/sqrt/rsqrt/
//   abs/neg/clamp -> eltwise post-op; add/sub/mul/div/max/min with a tensor
//   that broadcasts to the result (same shape: a residual; or a scalar, or a
//   mask oneDNN can broadcast) -> binary post-op (sub/div only with the
//   matmul result on the left). s32 results are never fused.
// * Elementwise unary ops on f32/bf16 -> dnnl::eltwise_forward;
//   add/sub/mul/div/max/min and comparisons on f32/bf16 -> dnnl::binary
//   (comparisons as binary_eq/gt/ge/lt/le with a u8 0/1 destination = bool;
//   oneDNN broadcasts its second operand only, so the operands are swapped
//   for symmetric ops; some broadcast patterns get oneDNN's "ref:any"
//   binary implementation, still a primitive);
//   softmax -> softmax_v2_forward; layernorm -> layer_normalization_forward
//   (use_scale | use_shift, over [prod(shape[:axis]), prod(shape[axis:])]);
//   reduce_* -> dnnl::reduction; transpose -> reorder of a strided view;
//   reshape -> no work (the result aliases its operand's buffer); cast ->
//   reorder; quantize/dequantize -> reorder with output scales and a zero
//   point; constant -> materialized once at Create.
// * Whatever no primitive computes with the reference's numbers runs on the
//   reference interpreter's kernel (a "reference fallback"; see
//   Summary()): select, integer arithmetic and comparisons (hgc integers
//   wrap; oneDNN computes in f32 and saturates), casts to bool and float ->
//   s32, quantize with a scale that is not a power of two (x * (1/s) is not
//   x / s), per-channel zero points, u8.u8 / s8.u8 / f16 matmuls, zero-sized
//   tensors, ranks above 12, and any op for which oneDNN has no primitive on
//   this CPU. Fallbacks copy operands that are not already tensors of the
//   right type and allocate their result on every Run.
//
// Known numeric differences from the reference interpreter:
// * NaN only: max/min/relu/clamp follow the CPU's vmaxps/vminps; cast
//   float -> s8/u8 and quantize map NaN to a saturated value or 0 (the
//   reference gives 0 / zero_point).
// * bf16 with fusion: a fused matmul+bias+relu rounds to bf16 once, where
//   the reference rounds after the matmul and again after the add. One layer
//   differs by at most one bf16 ulp (within bf16's default tolerance), but
//   a following matmul sums those differences: a fused two-layer bf16 MLP
//   (K = 96) is off by up to ~0.2 on outputs around 1, past the default
//   1e-2. That is what a framework's fused bf16 linear layer does too; with
//   fuse_post_ops = false every op rounds where the reference does.
//   (f32 post-ops compute in f32 like the unfused ops: no difference beyond
//   FMA contraction.)
//
// Memory: every op result gets its own plain row-major buffer, allocated
// once at Create (no reuse between values, as in a framework's eager mode);
// results written by an op go straight into the output tensors.
//
// Threads: oneDNN here uses the OpenMP runtime (Debian's libdnnl). Create and
// Run set the calling thread's OpenMP thread count to Options::num_threads
// with omp_set_num_threads (primitive creation reads it too: blocking
// depends on it) and restore the previous value before returning.
//
// Not thread-safe: one Run at a time per executor (the buffers are shared).
#ifndef HGC_BASELINE_PRIMITIVE_EXECUTOR_H_
#define HGC_BASELINE_PRIMITIVE_EXECUTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace hgc {

class PrimitiveExecutor {
 public:
  struct Options {
    // OpenMP threads oneDNN uses (>= 1).
    int num_threads = 1;
    // Fold bias / eltwise / binary ops into matmuls as post-ops.
    bool fuse_post_ops = true;
    // When false, an op that would run on a reference kernel makes Create
    // fail with Unimplemented (for benchmarks that must be all-oneDNN).
    bool allow_fallback = true;
  };

  // One executed step, in execution order.
  struct StepInfo {
    // "matmul+bias+relu", "softmax", "add", "transpose", "ref:select",
    // "copy" (a graph result that is a parameter, a constant or returned
    // twice).
    std::string description;
    // oneDNN's implementation name ("brg:avx512_core", "jit:uni", ...);
    // "reference" for fallbacks, "memcpy" for copies.
    std::string impl;
    bool fallback = false;
    // Why the op is not a primitive (fallbacks only).
    std::string fallback_reason;
    // "%name = kind" of the (first) op.
    std::string op_label;
  };

  // Builds primitives for every op of `graph` (an entry graph as parsed or
  // built: no `fusion` ops; it must be verified). Unknown or unsupported
  // ops give Unimplemented naming the op; a graph whose result types do
  // not follow from inference gives InvalidArgument. `graph` must outlive
  // the executor.
  static absl::StatusOr<std::unique_ptr<PrimitiveExecutor>> Create(
      const Graph& graph, const Options& options);
  static absl::StatusOr<std::unique_ptr<PrimitiveExecutor>> Create(
      const Graph& graph) {
    return Create(graph, Options());
  }

  ~PrimitiveExecutor();
  PrimitiveExecutor(const PrimitiveExecutor&) = delete;
  PrimitiveExecutor& operator=(const PrimitiveExecutor&) = delete;

  // Binds the const parameters: `all_inputs` has one tensor per parameter
  // (non-const ones are ignored and may be empty). Const weights of
  // matmuls are reordered into the primitives' layouts here, once. The
  // executor keeps a reference to (shares the buffers of) the const
  // tensors: do not modify them afterwards. May be called again with new
  // constants. Needed before Run when the graph has const parameters.
  absl::Status SetConstants(absl::Span<const Tensor> all_inputs);

  // Runs the graph. `all_inputs` has one tensor per parameter; const ones
  // are ignored (may be empty). Each non-const input must have exactly its
  // parameter's type. Returns one tensor per graph result; they are the
  // executor's own output buffers, allocated on the first Run and
  // overwritten by the next one (Clone() to keep a result).
  absl::StatusOr<std::vector<Tensor>> Run(absl::Span<const Tensor> all_inputs);

  // Like Run, writing into `outputs` (one per graph result, each of exactly
  // the result's type; an empty Tensor() is allocated here). With
  // preallocated outputs and no fallback ops the executor allocates nothing
  // per call (oneDNN's execute() keeps its own small argument map): the
  // form to time.
  absl::Status RunInto(absl::Span<const Tensor> all_inputs,
                       absl::Span<Tensor> outputs);

  // RunInto, after which OpenMP's worker threads sleep at once. After a
  // parallel region they normally spin for a while (KMP_BLOCKTIME, 200 ms
  // by default, in LLVM's libomp; GOMP_SPINCOUNT iterations in libgomp)
  // waiting for the next one, which is what a framework running primitive
  // after primitive wants; but a benchmark that times something else next
  // must end with this run (untimed), or those spinning threads take half
  // its cores. libomp: the run's regions have a zero blocktime; libgomp,
  // which has no such call: its threads are released after the run
  // (omp_pause_resource_all) and the next region starts new ones.
  absl::Status RunIntoAndReleaseThreads(absl::Span<const Tensor> all_inputs,
                                        absl::Span<Tensor> outputs);

  // The executed steps, in order ("matmul+bias+relu", "softmax", ...).
  std::vector<std::string> Describe() const;
  const std::vector<StepInfo>& steps() const { return step_infos_; }
  int num_primitives() const;
  int num_fallbacks() const;
  // A few lines: counts of primitives and fallbacks, then one line per
  // step with its implementation (and the reason of each fallback).
  std::string Summary() const;

  const Options& options() const { return options_; }

 private:
  struct Impl;
  explicit PrimitiveExecutor(std::unique_ptr<Impl> impl, Options options);

  absl::Status BindRun(absl::Span<const Tensor> all_inputs,
                       absl::Span<Tensor> outputs);

  std::unique_ptr<Impl> impl_;
  Options options_;
  std::vector<StepInfo> step_infos_;
};

}  // namespace hgc

#endif  // HGC_BASELINE_PRIMITIVE_EXECUTOR_H_
