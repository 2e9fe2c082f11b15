#include "codegen/attention_int8.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/attention_quant.h"
#include "analysis/graph_utils.h"
#include "codegen/attention_kernels.h"
#include "codegen/runtime_helpers.h"
#include "microkernels/brgemm_dispatch.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

using microkernels::BrgemmDataType;
using tile::Call;
using tile::CallRegion;
using tile::Expr;
using tile::View;

// Longest rows of keys: each of P·V's s32 sum and its three zero-point
// terms is below 8192 * 255 * 256 = 2^29, so neither they nor the
// converted value (hgc_int8_to_f32 works in s32) can overflow.
constexpr int64_t kMaxKeys = 8192;

int64_t RoundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

bool IsSigned(const Value* v) { return v->type().dtype == DType::kS8; }

// The zero point of an operand as the kernels read it: A as u8 (an s8
// operand moved up by 128), B as s8 (a u8 operand moved down by 128).
int32_t StoredZero(int64_t zero_point, bool is_signed, bool is_a) {
  if (is_a) return static_cast<int32_t>(zero_point + (is_signed ? 128 : 0));
  return static_cast<int32_t>(zero_point - (is_signed ? 0 : 128));
}

// A packed B's bytes: groups of four rows of `ldb` columns.
int64_t PackedBytes(int64_t depth, int64_t ldb) {
  return (depth + 3) / 4 * ldb * 4;
}

}  // namespace

namespace {

// The product of the Q ops when each multiplies the dequantized Q by a
// constant f32 scalar or divides it by one (torch's SDPA export scales Q
// so); nullopt for any other op. Folded into the scores' scale: the
// products are summed exactly either way, so the scores differ from the
// reference's by rounding only.
std::optional<double> QOpsFactor(const AttentionMatch& m) {
  double factor = 1;
  for (const Op* op : m.q_ops) {
    const bool mul = op->kind_id() == OpKind::kMul;
    if ((!mul && op->kind_id() != OpKind::kDiv) ||
        op->result()->type().dtype != DType::kF32) {
      return std::nullopt;
    }
    // The constant (a splat of any shape, broadcast): either side of a
    // product, the divisor of a quotient.
    std::optional<double> c = SplatValue(op->operand(1));
    if (!c.has_value() && mul) c = SplatValue(op->operand(0));
    if (!c.has_value()) return std::nullopt;
    factor = mul ? factor * *c : factor / *c;
  }
  return factor;
}

// The int8 path's zero points and scales (`q_factor`: the Q ops'), row
// strides (AttentionPlan's *_ld) and whether Q is read in place, from the
// shapes and the QDQ ops.
void PlanInt8(AttentionPlan& p, double q_factor) {
  const AttentionMatch& m = p.m;
  const OperandQuant prob = attention_quant::ParamsOf(*m.prob_ops[0]);
  p.p_quant = prob;
  p.p_signed = m.prob_ops[0]->result()->type().dtype == DType::kS8;
  p.q_zero = StoredZero(p.q_quant.zero_point, IsSigned(m.q.param), true);
  p.k_zero = StoredZero(p.k_quant.zero_point, IsSigned(m.k.param), false);
  p.p_zero = StoredZero(prob.zero_point, p.p_signed, true);
  p.v_zero = StoredZero(p.v_quant.zero_point, IsSigned(m.v.param), false);
  p.qk_scale = static_cast<float>(p.q_quant.scale * p.k_quant.scale * q_factor);
  p.pv_scale = prob.scale * p.v_quant.scale;
  // u8 Q rows are the kernel's A as they are: read in place unless their
  // sums are needed (K's zero point as stored is not 0).
  p.q8_in_place = !IsSigned(m.q.param) && m.q.strides[3] == 1 &&
                  m.q.strides[2] >= m.head_dim && p.k_zero == 0;
  p.kt8_ld = RoundUp(m.seq_kv, 16);
  p.v8_ld = RoundUp(m.head_dim_v, 16);
  p.q8_ld = p.q8_in_place ? m.q.strides[2] : RoundUp(m.head_dim, 16);
  p.p8_ld = RoundUp(m.seq_kv, 64) + 64;  // rows off multiples of 64 bytes
}

// Q·Kᵀ's and P·V's kernels on this CPU's int8 family (OneKeyBlockKernels).
absl::StatusOr<std::vector<tile::Kernel>> Int8Kernels(const AttentionPlan& p) {
  HGC_ASSIGN_OR_RETURN(const Isa isa,
                       microkernels::SelectBrgemmIsa(BrgemmDataType::kU8S8));
  return OneKeyBlockKernels(p, isa, BrgemmDataType::kU8S8,
                            {p.q8_ld, p.kt8_ld, p.p8_ld, p.v8_ld});
}

}  // namespace

bool Int8AttentionFits(AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  const std::optional<double> q_factor = QOpsFactor(m);
  if (m.q_quant.empty() || m.k_quant.empty() || m.v_quant.empty() ||
      !q_factor.has_value() || m.prob_ops.size() != 2 ||
      m.prob_ops[0]->kind_id() != OpKind::kQuantize ||
      m.prob_ops[1]->kind_id() != OpKind::kDequantize ||
      p.softmax_type != DType::kF32 || m.seq_kv > kMaxKeys ||
      m.seq_kv > p.blocks.nb || p.heads_as_rows != 1) {
    return false;
  }
  // Kernels this CPU's int8 family cannot make for these shapes leave the
  // block to the f32 kernels rather than to a fallback. The strides are
  // the kernels' leading dimensions; AddInt8Scratch sizes by them.
  PlanInt8(p, *q_factor);
  return Int8Kernels(p).ok();
}

void AddInt8Scratch(tile::Nest& nest, AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  const int64_t mb = p.blocks.mb, d = m.head_dim, dv = m.head_dim_v,
                keys = m.seq_kv;
  p.kt8 = nest.AddPerThread(
      PackedBytes(d, p.kt8_ld), "kt8",
      absl::StrCat("s8[", d, ", ", keys, "] K transposed, one head, VNNI-4"));
  p.k_sums = nest.AddPerThread(
      4 * keys, "k_sums", absl::StrCat("s32[", keys, "] sums of Kᵀ's columns"));
  p.vp8 = nest.AddPerThread(
      PackedBytes(keys, p.v8_ld), "vp8",
      absl::StrCat("s8[", keys, ", ", dv, "] V of one head, VNNI-4"));
  p.v_sums = nest.AddPerThread(
      4 * dv, "v_sums", absl::StrCat("s32[", dv, "] sums of V's columns"));
  if (!p.q8_in_place) {
    p.q8 = nest.AddPerThread(mb * p.q8_ld, "q8",
                             absl::StrCat("u8[", mb, ", ", d, "] Q rows"));
    p.q_sums = nest.AddPerThread(
        4 * mb, "q_sums", absl::StrCat("s32[", mb, "] sums of Q's rows"));
  }
  p.p8 = nest.AddPerThread(
      mb * p.p8_ld, "p8", absl::StrCat("u8[", mb, ", ", keys, "] P quantized"));
  p.p_sums = nest.AddPerThread(4 * mb, "p_sums",
                               absl::StrCat("s32[", mb, "] sums of P's rows"));
}

absl::Status AddInt8Kernels(tile::Nest& nest, AttentionPlan& p) {
  HGC_ASSIGN_OR_RETURN(std::vector<tile::Kernel> kernels, Int8Kernels(p));
  AddOneKeyBlockKernels(nest, p, std::move(kernels));
  return absl::OkStatus();
}

void AppendInt8HeadPack(tile::NestBuilder& nb, const AttentionPlan& p,
                        Expr k_base, Expr v_base) {
  const AttentionMatch& m = p.m;
  const int64_t d = m.head_dim, dv = m.head_dim_v, keys = m.seq_kv;
  // Kᵀ: B[d][j] = K[j][d].
  Call k;
  k.helper = kPackInt8B;
  // A column's sum is needed where the other operand's zero point is not 0.
  const bool k_sums = p.q_zero != 0, v_sums = p.p_zero != 0;
  k.args = {View{p.k, k_base, 1}, Expr(m.k.strides[3]),
            Expr(m.k.strides[2]), Expr(d),
            Expr(keys),           int32_t{IsSigned(m.k.param)},
            View{p.kt8, 0, 1},    Expr(p.kt8_ld),
            int32_t{k_sums},      View{p.k_sums, 0, 4}};
  k.regions = {CallRegion("k", View{p.k, k_base, 1}, keys, m.k.strides[2], d,
                          m.k.strides[3], false),
               CallRegion("kt8", View{p.kt8, 0, 1}, 1, 0,
                          PackedBytes(d, p.kt8_ld), 1, true)};
  if (k_sums) {
    k.regions.push_back(
        CallRegion("k sums", View{p.k_sums, 0, 4}, 1, 0, keys, 1, true));
  }
  nb.Append(tile::Stmt{std::move(k)});
  // V: B[j][e] = V[j][e].
  Call v;
  v.helper = kPackInt8B;
  v.args = {View{p.v, v_base, 1},
            Expr(m.v.strides[2]),
            Expr(m.v.strides[3]),
            Expr(keys),
            Expr(dv),
            int32_t{IsSigned(m.v.param)},
            View{p.vp8, 0, 1},
            Expr(p.v8_ld),
            int32_t{v_sums},
            View{p.v_sums, 0, 4}};
  v.regions = {CallRegion("v", View{p.v, v_base, 1}, keys, m.v.strides[2], dv,
                          m.v.strides[3], false),
               CallRegion("vp8", View{p.vp8, 0, 1}, 1, 0,
                          PackedBytes(keys, p.v8_ld), 1, true)};
  if (v_sums) {
    v.regions.push_back(
        CallRegion("v sums", View{p.v_sums, 0, 4}, 1, 0, dv, 1, true));
  }
  nb.Append(tile::Stmt{std::move(v)});
}

View AppendInt8QRows(tile::NestBuilder& nb, const AttentionPlan& p, Expr q_row0,
                     Expr rows) {
  const AttentionMatch& m = p.m;
  if (p.q8_in_place) return View{p.q, q_row0, 1};
  const bool sums = p.k_zero != 0;
  Call q;
  q.helper = kPackInt8A;
  q.args = {View{p.q, q_row0, 1}, Expr(m.q.strides[2]),
            Expr(m.q.strides[3]), rows,
            Expr(m.head_dim),     int32_t{IsSigned(m.q.param)},
            View{p.q8, 0, 1},     Expr(p.q8_ld),
            int32_t{sums},        View{p.q_sums, 0, 4}};
  q.regions = {
      CallRegion("q", View{p.q, q_row0, 1}, rows, m.q.strides[2], m.head_dim,
                 m.q.strides[3], false),
      CallRegion("q8", View{p.q8, 0, 1}, rows, p.q8_ld, m.head_dim, 1, true)};
  if (sums) {
    q.regions.push_back(
        CallRegion("q sums", View{p.q_sums, 0, 4}, 1, 0, rows, 1, true));
  }
  nb.Append(tile::Stmt{std::move(q)});
  return View{p.q8, 0, 1};
}

namespace {

// The sums a conversion reads: A's row sums where B's zero point is not
// 0, B's column sums where A's is not.
void AddSumRegions(Call& c, View row_sums, Expr rows, int32_t b_zero,
                   View col_sums, int64_t cols, int32_t a_zero) {
  if (b_zero != 0) {
    c.regions.push_back(
        CallRegion("row sums", std::move(row_sums), 1, 0, rows, 1, false));
  }
  if (a_zero != 0) {
    c.regions.push_back(
        CallRegion("column sums", std::move(col_sums), 1, 0, cols, 1, false));
  }
}

// The s32 tile at `tile` (rows x cols, `ld` apart) as f32 rows at `dst`,
// `dst_ld` apart.
void AppendToF32(tile::NestBuilder& nb, View tile, int64_t ld, Expr rows,
                 int64_t cols, View row_sums, View col_sums, int32_t a_zero,
                 int32_t b_zero, int64_t depth, float scale, View dst,
                 int64_t dst_ld) {
  Call c;
  c.helper = kInt8ToF32;
  c.args = {tile,   Expr(ld), rows,        Expr(cols), row_sums, col_sums,
            a_zero, b_zero,   Expr(depth), scale,      dst,      Expr(dst_ld)};
  c.regions = {CallRegion("tile", tile, rows, ld, cols, 1, false),
               CallRegion("dst", dst, rows, dst_ld, cols, 1, true)};
  AddSumRegions(c, row_sums, rows, b_zero, col_sums, cols, a_zero);
  nb.Append(tile::Stmt{std::move(c)});
}

}  // namespace

void AppendInt8Scores(tile::NestBuilder& nb, const AttentionPlan& p,
                      View q_rows, Expr rows, Expr m_tail, Expr mask_base) {
  const AttentionMatch& m = p.m;
  tile::Brgemm qk;
  qk.kernel = p.qk_kernels.Pick(m_tail, 0);
  qk.a = std::move(q_rows);
  qk.b = View{p.kt8, 0, 1};
  qk.c = View{p.s, 0, 4};
  nb.Append(tile::Stmt{std::move(qk)});
  const View s{p.s, 0, 4};
  // Buffers the helper does not read stand in for those absent.
  const View scale = p.score_scale >= 0 ? View{p.score_scale, 0, 4} : s;
  const View mask = p.mask >= 0 ? View{p.mask, mask_base, 4} : s;
  const View row_max = p.row_max >= 0 ? View{p.row_max, 0, 4} : s;
  const View q_sums = p.q_sums >= 0 ? View{p.q_sums, 0, 4} : s;
  Call c;
  c.helper = kInt8Scores;
  c.args = {s,
            Expr(p.s_ld),
            rows,
            Expr(m.seq_kv),
            q_sums,
            View{p.k_sums, 0, 4},
            p.q_zero,
            p.k_zero,
            Expr(m.head_dim),
            p.qk_scale,
            int32_t{p.score_scale >= 0},
            scale,
            int32_t{p.mask >= 0},
            mask,
            int32_t{p.row_max >= 0},
            row_max};
  c.regions = {CallRegion("s", s, rows, p.s_ld, m.seq_kv, 1, true)};
  AddSumRegions(c, q_sums, rows, p.k_zero, View{p.k_sums, 0, 4}, m.seq_kv,
                p.q_zero);
  if (p.score_scale >= 0) {
    c.regions.push_back(CallRegion("scale", scale, 1, 0, 1, 1, false));
  }
  if (p.mask >= 0) {
    c.regions.push_back(CallRegion("mask", mask, 1, 0, m.seq_kv, 1, false));
  }
  if (p.row_max >= 0) {
    c.regions.push_back(CallRegion("row max", row_max, rows, 16, 16, 1, true));
  }
  nb.Append(tile::Stmt{std::move(c)});
}

void AppendInt8Output(tile::NestBuilder& nb, const AttentionPlan& p, Expr rows,
                      Expr m_tail, View dst, int64_t dst_ld) {
  const AttentionMatch& m = p.m;
  Call quantize;
  quantize.helper = kQuantizeRowsInt8;
  // Each row divided by its sum, which RowExp left in stats[mb, 2 mb).
  const View sums{p.stats, p.blocks.mb, 4};
  quantize.args = {View{p.s, 0, 4},
                   Expr(p.s_ld),
                   rows,
                   Expr(m.seq_kv),
                   sums,
                   p.p_quant.scale,
                   static_cast<int32_t>(p.p_quant.zero_point),
                   int32_t{p.p_signed},
                   View{p.p8, 0, 1},
                   Expr(p.p8_ld),
                   View{p.p_sums, 0, 4}};
  quantize.regions = {
      CallRegion("p", View{p.s, 0, 4}, rows, p.s_ld, m.seq_kv, 1, false),
      CallRegion("sums", sums, 1, 0, rows, 1, false),
      CallRegion("p8", View{p.p8, 0, 1}, rows, p.p8_ld, m.seq_kv, 1, true),
      CallRegion("p sums", View{p.p_sums, 0, 4}, 1, 0, rows, 1, true)};
  nb.Append(tile::Stmt{std::move(quantize)});
  tile::Brgemm pv;
  pv.kernel = p.pv_kernels.Pick(m_tail, 0);
  pv.a = View{p.p8, 0, 1};
  pv.b = View{p.vp8, 0, 1};
  pv.c = View{p.o, 0, 4};
  nb.Append(tile::Stmt{std::move(pv)});
  AppendToF32(nb, View{p.o, 0, 4}, m.head_dim_v, rows, m.head_dim_v,
              View{p.p_sums, 0, 4}, View{p.v_sums, 0, 4}, p.p_zero, p.v_zero,
              m.seq_kv, p.pv_scale, std::move(dst), dst_ld);
}

}  // namespace codegen
}  // namespace hgc
