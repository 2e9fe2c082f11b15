#include "codegen/attention_bf16.h"

#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/attention_kernels.h"
#include "codegen/runtime_helpers.h"
#include "microkernels/brgemm_dispatch.h"
#include "support/cpu_features.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

using microkernels::BrgemmDataType;
using tile::Call;
using tile::CallRegion;
using tile::Expr;
using tile::View;

int64_t RoundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// HGC_BF16_ATTENTION_KERNELS: "1" takes the bf16 path on any bf16 kernels,
// "0" never takes it; otherwise (unset) the CPU decides.
enum class Choice { kByCpu, kAlways, kNever };

Choice EnvironmentChoice() {
  static const Choice choice = [] {
    const char* env = std::getenv("HGC_BF16_ATTENTION_KERNELS");
    if (env != nullptr && std::strcmp(env, "1") == 0) return Choice::kAlways;
    if (env != nullptr && std::strcmp(env, "0") == 0) return Choice::kNever;
    return Choice::kByCpu;
  }();
  return choice;
}

// A packed B's elements: pairs of rows of `ldb` columns.
int64_t PackedElements(int64_t depth, int64_t ldb) {
  return (depth + 1) / 2 * ldb * 2;
}

// The bf16 path's row strides and whether Q is read in place, from the
// shapes.
void PlanBf16(AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  p.q16_in_place = m.q.strides[3] == 1 && m.q.strides[2] >= m.head_dim;
  p.kt16_ld = RoundUp(m.seq_kv, 16);
  p.v16_ld = RoundUp(m.head_dim_v, 16);
  p.q16_ld = p.q16_in_place ? m.q.strides[2] : RoundUp(m.head_dim, 16);
  p.p16_ld = RoundUp(m.seq_kv, 32) + 32;  // whole lines and one more
}

// Q·Kᵀ's and P·V's kernels on family `isa` (OneKeyBlockKernels).
absl::StatusOr<std::vector<tile::Kernel>> Bf16Kernels(const AttentionPlan& p,
                                                      Isa isa) {
  return OneKeyBlockKernels(p, isa, BrgemmDataType::kBf16,
                            {p.q16_ld, p.kt16_ld, p.p16_ld, p.v16_ld});
}

// The bf16 family the path runs on: a bf16 instruction family, or any
// when the environment says always; kNone where the path is not taken.
Isa Bf16Isa() {
  const Choice choice = EnvironmentChoice();
  if (choice == Choice::kNever) return Isa::kNone;
  // Without AVX512_BF16 the choice is a widening kernel: no need to ask
  // (the first question times the kernels).
  const bool always = choice == Choice::kAlways;
  if (!always && !IsaAvailable(Isa::kAvx512CoreBf16)) return Isa::kNone;
  absl::StatusOr<Isa> isa =
      microkernels::SelectBrgemmIsa(BrgemmDataType::kBf16);
  if (!isa.ok()) return Isa::kNone;
  return always || *isa >= Isa::kAvx512CoreBf16 ? *isa : Isa::kNone;
}

}  // namespace

bool Bf16AttentionFits(AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  if (p.q_type != DType::kBF16 || p.k_type != DType::kBF16 ||
      p.v_type != DType::kBF16 || !m.q_ops.empty() ||
      m.pv->operand(0)->type().dtype != DType::kBF16 || !p.normalize ||
      m.seq_kv > p.blocks.nb || p.heads_as_rows != 1) {
    return false;
  }
  const Isa isa = Bf16Isa();
  if (isa == Isa::kNone) return false;
  // Kernels this family cannot make for these shapes leave the block to
  // the f32 kernels. AddBf16Scratch sizes by the strides set here.
  PlanBf16(p);
  return Bf16Kernels(p, isa).ok();
}

void AddBf16Scratch(tile::Nest& nest, AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  const int64_t mb = p.blocks.mb, d = m.head_dim, dv = m.head_dim_v,
                keys = m.seq_kv;
  p.kt16 = nest.AddPerThread(
      2 * PackedElements(d, p.kt16_ld), "kt16",
      absl::StrCat("bf16[", d, ", ", keys, "] K transposed, one head, VNNI-2"));
  p.vp16 = nest.AddPerThread(
      2 * PackedElements(keys, p.v16_ld), "vp16",
      absl::StrCat("bf16[", keys, ", ", dv, "] V of one head, VNNI-2"));
  if (!p.q16_in_place) {
    p.q16 = nest.AddPerThread(2 * mb * p.q16_ld, "q16",
                              absl::StrCat("bf16[", mb, ", ", d, "] Q rows"));
  }
  p.p16 = nest.AddPerThread(2 * mb * p.p16_ld, "p16",
                            absl::StrCat("bf16[", mb, ", ", keys, "] P rows"));
}

absl::Status AddBf16Kernels(tile::Nest& nest, AttentionPlan& p) {
  const Isa isa = Bf16Isa();
  if (isa == Isa::kNone) return absl::InternalError("no bf16 kernels");
  HGC_ASSIGN_OR_RETURN(std::vector<tile::Kernel> kernels, Bf16Kernels(p, isa));
  AddOneKeyBlockKernels(nest, p, std::move(kernels));
  return absl::OkStatus();
}

void AppendBf16HeadPack(tile::NestBuilder& nb, const AttentionPlan& p,
                        Expr k_base, Expr v_base) {
  const AttentionMatch& m = p.m;
  const int64_t d = m.head_dim, dv = m.head_dim_v, keys = m.seq_kv;
  // Kᵀ: B[d][j] = K[j][d].
  Call k;
  k.helper = kPackBf16B;
  k.args = {
      View{p.k, k_base, 2}, Expr(m.k.strides[3]), Expr(m.k.strides[2]), Expr(d),
      Expr(keys),           View{p.kt16, 0, 2},   Expr(p.kt16_ld)};
  k.regions = {CallRegion("k", View{p.k, k_base, 2}, keys, m.k.strides[2], d,
                          m.k.strides[3], false),
               CallRegion("kt16", View{p.kt16, 0, 2}, 1, 0,
                          PackedElements(d, p.kt16_ld), 1, true)};
  nb.Append(tile::Stmt{std::move(k)});
  // V: B[j][e] = V[j][e].
  Call v;
  v.helper = kPackBf16B;
  v.args = {View{p.v, v_base, 2},
            Expr(m.v.strides[2]),
            Expr(m.v.strides[3]),
            Expr(keys),
            Expr(dv),
            View{p.vp16, 0, 2},
            Expr(p.v16_ld)};
  v.regions = {CallRegion("v", View{p.v, v_base, 2}, keys, m.v.strides[2], dv,
                          m.v.strides[3], false),
               CallRegion("vp16", View{p.vp16, 0, 2}, 1, 0,
                          PackedElements(keys, p.v16_ld), 1, true)};
  nb.Append(tile::Stmt{std::move(v)});
}

View AppendBf16QRows(tile::NestBuilder& nb, const AttentionPlan& p, Expr q_row0,
                     Expr rows) {
  const AttentionMatch& m = p.m;
  if (p.q16_in_place) return View{p.q, q_row0, 2};
  Call q;
  q.helper = kCopyBf16Rows;
  q.args = {
      View{p.q, q_row0, 2}, Expr(m.q.strides[2]), Expr(m.q.strides[3]), rows,
      Expr(m.head_dim),     View{p.q16, 0, 2},    Expr(p.q16_ld)};
  q.regions = {CallRegion("q", View{p.q, q_row0, 2}, rows, m.q.strides[2],
                          m.head_dim, m.q.strides[3], false),
               CallRegion("q16", View{p.q16, 0, 2}, rows, p.q16_ld, m.head_dim,
                          1, true)};
  nb.Append(tile::Stmt{std::move(q)});
  return View{p.q16, 0, 2};
}

void AppendBf16Scores(tile::NestBuilder& nb, const AttentionPlan& p,
                      View q_rows, Expr m_tail) {
  tile::Brgemm qk;
  qk.kernel = p.qk_kernels.Pick(m_tail, 0);
  qk.a = std::move(q_rows);
  qk.b = View{p.kt16, 0, 2};
  qk.c = View{p.s, 0, 4};
  nb.Append(tile::Stmt{std::move(qk)});
}

void AppendBf16Output(tile::NestBuilder& nb, const AttentionPlan& p, Expr rows,
                      Expr m_tail) {
  const AttentionMatch& m = p.m;
  Call narrow;
  narrow.helper = kNarrowBf16Rows;
  narrow.args = {View{p.s, 0, 4}, Expr(p.s_ld),      rows,
                 Expr(m.seq_kv),  View{p.p16, 0, 2}, Expr(p.p16_ld)};
  narrow.regions = {
      CallRegion("p", View{p.s, 0, 4}, rows, p.s_ld, m.seq_kv, 1, false),
      CallRegion("p16", View{p.p16, 0, 2}, rows, p.p16_ld, m.seq_kv, 1, true)};
  nb.Append(tile::Stmt{std::move(narrow)});
  tile::Brgemm pv;
  pv.kernel = p.pv_kernels.Pick(m_tail, 0);
  pv.a = View{p.p16, 0, 2};
  pv.b = View{p.vp16, 0, 2};
  pv.c = View{p.o, 0, 4};
  nb.Append(tile::Stmt{std::move(pv)});
}

}  // namespace codegen
}  // namespace hgc
