#include "codegen/lower_attention.h"

#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "codegen/attention_bf16.h"
#include "codegen/attention_int8.h"
#include "codegen/attention_pack.h"
#include "codegen/attention_plan.h"
#include "codegen/tile_builder.h"
#include "codegen/tile_ir.h"
#include "support/cache_info.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

using tile::Expr;
using tile::View;

Expr Offset(const StridedOperand& x, const Expr& b, const Expr& h) {
  return x.offset + b * x.strides[0] + h * x.strides[1];
}

// Where one (batch, head)'s Q, K, V and O start, and its mask row when
// Q·Kᵀ's kernel adds it.
struct HeadBases {
  Expr q, k, v, o;
  Expr mask = 0;
};

// Prefetches the rows of the next (batch, head)'s Q, K and V that go with
// query row `i` of this one (its share of K and V rows: seq_kv / seq_q,
// rounded up; the last query rows' shares reach past the head, which is
// harmless) and its output row i (when contiguous), so that a thread's next
// head arrives from memory while it computes this one. K and V rows the
// kernels fetch (kernel_prefetch_k / _v) are left to them.
void PrefetchNextHead(tile::NestBuilder& nb, const AttentionPlan& p,
                      const HeadBases& next, Expr i) {
  const AttentionMatch& m = p.m;
  const int64_t q_bytes = DTypeSize(p.q_type), k_bytes = DTypeSize(p.k_type),
                v_bytes = DTypeSize(p.v_type);
  nb.Append(
      tile::Stmt{tile::Prefetch{View{p.q, next.q + i * m.q.strides[2], q_bytes},
                                1, m.q.strides[2], q_bytes * m.head_dim}});
  const int64_t per_row = (m.seq_kv + m.seq_q - 1) / m.seq_q;
  Expr j = i * per_row;
  const int64_t rows = per_row;
  if (!p.kernel_prefetch_k) {
    nb.Append(tile::Stmt{
        tile::Prefetch{View{p.k, next.k + j * m.k.strides[2], k_bytes}, rows,
                       m.k.strides[2], k_bytes * m.head_dim}});
  }
  if (!p.kernel_prefetch_v) {
    nb.Append(tile::Stmt{
        tile::Prefetch{View{p.v, next.v + j * m.v.strides[2], v_bytes}, rows,
                       m.v.strides[2], v_bytes * m.head_dim_v}});
  }
  if (m.out_strides[3] != 1) return;  // O rows are not contiguous
  const int64_t out_bytes = DTypeSize(m.result->type().dtype);
  nb.Append(tile::Stmt{
      tile::Prefetch{View{p.out, next.o + i * m.out_strides[2], out_bytes}, 1,
                     m.out_strides[2], out_bytes * m.head_dim_v, true}});
}

// Query block qb's slice of the next head's K or V rows (`buffer` from
// `base`, rows `row_stride` elements apart), which a kernel prefetches.
View NextKvSlice(const AttentionPlan& p, int buffer, Expr base,
                 int64_t row_stride, DType type, Expr qb) {
  return View{buffer, base + qb * (p.kv_slice * row_stride), DTypeSize(type)};
}

// The key block a query block's row passes work on: query rows from i0,
// keys [j0, j0 + keys), row_base the head's first row in the scores.
struct KeyBlock {
  Expr i0, j0, keys, row_base;
};

// Where row r's block max goes: the row max itself with one key block.
View BlockMax(const AttentionPlan& p, Expr r) {
  const int64_t mb = p.blocks.mb;
  return p.m.seq_kv <= p.blocks.nb ? View{p.stats, r, 4}
                                   : View{p.stats, 2 * mb + r, 4};
}

// Row r's score pass: the score ops, which also take the row's (block's)
// max, or the scores' own rounding and then the max. The max is taken
// here, a row ahead of the softmax pass that needs it, so that its chain
// overlaps the other row's exps.
void ScorePass(tile::NestBuilder& nb, const AttentionPlan& p,
               const KeyBlock& kb, Expr r) {
  const View s_row{p.s, r * p.s_ld, 4};
  const DType s_type = p.m.qk->result()->type().dtype;
  tile::RowReduce max;
  max.op = tile::RowReduce::Op::kSoftmaxMax;
  max.src = s_row;
  max.len = kb.keys;
  max.acc = BlockMax(p, r);
  if (p.score_program >= 0) {
    nb.Append(tile::Stmt{tile::RowMap{p.score_program, kb.row_base + kb.i0 + r,
                                      kb.j0, kb.j0 + kb.keys, s_row, s_row,
                                      BlockMax(p, r)}});
    return;
  }
  if (p.row_max >= 0) {
    // The kernel ran the score ops; the row's max is that of its lanes.
    max.src = View{p.row_max, r * 16, 4};
    max.len = 16;
  } else if (s_type != DType::kF32) {
    // The scores' own rounding, which no score op does.
    tile::RowScale round;
    round.src = round.dst = s_row;
    round.len = kb.keys;
    round.round_to = {s_type};
    nb.Append(tile::Stmt{std::move(round)});
  }
  nb.Append(tile::Stmt{std::move(max)});
  if (p.row_max >= 0) {
    // The row's softmax pass comes next: its scores, which no pass has
    // read since the kernel wrote them, move from L2 to L1 meanwhile.
    tile::Prefetch row;
    row.src = s_row;
    row.rows = 1;
    row.row_stride = p.s_ld;
    row.row_bytes = 4 * p.blocks.nb;
    row.to_l1 = true;
    nb.Append(tile::Stmt{std::move(row)});
  }
}

// Row r's softmax pass: exp and sum (plain with one key block, online
// with several), the normalization a rounded P needs, the prob ops, and
// the next head's prefetch.
void SoftmaxPass(tile::NestBuilder& nb, const AttentionPlan& p,
                 const KeyBlock& kb, const std::optional<HeadBases>& next,
                 Expr r) {
  const AttentionMatch& m = p.m;
  const int64_t mb = p.blocks.mb;
  const View s_row{p.s, r * p.s_ld, 4};
  const View max{p.stats, r, 4}, sum{p.stats, mb + r, 4};
  if (m.seq_kv <= p.blocks.nb) {
    nb.Append(tile::Stmt{tile::RowExp{s_row, s_row, kb.keys, max, sum}});
    // (The int8 path's quantization divides by the sum itself.)
    if (p.normalize && !p.int8) {
      tile::RowScale normalize;
      normalize.src = normalize.dst = s_row;
      normalize.len = kb.keys;
      normalize.factor = sum;
      normalize.divide = true;
      if (p.softmax_type != DType::kF32) {
        normalize.round_to = {p.softmax_type};
      }
      // Without prob ops the softmax result is P·V's A operand.
      normalize.denormals_as_zero =
          p.prob_program < 0 && m.pv->operand(0)->type().dtype == DType::kBF16;
      nb.Append(tile::Stmt{std::move(normalize)});
    }
  } else {
    nb.Append(tile::Stmt{tile::OnlineSoftmax{s_row, kb.keys, max, sum,
                                             View{p.o, r * m.head_dim_v, 4},
                                             m.head_dim_v, BlockMax(p, r)}});
  }
  if (p.prob_program >= 0) {
    nb.Append(tile::Stmt{tile::RowMap{p.prob_program, kb.row_base + kb.i0 + r,
                                      kb.j0, kb.j0 + kb.keys, s_row, s_row,
                                      std::nullopt}});
  }
  if (next) PrefetchNextHead(nb, p, *next, kb.i0 + r);
}

// The row passes of `rows` query rows over one key block. Row r + 1's
// score pass runs before row r's softmax pass: the two are independent,
// so one row's max and sum chains overlap the other row's work instead of
// stalling it. Step t runs row t's score pass and row t - 1's softmax
// pass, each as a loop of zero or one trips (the first and last steps
// lack one), so that each pass is emitted once.
void BuildRowPasses(tile::NestBuilder& nb, const AttentionPlan& p,
                    const KeyBlock& kb, Expr rows,
                    const std::optional<HeadBases>& next) {
  nb.For("t", 0, rows + 1, false, [&](Expr t) {
    nb.For("rs", t, Min(t + 1, rows), false,
           [&](Expr r) { ScorePass(nb, p, kb, r); });
    nb.For("r", Select(Lt(0, t), t - 1, t), t, false,
           [&](Expr r) { SoftmaxPass(nb, p, kb, next, r); });
  });
}

// The rows of one query block as Q·Kᵀ reads them: Q in place, or its rows
// widened or copied into scratch, or the Q ops' results there.
View AppendQRows(tile::NestBuilder& nb, const AttentionPlan& p,
                 const HeadBases& head, Expr i0, Expr rows) {
  const AttentionMatch& m = p.m;
  const View q_in{p.q, head.q + i0 * m.q.strides[2], DTypeSize(p.q_type)};
  if (p.qs < 0) return View{p.q, head.q + i0 * m.q.strides[2], 4};
  if (p.q_program < 0) {
    // A Q without ops that is bf16 / f16 (its rows widened) or whose rows
    // are not contiguous (copied).
    AppendStridedRows(nb, q_in, m.q.strides[2], m.q.strides[3],
                      View{p.qs, 0, 4}, m.head_dim, rows, m.head_dim, p.q_type,
                      Scratch(p.qw), p.blocks.mb, /*exact=*/false, p.q_quant);
    return View{p.qs, 0, 4};
  }
  // The Q ops, row by row. Rows that are not contiguous are gathered into
  // the scratch rows first (exactly: the ops see Q's own values), and so
  // are u8 / s8 rows, dequantized (the ops read the dequantized values);
  // the ops then run there in place.
  const bool gathered = m.q.strides[3] != 1 || IsInteger(p.q_type);
  if (gathered) {
    AppendStridedRows(nb, q_in, m.q.strides[2], m.q.strides[3],
                      View{p.qs, 0, 4}, m.head_dim, rows, m.head_dim, p.q_type,
                      Scratch(p.qw), p.blocks.mb, /*exact=*/true, p.q_quant);
  }
  nb.For("r", 0, rows, false, [&](Expr r) {
    const View q_row = gathered ? View{p.qs, r * m.head_dim, 4}
                                : View{p.q, head.q + (i0 + r) * m.q.strides[2],
                                       DTypeSize(p.q_type)};
    nb.Append(tile::Stmt{tile::RowMap{p.q_program, 0, 0, m.head_dim,
                                      View{p.qs, r * m.head_dim, 4}, q_row,
                                      std::nullopt}});
  });
  return View{p.qs, 0, 4};
}

// A query block's rows: its index, first row, row count and whether it is
// the M tail, and Q's rows as Q·Kᵀ reads them.
struct QueryRows {
  Expr qb, i0, rows, m_tail;
  View q;
};

// Key block kv of a query block: Q·Kᵀ, the row passes, P·V.
void BuildKeyBlock(tile::NestBuilder& nb, const AttentionPlan& p,
                   const QueryRows& qr, const HeadBases& head,
                   const std::optional<HeadBases>& next, Expr row_base,
                   Expr kv) {
  const AttentionMatch& m = p.m;
  const int64_t mb = p.blocks.mb, kb = p.blocks.nb;
  const float inf = std::numeric_limits<float>::infinity();
  Expr j0 = nb.Let("j0", kv * kb);
  Expr n_tail =
      m.seq_kv % kb == 0 ? Expr(0) : nb.Let("n_tail", Lt(m.seq_kv - j0, kb));
  Expr keys = nb.Let("keys", Select(n_tail, m.seq_kv - j0, kb));
  if (p.int8) {  // one key block (Int8AttentionFits)
    AppendInt8Scores(nb, p, qr.q, qr.rows, qr.m_tail, head.mask);
    BuildRowPasses(nb, p, KeyBlock{qr.i0, j0, keys, row_base}, qr.rows, next);
    if (p.int8_direct_out) {
      AppendInt8Output(nb, p, qr.rows, qr.m_tail,
                       View{p.out, head.o + qr.i0 * m.out_strides[2], 4},
                       m.out_strides[2]);
    } else {
      AppendInt8Output(nb, p, qr.rows, qr.m_tail, View{p.o, 0, 4},
                       m.head_dim_v);
    }
    return;
  }
  if (p.bf16) {  // one key block (Bf16AttentionFits)
    AppendBf16Scores(nb, p, qr.q, qr.m_tail);
    BuildRowPasses(nb, p, KeyBlock{qr.i0, j0, keys, row_base}, qr.rows, next);
    AppendBf16Output(nb, p, qr.rows, qr.m_tail);
    return;
  }
  if (p.kt_per_block) {
    // Kᵀ of this key block (AppendHeadPack packs the whole head otherwise).
    nb.Append(TransposeIntoKt(p, View{p.k, head.k + j0 * m.k.strides[2], 4},
                              m.k.strides[2], m.k.strides[3], keys));
  }
  tile::Brgemm qk;
  qk.kernel = p.qk_kernels.Pick(qr.m_tail, n_tail);
  qk.a = qr.q;
  qk.b = p.kt_per_block ? View{p.kt, 0, 4}
         : p.kt >= 0    ? View{p.kt, j0, 4}
                        : View{p.k, head.k + j0 * m.k.strides[2], 4};
  qk.c = View{p.s, 0, 4};
  if (p.row_max >= 0) {
    nb.Append(tile::Stmt{tile::Fill{View{p.row_max, 0, 4}, 16 * mb, -inf}});
    qk.row_max = View{p.row_max, 0, 4};
  }
  if (p.kernel_scores) {
    if (p.score_scale >= 0) qk.scale = View{p.score_scale, 0, 4};
    if (p.mask >= 0) qk.bias = View{p.mask, head.mask + j0, 4};
  }
  if (next && p.kernel_prefetch_k) {
    qk.prefetch = NextKvSlice(p, p.k, next->k, m.k.strides[2], p.k_type, qr.qb);
  }
  nb.Append(tile::Stmt{std::move(qk)});
  BuildRowPasses(nb, p, KeyBlock{qr.i0, j0, keys, row_base}, qr.rows, next);
  tile::Brgemm pv;
  pv.kernel = p.pv_kernels.Pick(qr.m_tail, n_tail);
  pv.a = View{p.s, 0, 4};
  pv.b = p.vp >= 0 ? View{p.vp, j0 * p.v_ld, 4}
                   : View{p.v, head.v + j0 * m.v.strides[2], 4};
  if (p.direct_out) {
    // O / sum, by the kernel, straight into the output.
    pv.c = View{p.out, head.o + qr.i0 * m.out_strides[2], 4};
    pv.row_divisors = View{p.stats, mb, 4};
  } else {
    pv.c = View{p.o, 0, 4};
  }
  if (next && p.kernel_prefetch_v) {
    pv.prefetch = NextKvSlice(p, p.v, next->v, m.v.strides[2], p.v_type, qr.qb);
  }
  nb.Append(tile::Stmt{std::move(pv)});
}

// O / sum (normalized rows need none), then P·V's rounding and the casts
// after it, stored in the result's type and final layout. O rows that are
// not contiguous are divided and rounded in place, then copied out (and
// narrowed to a bf16 / f16 result) with the result's strides; so are
// those of a quantized result, then quantized out.
void AppendWriteOut(tile::NestBuilder& nb, const AttentionPlan& p,
                    const HeadBases& head, Expr i0, Expr rows) {
  const AttentionMatch& m = p.m;
  const int64_t mb = p.blocks.mb, dv = m.head_dim_v;
  const DType out_type = m.result->type().dtype;
  const bool strided_out = m.out_strides[3] != 1;
  const bool in_place = strided_out || p.out_quant.has_value();
  if (!in_place || !p.normalize || !p.out_casts.empty()) {
    nb.For("r", 0, rows, false, [&](Expr r) {
      tile::RowScale out;
      out.src = View{p.o, r * dv, 4};
      out.dst = in_place ? out.src
                         : View{p.out, head.o + (i0 + r) * m.out_strides[2],
                                DTypeSize(out_type)};
      out.len = dv;
      if (!p.normalize) {
        out.factor = View{p.stats, mb + r, 4};
        out.reciprocal = true;
      }
      out.round_to = p.out_casts;
      out.dst_type = in_place ? DType::kF32 : out_type;
      nb.Append(tile::Stmt{std::move(out)});
    });
  }
  if (p.out_quant.has_value()) {
    AppendQuantizeOut(nb, p, View{p.out, head.o + i0 * m.out_strides[2], 1},
                      rows);
  } else if (strided_out) {
    tile::Copy copy;
    copy.src = View{p.o, 0, 4};
    copy.src_row = dv;
    copy.src_col = 1;
    copy.dst = View{p.out, head.o + i0 * m.out_strides[2], DTypeSize(out_type)};
    copy.dst_row = m.out_strides[2];
    copy.dst_col = m.out_strides[3];
    copy.rows = rows;
    copy.cols = dv;
    copy.dst_type = out_type;
    nb.Append(tile::Stmt{std::move(copy)});
  }
}

// One block of query rows: its K/V stream and the write-out.
void BuildQueryBlock(tile::NestBuilder& nb, const AttentionPlan& p, Expr qb,
                     const HeadBases& head,
                     const std::optional<HeadBases>& next, Expr row_base) {
  const AttentionMatch& m = p.m;
  const int64_t mb = p.blocks.mb, kb = p.blocks.nb;
  const float inf = std::numeric_limits<float>::infinity();
  QueryRows qr;
  qr.qb = qb;
  qr.i0 = nb.Let("i0", qb * mb);
  qr.m_tail =
      m.seq_q % mb == 0 ? Expr(0) : nb.Let("m_tail", Lt(m.seq_q - qr.i0, mb));
  qr.rows = nb.Let("rows", Select(qr.m_tail, m.seq_q - qr.i0, mb));
  // With one key block the softmax is a plain one (the reference's own
  // steps) and P·V overwrites O; with several, the online softmax rescales
  // an O that starts at 0.
  if (m.seq_kv > kb) {
    nb.Append(tile::Stmt{tile::Fill{View{p.stats, 0, 4}, mb, -inf}});
    nb.Append(tile::Stmt{tile::Fill{View{p.o, 0, 4}, mb * m.head_dim_v, 0.0f}});
  }
  nb.Append(tile::Stmt{tile::Fill{View{p.stats, mb, 4}, mb, 0.0f}});
  if (p.int8) {
    qr.q = AppendInt8QRows(nb, p, head.q + qr.i0 * m.q.strides[2], qr.rows);
  } else if (p.bf16) {
    qr.q = AppendBf16QRows(nb, p, head.q + qr.i0 * m.q.strides[2], qr.rows);
  } else {
    qr.q = AppendQRows(nb, p, head, qr.i0, qr.rows);
  }
  nb.For("kv", 0, (m.seq_kv + kb - 1) / kb, false,
         [&](Expr kv) { BuildKeyBlock(nb, p, qr, head, next, row_base, kv); });
  if (p.direct_out || p.int8_direct_out) return;  // P·V wrote the output
  AppendWriteOut(nb, p, head, qr.i0, qr.rows);
}

// The bases of the (batch, head) a thread runs after `bh`: its next item's
// beyond `bh`'s query blocks (q_blocks items a head). The last head of a
// thread's share prefetches its own rows again: the next thread's output
// rows taken for writing here would have to move back to that thread's
// core (5 % of MHA-1 at batch 1 on 2 threads).
HeadBases NextHeadBases(tile::NestBuilder& nb, const AttentionMatch& m, Expr bh,
                        int64_t q_blocks, Expr share_end) {
  Expr next_item =
      nb.Let("next_item", tile::Min((bh + 1) * q_blocks, share_end - 1));
  Expr next_bh = nb.Let("next_bh", next_item / q_blocks);
  Expr b = nb.Let("next_b", next_bh / m.heads);
  Expr h = nb.Let("next_h", next_bh % m.heads);
  Expr g = nb.Let("next_g", h / m.group);
  return HeadBases{nb.Let("next_q", Offset(m.q, b, h)),
                   nb.Let("next_k", Offset(m.k, b, g)),
                   nb.Let("next_v", Offset(m.v, b, g)),
                   nb.Let("next_o", m.out_offset + b * m.out_strides[0] +
                                        h * m.out_strides[1])};
}

// One item per (batch, head, query block), so that threads balance their
// shares a query block at a time. A thread packs a (batch, kv head)'s Kᵀ
// and V when its item needs another one than it packed last: once per kv
// head of its share, and once more for a head whose items it takes from
// another thread's share.
void BuildLoop(tile::NestBuilder& nb, const AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  const int64_t q_blocks = (m.seq_q + p.blocks.mb - 1) / p.blocks.mb;
  const int64_t items = m.batch * m.heads * q_blocks;
  if (p.scale_is_constant) {
    // Once per thread: the local is the thread's own.
    nb.Append(
        tile::Stmt{tile::Fill{View{p.score_scale, 0, 4}, 1, p.scale_constant}});
  }
  // AppendHeadPack writes Kᵀ (packed or widened) into kt and V into vp.
  const bool packs =
      (p.kt >= 0 && !p.kt_per_block) || p.vp >= 0 || p.int8 || p.bf16;
  Expr packed = packs ? nb.Mutable("packed", -1) : Expr(-1);
  nb.ParallelFor(
      "item", 0, items, true, Scratch(p.claims),
      [&](Expr item, Expr share_end) {
        Expr bh = nb.Let("bh", item / q_blocks);
        Expr qb = nb.Let("qb", item % q_blocks);
        Expr b = nb.Let("b", bh / m.heads);
        Expr h = nb.Let("h", bh % m.heads);
        Expr g = nb.Let("g", h / m.group);
        HeadBases head;
        head.q = nb.Let("q_base", Offset(m.q, b, h));
        head.k = nb.Let("k_base", Offset(m.k, b, g));
        head.v = nb.Let("v_base", Offset(m.v, b, g));
        head.o = nb.Let("o_base", m.out_offset + b * m.out_strides[0] +
                                      h * m.out_strides[1]);
        if (p.mask >= 0) {
          head.mask = nb.Let("mask_base",
                             b * p.mask_batch_stride + h * p.mask_head_stride);
        }
        std::optional<HeadBases> next;
        if (p.prefetch) next = NextHeadBases(nb, m, bh, q_blocks, share_end);
        if (packs) {
          Expr kv_head = nb.Let("kv_head", b * (m.heads / m.group) + g);
          nb.If("pack", Select(Eq(packed, kv_head), 0, 1), [&] {
            if (p.int8) {
              AppendInt8HeadPack(nb, p, head.k, head.v);
            } else if (p.bf16) {
              AppendBf16HeadPack(nb, p, head.k, head.v);
            } else {
              AppendHeadPack(nb, p, head.k, head.v);
            }
            nb.Assign(packed, kv_head);
          });
        }
        BuildQueryBlock(nb, p, qb, head, next, bh * m.seq_q);
      });
}

}  // namespace

absl::StatusOr<tile::Nest> LowerAttention(LowerState& state, const Op& op,
                                          int num_threads) {
  tile::Nest nest(state.StepName("attention"));
  HGC_ASSIGN_OR_RETURN(const AttentionPlan p,
                       PlanAttention(state, op, num_threads, nest));
  const AttentionMatch& m = p.m;
  nest.AddNote(absl::StrCat(
      "blocks: ", p.blocks.mb, " query rows x ", p.blocks.nb, " keys (L2 ",
      HostCacheInfo().l2_bytes / 1024,
      " KiB), one item per query block; heads per kv head ", m.group,
      p.kt_per_block ? "; Kᵀ packed per key block" : ""));
  tile::NestBuilder nb(nest);
  BuildLoop(nb, p);
  return nest;
}

}  // namespace codegen
}  // namespace hgc
