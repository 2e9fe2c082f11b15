// The int8 path of attention's nest (lower_attention.h) for the QDQ form:
// u8 / s8 Q, K and V read through per-tensor dequantize ops and P through
// a quantize and dequantize pair. Both matmuls run on the u8s8 kernels
// (VNNI, AMX, or AVX2's vpmaddwd) instead of on f32 copies:
//
//   per (batch, kv head), in the parallel loop: Kᵀ and V packed as the
//     kernels' s8 B (VNNI-4), with their column sums
//   per query block: Q rows as u8 A (and their sums); S = Q·Kᵀ in s32,
//     then f32: (S - zero-point terms) * scale_q * scale_k, exactly
//     summed, with the score ops; softmax's exp and sums in f32 as on
//     the f32 path; P normalized by the reciprocal of its sum and
//     quantized to u8 as the graph's quantize rounds it (and its row
//     sums); O = P·V in s32, then f32 the same way; the write-out as on
//     the f32 path.
//
// The products are summed exactly in integers, where the reference sums
// rounded f32 products, and P is normalized within an ulp of the
// reference's division, so scores and outputs differ from it by rounding
// only, and P, quantized from them, by one quantization step at most
// where a value falls on a rounding boundary.
#ifndef HGC_CODEGEN_ATTENTION_INT8_H_
#define HGC_CODEGEN_ATTENTION_INT8_H_

#include "absl/status/status.h"
#include "codegen/attention_plan.h"
#include "codegen/tile_builder.h"
#include "codegen/tile_ir.h"

namespace hgc {
namespace codegen {

// Whether `p` (its types and blocks planned) can run on the int8 kernels:
// Q, K and V all quantized, no Q ops, P quantized by exactly one quantize
// and dequantize pair, f32 softmax, the keys in one block (no more than
// 8192, so that no s32 sum can overflow), and int8 kernels that this
// CPU's family can make for its shapes. Sets the int8 row strides
// (AttentionPlan's *_ld) it checks the kernels with.
bool Int8AttentionFits(AttentionPlan& p);

// Per-thread scratch of the int8 path (AttentionPlan's int8 buffers) and
// its zero points and scales.
void AddInt8Scratch(tile::Nest& nest, AttentionPlan& p);

// The Q·Kᵀ and P·V kernels of the int8 path, whole and for the query
// tail.
absl::Status AddInt8Kernels(tile::Nest& nest, AttentionPlan& p);

// One (batch, kv head)'s Kᵀ and V packed, with their column sums.
void AppendInt8HeadPack(tile::NestBuilder& nb, const AttentionPlan& p,
                        tile::Expr k_base, tile::Expr v_base);

// A query block's `rows` Q rows from `q_row0` (the element of its first)
// as u8 A, with their sums.
void AppendInt8QRows(tile::NestBuilder& nb, const AttentionPlan& p,
                     tile::Expr q_row0, tile::Expr rows);

// S = Q·Kᵀ into the score tile as f32 (`m_tail`: 1 for the query tail),
// then the score ops the f32 kernel would run (kernel_scores: the scale
// and the mask row from `mask_base`) and the rows' maxima (row_max).
void AppendInt8Scores(tile::NestBuilder& nb, const AttentionPlan& p,
                      tile::Expr rows, tile::Expr m_tail, tile::Expr mask_base);

// P (the score tile after exp, normalized here by the reciprocals of the
// rows' sums) quantized, then O = P·V into the O tile as f32.
void AppendInt8Output(tile::NestBuilder& nb, const AttentionPlan& p,
                      tile::Expr rows, tile::Expr m_tail);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_ATTENTION_INT8_H_
