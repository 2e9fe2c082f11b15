// The one emitter of the tile IR: a Nest (tile_ir.h) becomes an LLVM step
// function `void @<nest name>(i8* frame)` with the KernelFrame ABI
// (runtime/kernel_abi.h), plus the runtime steps around it. Loops, lets,
// BRGEMM calls and RowMaps are emitted here, the row statements by
// row_emitter.h and the data movement by copy_emitter.h.
#ifndef HGC_CODEGEN_TILE_EMITTER_H_
#define HGC_CODEGEN_TILE_EMITTER_H_

#include "absl/status/status.h"
#include "codegen/lower_state.h"
#include "codegen/tile_ir.h"

namespace hgc {
namespace codegen {

// Emits `nest` (verified, every buffer placed: PlaceNestBuffers) into
// state.module and appends to state.program: its init packs to init_steps,
// its per-run packs and then the step itself to steps (the step's kernel
// table is the nest's; with `on_caller`, the step runs on the calling
// thread alone).
// The nest's kernels join state.kernels, and its printout state.loops when
// that is set. On an error nothing is appended and the function is erased.
absl::Status EmitNest(LowerState& state, tile::Nest& nest, bool on_caller);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_TILE_EMITTER_H_
