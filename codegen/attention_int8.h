// The int8 path of attention's nest (lower_attention.h) for the QDQ form:
// u8 / s8 Q, K and V read through per-tensor dequantize ops and P through
// a quantize and dequantize pair. Both matmuls run on the u8s8 kernels
// (VNNI, AMX, or AVX2's vpmaddwd) instead of on f32 copies:
//
//   per (batch, kv head), in the parallel loop: Kᵀ and V packed as the
//     kernels' s8 B (VNNI-4), with the column sums the other operand's
//     zero point needs
//   per query block: Q rows as u8 A (read in place where they are u8
//     rows already and K's zero point needs no row sums); S = Q·Kᵀ in
//     s32, then f32: (S - zero-point terms) * scale_q * scale_k, exactly
//     summed, with the score ops; softmax's exp and sums in f32 as on the
//     f32 path; P normalized and quantized to u8 as the graph's quantize
//     rounds it, one multiplication an element by 1 / (its row's sum *
//     P's scale) (and its row sums); O = P·V in s32, then f32 the same
//     way, written into the result's rows where they are contiguous f32
//     (else into the O tile, written out as on the f32 path).
//
// The products are summed exactly in integers, where the reference sums
// rounded f32 products, and P's multiplication is within a few ulps of
// the reference's two divisions, so scores and outputs differ from it by
// rounding only, and P, quantized from them, by one quantization step at
// most where a value lies that close to a rounding boundary.
#ifndef HGC_CODEGEN_ATTENTION_INT8_H_
#define HGC_CODEGEN_ATTENTION_INT8_H_

#include "absl/status/status.h"
#include "codegen/attention_plan.h"
#include "codegen/tile_builder.h"
#include "codegen/tile_ir.h"

namespace hgc {
namespace codegen {

// Whether `p` (its types and blocks planned) can run on the int8 kernels:
// Q, K and V all quantized, Q ops (if any) that only multiply or divide
// by constants (folded into the scores' scale), P quantized by exactly one
// quantize and dequantize pair, f32 softmax, the keys in one block (no
// more than 8192, so that no s32 sum can overflow), and int8 kernels that
// this CPU's family can make for its shapes. Sets the int8 zero points,
// scales and row strides (AttentionPlan's *_ld) it checks the kernels
// with.
bool Int8AttentionFits(AttentionPlan& p);

// Per-thread scratch of the int8 path (AttentionPlan's int8 buffers) and
// its zero points and scales.
void AddInt8Scratch(tile::Nest& nest, AttentionPlan& p);

// The Q·Kᵀ and P·V kernels of the int8 path, whole and for the query
// tail.
absl::Status AddInt8Kernels(tile::Nest& nest, AttentionPlan& p);

// One (batch, kv head)'s Kᵀ and V packed, with the column sums that the
// other operand's zero point needs.
void AppendInt8HeadPack(tile::NestBuilder& nb, const AttentionPlan& p,
                        tile::Expr k_base, tile::Expr v_base);

// A query block's `rows` Q rows from `q_row0` (the element of its first)
// as u8 A, with their sums where K's zero point needs them; returns
// them: in place (AttentionPlan::q8_in_place) or the q8 rows.
tile::View AppendInt8QRows(tile::NestBuilder& nb, const AttentionPlan& p,
                           tile::Expr q_row0, tile::Expr rows);

// S = Q·Kᵀ (Q the rows AppendInt8QRows returned) into the score tile as
// f32 (`m_tail`: 1 for the query tail), then the score ops the f32 kernel
// would run (kernel_scores: the scale and the mask row from `mask_base`)
// and the rows' maxima (row_max).
void AppendInt8Scores(tile::NestBuilder& nb, const AttentionPlan& p,
                      tile::View q_rows, tile::Expr rows, tile::Expr m_tail,
                      tile::Expr mask_base);

// P (the score tile after exp, normalized here) quantized, then O = P·V
// as f32 rows at `dst`, `dst_ld` apart: the O tile, or the output's rows
// themselves (AttentionPlan::int8_direct_out).
void AppendInt8Output(tile::NestBuilder& nb, const AttentionPlan& p,
                      tile::Expr rows, tile::Expr m_tail, tile::View dst,
                      int64_t dst_ld);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_ATTENTION_INT8_H_
