// Lowering of `"elementwise"` fusion groups (and of lone elementwise ops of
// the entry graph) to one tile-IR nest (tile_ir.h): a `parallel.for` over
// the output's rows (all dims but the last; long rows are cut into
// 16-aligned chunks when there are too few rows for the threads), split
// evenly across threads, each piece a RowMap of the group's program (16
// lanes, masked last vector, numpy broadcasting through per-dimension
// strides).
#ifndef HGC_CODEGEN_LOWER_ELEMENTWISE_H_
#define HGC_CODEGEN_LOWER_ELEMENTWISE_H_

#include "absl/status/status.h"
#include "codegen/lower_common.h"
#include "ir/graph.h"

namespace hgc {
namespace codegen {

// Adds the step for `op` (a fusion op of kind "elementwise" or an op for
// which IsElementalOp holds) to state.program->steps; its buffers come from
// state.refs. Unimplemented (and nothing added) for what the row evaluator
// does not cover: non-scalar literal constants inside the body, a
// per-channel quantize of a broadcast value.
absl::Status LowerElementwise(LowerState& state, const Op& op);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LOWER_ELEMENTWISE_H_
