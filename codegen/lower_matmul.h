// Lowering of `"matmul"` and `"mlp"` fusion groups to one LLVM step: f32,
// bf16 (result bf16), u8 x s8 and s8 x s8 (result s32) matmuls, each on the
// BRGEMM kernel family microkernels::SelectBrgemmIsa picks (AMX, AVX512_BF16
// or VNNI, widening or FMA below).
//
// A group's body is a sequence of layers: a matmul, then elementwise
// post-ops on its result (bias add, activation, residual, scale...). The
// lowering builds one tile-IR nest (tile_ir.h; `--emit=loops` prints it):
// per layer a `parallel.for` over the tiles (batch, M block, N block) of
// its output, statically split across threads by tile index; per tile:
//   1. BRGEMM calls over the K chunks (the first overwrites C, the middle
//      ones accumulate, the last applies the kernel's post-ops), writing
//      the C tile into the output buffer (ldc = N) or the thread's C
//      tile (below); the kernel table entry is selected by whether the
//      tile is an M / N tail;
//   2. the layer's post-ops over that tile (a RowMap per row, in place or
//      from the C tile), while it is still in L1.
// `"mlp"` groups run their layers in the same nest with a barrier between
// layers (none where each thread reads only rows it wrote); intermediates
// live in the arena.
//
// Batch dims broadcast numpy-style: each operand's matrix for a batch index
// is computed from per-run strides (BatchMap), 0 on the dims it broadcasts
// over (grouped-query attention's K with fewer heads than Q, a [M, K] A
// times a batch of B).
//
// B operands that depend only on constants are packed ONCE by an init step
// (microkernels/pack.h) into a constant slot. Other f32 B operands are read
// in place (plain layout, ldb = N), or, when transposed (attention's K^T),
// packed per call by a host step into arena scratch, as are all non-const
// bf16 / int8 B operands (VNNI layouts). A transpose_a A (K x M) is
// transposed into M x K rows the same way: once when constant, else per
// call.
//
// C: the kernel writes f32 (s32 for int8) into the layer's output when the
// matmul result has that type and the output has 4-byte elements (the
// post-ops then rewrite each element in place); otherwise (a bf16 result,
// or post-ops ending in bf16 or a requantized u8 / s8) into a per-thread C
// tile (ldc = the tile's width, so it stays in L1 rather than spreading
// over a layer-sized buffer), from which the post-ops, or for a bare bf16
// matmul the rounding to bf16, write the output.
//
// Post-ops that are just a bias row ([N] or [1, N], f32) and / or relu on an
// f32 layer run inside the kernel of the tile's last K chunk, as it stores
// C (microkernels/brgemm_desc.h); any other chain runs as an epilogue loop
// over the tile's rows.
//
// Tile heuristic (ChooseTiles): nb = N when N <= 64, else 64 (four zmm
// columns, the B panel of one tile stays in L2 for K up to ~2k); mb =
// min(M, 64), halved (down to 8) while the layer has fewer than
// 2 * num_threads tiles, so that small batches still give every thread
// work (DLRM MLP-1 at batch 32: 32x512 -> mb 32, nb 64, 8 tiles). Row
// groups: as many M tiles as keep the group's A rows within 1 MiB (half an
// L2), but no more than one thread's share of the M tiles, so that with a
// static split each thread streams B about once (MLP-2 at batch 512 on two
// threads: 4 tiles of 64 rows, 1 MiB of A at K = 1024). K is
// reduced in chunks (ChooseKChunk) so that each kernel call's B chunk stays
// in L1; the first chunk overwrites C and the rest accumulate.
#ifndef HGC_CODEGEN_LOWER_MATMUL_H_
#define HGC_CODEGEN_LOWER_MATMUL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen/lower_state.h"
#include "codegen/tile_ir.h"
#include "ir/graph.h"

namespace hgc {
namespace codegen {

struct TileSizes {
  int64_t mb = 0;
  int64_t nb = 0;
  // M tiles per row group: the tile loop runs row group by row group, and
  // inside a group N panel by N panel, then M tile by M tile, so that a
  // group's A rows stay in L2 while each B panel is streamed in once per
  // group (not once per M tile).
  int64_t group = 1;
};

// The heuristic described in the file comment.
TileSizes ChooseTiles(int64_t batch, int64_t m, int64_t n, int64_t k,
                      int num_threads);

// The K chunk of one f32 BRGEMM call: the reduction runs chunk by chunk,
// accumulating into C, so the B chunk stays in L1; the last chunk may be
// shorter (K not a multiple of the chunk).
int64_t ChooseKChunk(int64_t k);

// The nest of `op`, a fusion op of kind "matmul" or "mlp", for a step on
// `num_threads` threads: its packs (weight packing once, per-call
// packing), kernels and tile loops. Its buffers come from state.refs;
// packed weights and C tiles get constant slots and arena regions of
// `state`. Unimplemented for what this lowering does not cover
// (SplitLayers, matmul_layers.h): other dtypes (f16), transpose_a on a
// later layer of an mlp, post-ops that change the shape.
absl::StatusOr<tile::Nest> LowerMatmulGroup(LowerState& state, const Op& op,
                                            int num_threads);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LOWER_MATMUL_H_
