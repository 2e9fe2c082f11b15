// Lowering of `"softmax"`, `"layernorm"` and `"reduce"` fusion groups (f32)
// to one tile-IR nest (tile_ir.h): a `parallel.for` over rows (all dims but
// the last) split evenly across threads; per row
//   1. the fused elementwise producers evaluated into a per-thread scratch
//      row (skipped when the row op reads a group operand directly);
//   2. the row op, vectorized over the row (16 lanes, masked last vector):
//      softmax = max pass, exp-and-sum pass, scale pass; layernorm = mean
//      pass, variance pass (two-pass, both over x - x[0], so a constant row
//      is exact), normalize with gamma/beta; reduce_sum/max/mean = one pass and a horizontal fold;
//   3. the fused elementwise consumers, in place on the output row.
// The row op must work on the last dim only (softmax/layernorm axis -1,
// reduce axes = [last]); reduce groups take no consumers. Statistics
// accumulate in f32; NaN propagates as in the reference (reduce_max folds
// with a NaN-propagating max; a NaN reaching softmax's exp makes its row
// NaN).
#ifndef HGC_CODEGEN_LOWER_ROWWISE_H_
#define HGC_CODEGEN_LOWER_ROWWISE_H_

#include "absl/status/statusor.h"
#include "codegen/lower_state.h"
#include "codegen/tile_ir.h"
#include "ir/graph.h"

namespace hgc {
namespace codegen {

// The nest of `op`, a fusion op of kind "softmax", "layernorm" or
// "reduce". Unimplemented outside the cases above.
absl::StatusOr<tile::Nest> LowerRowwise(LowerState& state, const Op& op);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LOWER_ROWWISE_H_
