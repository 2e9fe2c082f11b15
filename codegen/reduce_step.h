// Reductions over any axes as allocation-free host steps: f32, bf16 and
// f16 (sum, max, mean), s32, s8 and u8 (sum, max).
//
// The row-wise lowering (lower_rowwise.h) vectorizes reductions over the
// last axis; this covers the others (a mean over the sequence axis of
// [batch, sequence, hidden], column sums): x is walked once in row-major
// order, innermost dim contiguous, each element accumulated in double into
// its output element (kept coordinates; a per-call scratch from the arena),
// then each output is rounded once to x's dtype, exactly as the reference
// interpreter does, so results are bit-identical. Integers are summed
// modulo 2^64 and wrapped to their dtype, as the reference sums them.
#ifndef HGC_CODEGEN_REDUCE_STEP_H_
#define HGC_CODEGEN_REDUCE_STEP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/op_kind.h"
#include "ir/graph.h"
#include "runtime/executable.h"

namespace hgc {
namespace codegen {

// The walk of one reduction: input dims with the output stride of each
// (0 along reduced dims).
struct ReducePlan {
  ReduceKind kind = ReduceKind::kReduceSum;
  DType dtype = DType::kF32;  // of the input and the output
  std::vector<int64_t> dims;
  std::vector<int64_t> out_strides;
  int64_t in_elements = 0;
  int64_t out_elements = 0;
  int64_t count = 0;  // input elements per output element
};

// The plan for `kind` over `reduced` dims of `shape`, of `dtype` elements.
ReducePlan PlanReduce(ReduceKind kind, const Shape& shape,
                      const std::vector<bool>& reduced,
                      DType dtype = DType::kF32);

// out = reduce(in) by `plan`, both of plan.dtype; `acc` holds
// plan.out_elements 8-byte accumulators.
void RunReduce(const ReducePlan& plan, const void* in, void* out, void* acc);

// The host step for `op`, a verified reduce_sum / reduce_max / reduce_mean
// of a float value or a reduce_sum / reduce_max of an integer one, reading
// `in`, writing `out` and using `scratch`
// (ReduceScratchBytes(op) bytes of arena). Unimplemented for other ops and
// dtypes.
absl::StatusOr<Step> ReduceStep(const Op& op, BufferRef in, BufferRef out,
                                BufferRef scratch);
int64_t ReduceScratchBytes(const Op& op);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_REDUCE_STEP_H_
