// Lowering of `"attention"` fusion groups (passes/attention_fusion.h) to
// one flash-style nest (tile_ir.h), parallel over batch x heads x chunks of
// query blocks. For each block of mb query rows it streams K and V in
// blocks of nb keys:
//
//   S = Q_blk · K_blkᵀ              BRGEMM into a per-thread mb x nb tile
//   S = score_ops(S)                scale, mask, casts, on the hot tile
//   online softmax per row          running max and sum; O rescaled
//   O += P · V_blk                  BRGEMM accumulating into mb x Dv
//
// (with a single key block the softmax is the plain one and P·V overwrites
// O), then writes O / sum straight into the output's final layout (a
// trailing transpose and reshape are only strides). No buffer is O(seq²):
// the per-thread scratch is the S and O tiles, the row statistics and, when
// K is stored keys-major, Kᵀ of one head (packed inside the parallel loop,
// by the thread that uses it, with runtime_helpers.h's transpose; of one
// key block, just before Q·Kᵀ, when a head has one query block over several
// key blocks; none for one query row on AVX2, whose Q·Kᵀ dot-product kernel
// reads K's rows as stored); V rows a multiple of 512 bytes apart are copied
// the same way into contiguous rows when several register tiles of query
// rows reuse them, and on AVX2 into column panels as wide as P·V's tiles
// (attention_pack.h does the copies).
// Scratch rows that the kernels stream (S, Kᵀ) are padded off multiples of
// 1 KiB, which would map them to a few L1 sets. When every (batch, head)
// is one short item (one key block, one chunk), each softmax row
// prefetches its share of the next head's Q, K, V and output rows into L2,
// so a thread does not start each head on data still in memory. Block
// sizes come from the L2 size read at start-up; --emit=loops shows them.
//
// Mixed precision: bf16 / f16 Q, K and V are widened to f32 as they are
// copied into scratch (their products are exact in f32, as the matmuls'
// f32 accumulation asks; bf16 denormals become zeros, as a bf16 matmul
// reads them, and so does a bf16 P); the scores, a bf16 / f16 softmax or P and
// the output are rounded where the graph rounds them. A rounded softmax or P
// divides each row by its sum before P·V, so it needs the keys in one
// block. The QDQ form (u8 / s8 Q, K, V read through dequantize, P through
// a quantize and dequantize) runs on the u8s8 kernels where it fits
// (attention_int8.h); otherwise on the f32 kernels, the operands
// dequantized as they are copied into scratch, exactly as the dequantize
// op rounds, and P quantized and dequantized on the tile by the prob
// program, after the normalization it needs. bf16 Q, K and V whose P·V
// reads a bf16 P, with one key block, run on the bf16 kernels instead of
// widened where the CPU has bf16 instructions (attention_bf16.h;
// HGC_BF16_ATTENTION_KERNELS overrides the CPU's say). attention_plan.h
// holds the plan: types, blocks, strides, scratch, programs and kernels.
#ifndef HGC_CODEGEN_LOWER_ATTENTION_H_
#define HGC_CODEGEN_LOWER_ATTENTION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "codegen/attention_plan.h"
#include "codegen/lower_state.h"
#include "codegen/tile_ir.h"
#include "ir/graph.h"

namespace hgc {
namespace codegen {

// The nest of `op` (a fusion op of kind "attention") for a step on
// `num_threads` threads. Unimplemented (and no arena region left behind)
// for what the kernel does not cover (PlanAttention says what).
absl::StatusOr<tile::Nest> LowerAttention(LowerState& state, const Op& op,
                                          int num_threads);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LOWER_ATTENTION_H_
