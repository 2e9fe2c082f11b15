// Copies of an attention group's operands into the per-thread scratch its
// plan holds (attention_plan.h): Q rows gathered or widened, Kᵀ per head
// or per key block, V as rows or as column panels; and of the O tile out
// to a quantized result. lower_attention.cc puts them into the nest,
// inside the parallel loop, by the thread that uses them.
#ifndef HGC_CODEGEN_ATTENTION_PACK_H_
#define HGC_CODEGEN_ATTENTION_PACK_H_

#include <cstdint>
#include <optional>

#include "codegen/attention_plan.h"
#include "codegen/tile_builder.h"
#include "codegen/tile_ir.h"
#include "ir/graph.h"

namespace hgc {
namespace codegen {

// The view of scratch buffer `index`, if the plan has one.
std::optional<tile::View> Scratch(int index);

// `rows` rows of `cols` contiguous elements of a Q, K or V operand of
// type `type` copied into f32 scratch: widened when bf16 / f16, with bf16
// denormals read as zeros, as a bf16 matmul reads its operands (unless
// `exact`: the rows go to the Q ops first, which see every value);
// dequantized by `quant` when u8 / s8.
tile::Stmt CopyRowsToF32(tile::View src, tile::Expr src_row, tile::View dst,
                         tile::Expr dst_row, tile::Expr rows, tile::Expr cols,
                         DType type, bool exact = false,
                         OperandQuant quant = {});

// Appends the copy of `rows` x `cols` elements of an operand at
// (`row_stride`, `col_stride`) (a Q or V stored [D, S], say) into
// contiguous f32 rows `dst_row` apart. Stored transposed (row stride 1),
// it is a transpose of its columns; a bf16 / f16 one is widened along its
// columns first, into `widened` (cols x rows, `widened_ld` apart). Other
// strides take f32 only (PlanAttention checks). `exact` and `quant` as for
// CopyRowsToF32.
void AppendStridedRows(tile::NestBuilder& nb, tile::View src,
                       int64_t row_stride, int64_t col_stride, tile::View dst,
                       tile::Expr dst_row, tile::Expr rows, tile::Expr cols,
                       DType type, std::optional<tile::View> widened,
                       tile::Expr widened_ld, bool exact = false,
                       OperandQuant quant = {});

// Kᵀ[d][j] = K[j][d] into the plan's kt for `keys` f32 keys-major rows at
// `k_rows`, `k_row` elements apart with elements `k_col` apart: the whole
// head's keys (AppendHeadPack) or one key block's (a plan with
// kt_per_block, just before Q·Kᵀ reads it).
tile::Stmt TransposeIntoKt(const AttentionPlan& p, tile::View k_rows,
                           int64_t k_row, int64_t k_col, tile::Expr keys);

// Appends one (batch, kv head)'s packing, where the plan asks for it: Kᵀ
// (transposed, widened first when bf16 / f16, or only widened when K is
// stored transposed; not when packed per key block) and V (rows or
// column panels). k_base and v_base are the head's first K and V elements.
void AppendHeadPack(tile::NestBuilder& nb, const AttentionPlan& p,
                    tile::Expr k_base, tile::Expr v_base);

// The O tile's `rows` rows (f32, their casts applied) quantized by
// AttentionPlan::out_quant into the u8 / s8 result from `dst` (its first
// row), with the result's strides.
void AppendQuantizeOut(tile::NestBuilder& nb, const AttentionPlan& p,
                       tile::View dst, tile::Expr rows);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_ATTENTION_PACK_H_
