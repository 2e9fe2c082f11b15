// Lowering of `"elementwise"` fusion groups (and of lone elementwise ops of
// the entry graph) to one tile-IR nest (tile_ir.h): a `parallel.for` over
// the output's rows (all dims but the last; long rows are cut into
// 16-aligned chunks when there are too few rows for the threads), split
// evenly across threads, each piece a RowMap of the group's program (16
// lanes, masked last vector, numpy broadcasting through per-dimension
// strides).
#ifndef HGC_CODEGEN_LOWER_ELEMENTWISE_H_
#define HGC_CODEGEN_LOWER_ELEMENTWISE_H_

#include <optional>

#include "absl/status/statusor.h"
#include "codegen/lower_state.h"
#include "codegen/tile_ir.h"
#include "ir/graph.h"

namespace hgc {
namespace codegen {

// The nest of `op` (a fusion op of kind "elementwise" or an op for which
// IsElementalOp holds) for a step on `num_threads` threads, or none when
// the result has no elements; its buffers come from state.refs. A rank-0
// result is one row of one element. Unimplemented for what the row
// evaluator does not cover: a per-channel quantize of a broadcast value.
absl::StatusOr<std::optional<tile::Nest>> LowerElementwise(LowerState& state,
                                                           const Op& op,
                                                           int num_threads);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LOWER_ELEMENTWISE_H_
