// Lowering of `"softmax"`, `"layernorm"` and `"reduce"` fusion groups (f32,
// bf16 or f16) to one tile-IR nest (tile_ir.h). A row is the contiguous
// block of the trailing dims the row op works over (softmax: the last;
// layernorm: axis..end; a reduction: a trailing set of axes); a
// `parallel.for` over the rows splits them evenly across threads; per row
//   1. the fused elementwise producers (or the widening of a bf16 / f16
//      row) evaluated into a per-thread f32 scratch row (skipped when the
//      row op reads an f32 group operand directly); producers and
//      consumers run on the group's own rows of the last dim, several a
//      row;
//   2. the row op in f32, vectorized over the row (16 lanes, masked last
//      vector): softmax = max pass, exp-and-sum pass, scale pass;
//      layernorm = mean pass, variance pass (both over x - x[0], so a
//      constant row is exact), normalize with gamma / beta (bf16 / f16
//      ones widened as read); reduce_sum / max / mean = one pass; sums and
//      means over four running sums;
//   3. the result: an f32 result with an f32 output is rewritten in place
//      by the fused consumers; a 16-bit result without consumers is
//      rounded as the row op's last pass stores it; otherwise it goes to a
//      per-thread f32 row that the consumers (run per reduced element for a
//      reduction) read, rounded to the row op's dtype first, on their way
//      to an output of any dtype.
// NaN propagates as in the reference (reduce_max folds with a
// NaN-propagating max; a NaN reaching softmax's exp makes its row NaN).
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
