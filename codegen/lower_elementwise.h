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
#include "codegen/tile_ir.h"
#include "ir/graph.h"

namespace hgc {
namespace codegen {

// Adds the step for `op` (a fusion op of kind "elementwise" or an op for
// which IsElementalOp holds) to state.program->steps; its buffers come from
// state.refs. A rank-0 result is one row of one element. Unimplemented (and
// nothing added) for what the row evaluator does not cover: a per-channel
// quantize of a broadcast value.
absl::Status LowerElementwise(LowerState& state, const Op& op);

// The ConstantBinder (lower_common.h) of `nest`'s row programs: each
// literal table gets a constant-cache slot of its own holding its value,
// as a const parameter has (filled at compile time, so SetConstants has
// nothing to do for it), and a frame buffer of the nest named after it;
// a constant read by several programs of the nest is bound once.
ConstantBinder NestConstantBinder(LowerState& state, tile::Nest& nest);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LOWER_ELEMENTWISE_H_
