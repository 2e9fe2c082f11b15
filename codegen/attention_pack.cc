#include "codegen/attention_pack.h"

#include <utility>

#include "codegen/runtime_helpers.h"

namespace hgc {
namespace codegen {

using tile::Expr;
using tile::View;

std::optional<View> Scratch(int index) {
  if (index < 0) return std::nullopt;
  return View{index, 0, 4};
}

tile::Stmt CopyRowsToF32(View src, Expr src_row, View dst, Expr dst_row,
                         Expr rows, Expr cols, DType type, bool exact,
                         OperandQuant quant) {
  tile::Copy copy{src, src_row, 1, dst, dst_row, 1, rows, cols};
  copy.src_type = type;
  copy.denormals_as_zero = type == DType::kBF16 && !exact;
  copy.scale = quant.scale;
  copy.zero_point = static_cast<int32_t>(quant.zero_point);
  return tile::Stmt{std::move(copy)};
}

void AppendStridedRows(tile::NestBuilder& nb, View src, int64_t row_stride,
                       int64_t col_stride, View dst, Expr dst_row, Expr rows,
                       Expr cols, DType type, std::optional<View> widened,
                       Expr widened_ld, bool exact, OperandQuant quant) {
  if (col_stride == 1) {
    nb.Append(CopyRowsToF32(src, row_stride, dst, dst_row, rows, cols, type,
                            exact, quant));
  } else if (row_stride == 1 && type != DType::kF32) {
    nb.Append(CopyRowsToF32(src, col_stride, *widened, widened_ld, cols, rows,
                            type, exact, quant));
    nb.Append(tile::Stmt{
        tile::Copy{*widened, widened_ld, 1, dst, 1, dst_row, cols, rows}});
  } else if (row_stride == 1) {
    nb.Append(tile::Stmt{
        tile::Copy{src, col_stride, 1, dst, 1, dst_row, cols, rows}});
  } else {
    nb.Append(tile::Stmt{
        tile::Copy{src, row_stride, col_stride, dst, dst_row, 1, rows, cols}});
  }
}

tile::Stmt TransposeIntoKt(const AttentionPlan& p, View k_rows, int64_t k_row,
                           int64_t k_col, Expr keys) {
  return tile::Stmt{tile::Copy{k_rows, k_row, k_col, View{p.kt, 0, 4}, 1,
                               p.kt_ld, keys, p.m.head_dim}};
}

namespace {

// Kᵀ of one head, unless the plan packs it per key block.
void AppendHeadKt(tile::NestBuilder& nb, const AttentionPlan& p, Expr k_base) {
  const AttentionMatch& m = p.m;
  const int64_t k_bytes = DTypeSize(p.k_type);
  if (p.k_packed && !p.kt_per_block) {
    // Key by key, so that reads run along K's rows. A bf16 / f16 K is
    // widened into contiguous rows first.
    View k_rows{p.k, k_base, k_bytes};
    int64_t k_row = m.k.strides[2], k_col = m.k.strides[3];
    if (p.kc >= 0) {
      nb.Append(CopyRowsToF32(k_rows, m.k.strides[2], View{p.kc, 0, 4},
                              m.head_dim, m.seq_kv, m.head_dim, p.k_type,
                              /*exact=*/false, p.k_quant));
      k_rows = View{p.kc, 0, 4};
      k_row = m.head_dim;
      k_col = 1;
    }
    nb.Append(TransposeIntoKt(p, k_rows, k_row, k_col, m.seq_kv));
  } else if (!p.k_packed && p.kt >= 0) {
    // K stored transposed, as bf16 / f16: its rows widened.
    nb.Append(CopyRowsToF32(View{p.k, k_base, k_bytes}, m.k.strides[3],
                            View{p.kt, 0, 4}, p.kt_ld, m.head_dim, m.seq_kv,
                            p.k_type, /*exact=*/false, p.k_quant));
  }
}

// V of one head: its rows, or column panels of v_ld columns (the last one
// partial when v_ld does not divide the head).
void AppendHeadV(tile::NestBuilder& nb, const AttentionPlan& p, Expr v_base) {
  const AttentionMatch& m = p.m;
  const int64_t v_bytes = DTypeSize(p.v_type);
  if (p.v_panels) {
    auto copy_panel = [&](Expr panel, int64_t cols) {
      AppendStridedRows(
          nb, View{p.v, v_base + panel * (p.v_ld * m.v.strides[3]), v_bytes},
          m.v.strides[2], m.v.strides[3], View{p.vp, panel * p.v_panel_ld, 4},
          p.v_ld, m.seq_kv, cols, p.v_type, Scratch(p.vw), m.seq_kv,
          /*exact=*/false, p.v_quant);
    };
    const int64_t whole = m.head_dim_v / p.v_ld;
    nb.For("panel", 0, whole, false,
           [&](Expr panel) { copy_panel(panel, p.v_ld); });
    if (m.head_dim_v % p.v_ld != 0) copy_panel(whole, m.head_dim_v % p.v_ld);
  } else if (p.vp >= 0) {
    AppendStridedRows(nb, View{p.v, v_base, v_bytes}, m.v.strides[2],
                      m.v.strides[3], View{p.vp, 0, 4}, p.v_ld, m.seq_kv,
                      m.head_dim_v, p.v_type, Scratch(p.vw), m.seq_kv,
                      /*exact=*/false, p.v_quant);
  }
}

}  // namespace

void AppendHeadPack(tile::NestBuilder& nb, const AttentionPlan& p, Expr k_base,
                    Expr v_base) {
  AppendHeadKt(nb, p, k_base);
  AppendHeadV(nb, p, v_base);
}

void AppendQuantizeOut(tile::NestBuilder& nb, const AttentionPlan& p, View dst,
                       Expr rows) {
  const AttentionMatch& m = p.m;
  const int64_t dv = m.head_dim_v;
  tile::Call q;
  q.helper = kQuantizeOut;
  q.args = {View{p.o, 0, 4},
            Expr(dv),
            rows,
            Expr(dv),
            p.out_quant->scale,
            static_cast<int32_t>(p.out_quant->zero_point),
            int32_t{m.result->type().dtype == DType::kS8},
            dst,
            Expr(m.out_strides[2]),
            Expr(m.out_strides[3])};
  q.regions = {tile::CallRegion("o", View{p.o, 0, 4}, rows, dv, dv, 1, false),
               tile::CallRegion("out", dst, rows, m.out_strides[2], dv,
                                m.out_strides[3], true)};
  nb.Append(tile::Stmt{std::move(q)});
}

}  // namespace codegen
}  // namespace hgc
