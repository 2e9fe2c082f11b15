// Frame buffers of a nest under construction for what the lowerings bind
// from the entry graph: its values (where state.refs places them) and the
// literal constants its row programs read; and the placement Compile gives
// a verified nest's pending and per-thread buffers.
#ifndef HGC_CODEGEN_NEST_BUFFERS_H_
#define HGC_CODEGEN_NEST_BUFFERS_H_

#include "absl/status/status.h"
#include "codegen/lower_state.h"
#include "codegen/row_program.h"
#include "codegen/tile_ir.h"
#include "ir/graph.h"

namespace hgc {
namespace codegen {

// The frame buffer of `nest` holding `v`, a value of the entry graph
// (where state.refs places it), named and noted as `v`.
int ValueBuffer(LowerState& state, tile::Nest& nest, const Value* v);

// The ConstantBinder (row_program.h) of `nest`'s row programs: each
// literal table gets a literal frame buffer of the nest named after it
// (Nest::AddLiteral: Compile gives it a constant-cache slot holding its
// value, as a const parameter has, filled at compile time so SetConstants
// has nothing to do for it); a constant read by several programs of the
// nest is bound once.
ConstantBinder NestConstantBinder(tile::Nest& nest);

// Places what a verified `nest` declared without a place: its pending
// frame buffers in the order declared (arena scratch appended to the main
// arena, constant slots and literals to the program's constants), then
// its per-thread slices for `num_threads` threads (LowerState::
// AllocPerThread).
absl::Status PlaceNestBuffers(LowerState& state, tile::Nest& nest,
                              int num_threads);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_NEST_BUFFERS_H_
