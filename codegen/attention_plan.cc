#include "codegen/attention_plan.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/attention_attrs.h"
#include "analysis/attention_quant.h"
#include "analysis/graph_utils.h"
#include "codegen/attention_bf16.h"
#include "codegen/attention_int8.h"
#include "codegen/attention_kernels.h"
#include "codegen/attention_programs.h"
#include "codegen/nest_buffers.h"
#include "microkernels/brgemm_blocking.h"
#include "microkernels/brgemm_dispatch.h"
#include "support/cache_info.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {

namespace {

using microkernels::BrgemmDesc;

// The longest rows a rounded softmax or P takes whole (an S tile of 8 such
// rows is 2 MiB); longer ones run as an interpreter fallback.
constexpr int64_t kMaxWholeRowKeys = 65536;

// A row stride (in floats) for scratch the kernels read in panels of 64
// columns: rows an even number of cache lines apart share half of L1's
// sets or fewer, and a panel of many such rows evicts itself (Q·Kᵀ with a
// 96-deep Kᵀ of 128-key rows ran at 69 % of peak, at 99 % with rows 144
// floats apart; P·V over 384-key S rows at 84 %, at 98 % with 400). So rows
// longer than one panel start an odd number of lines apart and walk every
// set; rows of one panel or less stay packed.
int64_t SpreadStride(int64_t floats) {
  const int64_t ld = (floats + 15) / 16 * 16;
  return ld > 64 && (ld / 16) % 2 == 0 ? ld + 16 : ld;
}

// Float scores, softmax and result (f32, bf16 or f16; or u8 / s8 from a
// quantize of the output), and Q, K, V float or u8 / s8 read through their
// quantization ops.
absl::Status CheckSupported(const AttentionMatch& m) {
  const bool quantized_result =
      !m.out_ops.empty() && m.out_ops.back()->kind_id() == OpKind::kQuantize;
  const Value* values[] = {m.qk->result(), m.pv->operand(0), m.pv->result(),
                           m.softmax->result(),
                           quantized_result ? m.pv->result() : m.result};
  for (const Value* v : values) {
    if (!IsFloat(v->type().dtype)) {
      return absl::UnimplementedError("an integer attention operand");
    }
  }
  const std::pair<const Value*, const std::vector<const Op*>*> operands[] = {
      {m.q.param, &m.q_quant}, {m.k.param, &m.k_quant}, {m.v.param, &m.v_quant}};
  for (const auto& [param, quant] : operands) {
    const DType t = param->type().dtype;
    const bool int8 = t == DType::kU8 || t == DType::kS8;
    if (!(quant->empty() ? IsFloat(t) : int8)) {
      return absl::UnimplementedError(
          "a Q, K or V neither float nor u8 / s8 read through dequantize");
    }
  }
  // Q and V rows that are not contiguous ([D, S] storage, say) are copied
  // into scratch rows (before the Q ops, if any): f32 ones with any strides
  // (the widening copies read rows), and a bf16 / f16 (or u8 / s8) Q or V
  // stored [D, S], widened along S. A u8 / s8 K is dequantized a row at a
  // time, keys-major or stored transposed.
  if ((m.q.strides[3] != 1 && m.q.param->type().dtype != DType::kF32 &&
       m.q.strides[2] != 1) ||
      (m.v.strides[3] != 1 && m.v.param->type().dtype != DType::kF32 &&
       m.v.strides[2] != 1)) {
    return absl::UnimplementedError(
        "bf16 / f16 Q or V with neither rows nor columns contiguous");
  }
  if (!m.k_quant.empty() && m.k.strides[2] != 1 && m.k.strides[3] != 1) {
    return absl::UnimplementedError(
        "a u8 / s8 K with neither keys nor features contiguous");
  }
  return absl::OkStatus();
}

// Per-thread scratch: S and O tiles (no O tile when P·V writes the output
// itself), row statistics (max, then sum), Kᵀ of
// one head when K is keys-major or not f32 (and K widened first when
// both), V rows when copied, and Q rows after the Q ops or widened.
void AddScratch(tile::Nest& nest, int num_threads, AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  const int64_t mb = p.blocks.mb, nb = p.blocks.nb;
  auto per_thread = [&](int64_t floats, const char* name, std::string note) {
    return nest.AddPerThread(floats * 4, name, std::move(note));
  };
  p.s = per_thread(mb * p.s_ld, "s",
                   absl::StrCat("f32[", mb, ", ", nb, "] score tile, rows ",
                                p.s_ld, " apart"));
  if (!p.direct_out) {
    p.o = per_thread(
        mb * m.head_dim_v, "acc",
        absl::StrCat("f32[", mb, ", ", m.head_dim_v, "] output accumulator"));
  }
  if (num_threads > 1) {
    p.claims = nest.AddArenaScratch(
        64 * num_threads, "claims",
        absl::StrCat("i64[", num_threads,
                     "] item claims, one per thread, 64 bytes apart"));
  }
  p.stats = nest.AddLocal(
      12 * mb, "stats",
      absl::StrCat("f32[3, ", mb, "] running max, sum, block max"));
  if (p.int8 || p.bf16) {  // their own packs instead of the f32 copies
    if (p.int8) AddInt8Scratch(nest, p);
    if (p.bf16) AddBf16Scratch(nest, p);
    return;
  }
  if (p.k_packed && p.k_type != DType::kF32) {
    p.kc = per_thread(m.seq_kv * m.head_dim, "kc",
                      absl::StrCat("f32[", m.seq_kv, ", ", m.head_dim,
                                   "] K of one head, widened"));
  }
  if (p.kt_per_block) {
    p.kt = per_thread(
        m.head_dim * p.kt_ld, "kt",
        absl::StrCat("f32[", m.head_dim, ", ", nb,
                     "] K transposed, one key block, rows ", p.kt_ld,
                     " apart"));
  } else if (p.k_packed || p.k_type != DType::kF32) {
    p.kt = per_thread(
        m.head_dim * p.kt_ld, "kt",
        absl::StrCat("f32[", m.head_dim, ", ", m.seq_kv,
                     "] K transposed, one head, rows ", p.kt_ld, " apart"));
  }
  if (p.q_type != DType::kF32 && m.q.strides[3] != 1) {
    p.qw = per_thread(m.head_dim * mb, "qw",
                      absl::StrCat("f32[", m.head_dim, ", ", mb,
                                   "] Q rows stored [D, S], widened"));
  }
  if (p.v_type != DType::kF32 && m.v.strides[3] != 1) {
    p.vw = per_thread(m.head_dim_v * m.seq_kv, "vw",
                      absl::StrCat("f32[", m.head_dim_v, ", ", m.seq_kv,
                                   "] V of one head, stored [D, S], widened"));
  }
  if (p.v_panels) {
    const int64_t panels = (m.head_dim_v + p.v_ld - 1) / p.v_ld;
    p.vp = per_thread(panels * p.v_panel_ld, "vp",
                      absl::StrCat("f32[", panels, ", ", m.seq_kv, ", ", p.v_ld,
                                   "] V of one head in column panels ",
                                   p.v_panel_ld, " apart"));
  } else if (p.v_packed) {
    p.vp = per_thread(m.seq_kv * p.v_ld, "vp",
                      absl::StrCat("f32[", m.seq_kv, ", ", m.head_dim_v,
                                   "] V rows of one head, ", p.v_ld, " apart"));
  }
  if (!m.q_ops.empty() || p.q_type != DType::kF32 || m.q.strides[3] != 1) {
    p.qs = per_thread(
        mb * m.head_dim, "qs",
        absl::StrCat("f32[", mb, ", ", m.head_dim, "] Q rows ",
                     !m.q_ops.empty()           ? "after the Q ops"
                     : IsInteger(p.q_type)      ? "dequantized"
                     : p.q_type != DType::kF32  ? "widened"
                                                : "copied"));
  }
}

// A grouped-query decoder step, one query per head and `group` query heads
// per kv head, is attention over the kv heads with the group's query heads
// as its query rows: head h = g * group + r, query 0, is kv head g's row r.
// Rows are independent (each has its own softmax), the flattened row index
// (b * heads + h) * seq_q + i that the score and prob programs read side
// operands by is unchanged, and Q's and O's (g, r) strides are (group, 1)
// times their head stride. Llama-style 8:1 groups read K and V 8x less.
void GroupHeadsAsRows(AttentionPlan& p) {
  AttentionMatch& m = p.m;
  const int64_t r = m.group;
  m.q.strides = {m.q.strides[0], m.q.strides[1] * r, m.q.strides[1],
                 m.q.strides[3]};
  m.out_strides = {m.out_strides[0], m.out_strides[1] * r, m.out_strides[1],
                   m.out_strides[3]};
  m.heads /= r;
  m.seq_q = r;
  m.group = 1;
  p.heads_as_rows = r;
}

// The operand and softmax types, whether P is normalized before P·V, the
// block sizes, and the output's casts.
absl::Status PlanTypesAndBlocks(AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  p.q_type = m.q.param->type().dtype;
  p.k_type = m.k.param->type().dtype;
  p.v_type = m.v.param->type().dtype;
  if (!m.q_quant.empty()) p.q_quant = DequantizeOf(m.q_quant);
  if (!m.k_quant.empty()) p.k_quant = DequantizeOf(m.k_quant);
  if (!m.v_quant.empty()) p.v_quant = DequantizeOf(m.v_quant);
  p.softmax_type = m.softmax->result()->type().dtype;
  p.normalize = p.softmax_type != DType::kF32 ||
                m.pv->operand(0)->type().dtype != DType::kF32 ||
                !ProbOpsWidenOnly(m);
  // The rounding needs each row's whole sum before P·V: the keys come in
  // one block, the query blocks shrink to keep the S tile in L2.
  if (p.normalize && m.seq_kv > kMaxWholeRowKeys) {
    return absl::UnimplementedError(absl::StrCat(
        "a bf16 / f16 softmax or P (or a P rounded by prob ops) over more "
        "than ", kMaxWholeRowKeys, " keys"));
  }
  p.blocks = ChooseAttentionBlocks(m.seq_q, m.seq_kv, m.head_dim, m.head_dim_v,
                                   HostCacheInfo().l2_bytes, p.normalize);
  if (const DType t = m.pv->result()->type().dtype; t != DType::kF32) {
    p.out_casts.push_back(t);
  }
  for (const Op* out_op : m.out_ops) {
    if (out_op->kind_id() == OpKind::kQuantize) {  // the last one
      p.out_quant = attention_quant::ParamsOf(*out_op);
      continue;
    }
    p.out_casts.push_back(out_op->result()->type().dtype);
  }
  return absl::OkStatus();
}

// How Q·Kᵀ reads K, the score tile's layout, and whether P·V writes the
// output itself. K keys-major (d contiguous) is packed to Kᵀ; K stored
// transposed (keys contiguous) is the kernel's B as it is. One query row
// per block (a decoder step) with f32 K in contiguous rows reads K's rows
// as stored on AVX2, by the dot-product kernel (BLayout::kTransposed):
// copying Kᵀ ran at about half the rate of streaming K from memory.
void PlanKLayout(AttentionPlan& p, int64_t q_blocks) {
  const AttentionMatch& m = p.m;
  p.k_rows = p.isa == Isa::kAvx2 && m.k.strides[2] != 1 &&
             m.k.strides[3] == 1 && p.k_type == DType::kF32 && p.blocks.mb == 1;
  p.k_packed = m.k.strides[2] != 1 && !p.k_rows;
  p.kt_per_block = p.k_packed && p.k_type == DType::kF32 && q_blocks == 1 &&
                   m.group == 1 && m.seq_kv > p.blocks.nb;
  p.kt_ld = SpreadStride(p.kt_per_block ? p.blocks.nb : m.seq_kv);
  p.s_ld = SpreadStride(p.blocks.nb);
  // One key block, an f32 result in contiguous rows, no rounding: P·V
  // divides each row by its sum and writes it into the output itself.
  p.direct_out = m.seq_kv <= p.blocks.nb && !p.normalize &&
                 p.out_casts.empty() && m.result->type().dtype == DType::kF32 &&
                 m.out_strides[3] == 1;
}

// Which of the next head's K and V rows the kernels prefetch.
void PlanPrefetch(AttentionPlan& p, int64_t q_blocks) {
  const AttentionMatch& m = p.m;
  p.prefetch = m.seq_kv <= p.blocks.nb && p.k_packed && m.batch * m.heads > 1 &&
               m.q.strides[3] == 1 && m.v.strides[3] == 1;
  if (!p.prefetch) return;
  // The kernels' K loops (8 K elements a trip) need two trips or more to
  // spread their lines over.
  p.kv_slice = (m.seq_kv + q_blocks - 1) / q_blocks;
  auto lines = [&](int64_t row_elems, DType t) {
    return (p.kv_slice * row_elems * DTypeSize(t) + 63) / 64;
  };
  p.kernel_prefetch_k = m.k.strides[2] == m.head_dim && m.head_dim >= 16;
  p.kernel_prefetch_v = m.v.strides[2] == m.head_dim_v && m.seq_kv >= 16;
  if (p.kernel_prefetch_k) p.prefetch_k_lines = lines(m.head_dim, p.k_type);
  if (p.kernel_prefetch_v) p.prefetch_v_lines = lines(m.head_dim_v, p.v_type);
}

// Whether V is copied per head, and into what layout.
void PlanVLayout(AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  // Whether P·V's kernel reads each line of V more than once: only when a
  // query block has two register tiles of rows or more (its M tiles each
  // walk all of V). Otherwise a copy of V only adds traffic.
  const BrgemmDesc pv_shape =
      microkernels::MakeBrgemmDesc(p.isa, microkernels::BrgemmDataType::kF32,
                                   p.blocks.mb, m.head_dim_v, p.blocks.nb);
  // Not for a grouped decoder step's rows (heads_as_rows): they read V
  // once per kv head, a key block at a time, which the second M tile finds
  // in L2; a copy cost more (1031 keys, head 128, 8:1 groups: 8-13 %
  // faster uncopied on Zen 3).
  const bool v_reused =
      p.blocks.mb > microkernels::ChooseBlocking(pv_shape).rows &&
      p.heads_as_rows == 1;
  // V rows a multiple of 512 bytes apart ([B, H, S, 128], or [B, S, H, D]
  // with H·D a multiple of 128) share an eighth of L1's sets or fewer, and
  // P·V's 64-column panels of them evict each other: they are copied per
  // head, like Kᵀ ([B, S, H, D] V with H·D = 1024 ran 35 % slower read in
  // place). Dense rows of a head of 128 ([B, H, S, 128]) that P·V's kernel
  // prefetches arrive in L2 in time, and then measured 1-2.5 % faster read
  // in place (MHA-3; 2-3 % slower before the kernels prefetched them).
  // Rows 384 bytes apart measured better read in place.
  const int64_t v_stride = std::max(m.v.strides[2], m.head_dim_v);
  p.v_packed = (v_stride % 128 == 0 && !p.kernel_prefetch_v && v_reused) ||
               p.v_type != DType::kF32 || m.v.strides[3] != 1;
  p.v_ld = p.v_packed ? SpreadStride(m.head_dim_v) : v_stride;
  // On AVX2, V in column panels as wide as P·V's tiles (AttentionPlan's
  // v_panels) when it is copied anyway or reused. The panels are 64 bytes
  // more than their size apart, so that the copy's stores into them, row
  // by row, do not alias at 4 KiB.
  const int64_t tile_cols = microkernels::PanelColumns(pv_shape);
  p.v_panels = p.isa == Isa::kAvx2 && m.head_dim_v > tile_cols &&
               (p.v_packed || v_reused);
  if (p.v_panels) {
    p.v_packed = true;
    p.v_ld = tile_cols;
    p.v_panel_ld = m.seq_kv * tile_cols + 16;
  }
}

}  // namespace

absl::StatusOr<AttentionPlan> PlanAttention(LowerState& state, const Op& op,
                                            int num_threads, tile::Nest& nest) {
  const Graph* body = FusionBody(op);
  if (body == nullptr) return absl::UnimplementedError("no body");
  // The match attention-fusion made, carried on the op; a group without
  // one, or with one that does not describe its body, runs unfused.
  if (!HasAttentionMatchAttrs(op.attrs())) {
    return absl::UnimplementedError(
        "no match_* attributes (attention-fusion writes them)");
  }
  absl::StatusOr<AttentionMatch> match =
      DecodeAttentionMatch(op.attrs(), *body);
  if (!match.ok()) return absl::UnimplementedError(match.status().message());
  AttentionPlan p;
  p.m = *std::move(match);
  const AttentionMatch& m = p.m;
  HGC_RETURN_IF_ERROR(CheckSupported(m));
  // Only with a kv head per thread at least (the items are (batch, kv
  // head) pairs then, one per query block) and 4 query heads per kv head
  // or more: the rows' Q·Kᵀ copies Kᵀ per key block, where one query row
  // on AVX2 reads K's rows as stored (1031 keys, head 128, Zen 3: pairs of
  // heads ran 0.8-0.9x as fast as rows, groups of 4 1.1x, of 8 1.2-1.5x).
  if (m.seq_q == 1 && m.group >= 4 &&
      m.batch * (m.heads / m.group) >= num_threads) {
    GroupHeadsAsRows(p);
  }
  if (m.batch * m.heads * m.seq_q * m.seq_kv * m.head_dim * m.head_dim_v == 0) {
    return absl::UnimplementedError("empty attention");
  }
  if (body->results()[0]->type() != op.result()->type()) {
    return absl::UnimplementedError("body result type differs");
  }
  HGC_RETURN_IF_ERROR(PlanTypesAndBlocks(p));
  HGC_ASSIGN_OR_RETURN(
      p.isa, microkernels::SelectBrgemmIsa(microkernels::BrgemmDataType::kF32));
  const int64_t q_blocks = (m.seq_q + p.blocks.mb - 1) / p.blocks.mb;
  PlanKLayout(p, q_blocks);
  PlanPrefetch(p, q_blocks);
  PlanVLayout(p);
  // The QDQ form on the int8 kernels where it fits: its own packs replace
  // the f32 path's copies and the kernels' prefetches.
  p.int8 = Int8AttentionFits(p);
  // Likewise bf16 Q, K, V and P on the bf16 kernels.
  p.bf16 = !p.int8 && Bf16AttentionFits(p);
  if (p.int8 || p.bf16) {
    p.k_packed = p.kt_per_block = p.v_packed = p.v_panels = false;
    p.prefetch = p.kernel_prefetch_k = p.kernel_prefetch_v = false;
    p.prefetch_k_lines = p.prefetch_v_lines = 0;
    p.int8_direct_out = p.int8 && p.out_casts.empty() &&
                        m.result->type().dtype == DType::kF32 &&
                        m.out_strides[3] == 1;
  }
  auto operand = [&](const Value* param) {
    return ValueBuffer(state, nest, op.operand(param->index()));
  };
  p.q = operand(m.q.param);
  p.k = operand(m.k.param);
  p.v = operand(m.v.param);
  p.out = ValueBuffer(state, nest, op.result());
  AddScratch(nest, num_threads, p);
  HGC_RETURN_IF_ERROR(AddQProgram(state, op, nest, p));
  // On the int8 path, hgc_int8_scores runs what the f32 kernel would; the
  // bf16 kernels have no post-ops, so the score pass runs the score ops.
  if (!p.bf16) HGC_RETURN_IF_ERROR(PlanKernelScores(state, op, nest, p));
  HGC_RETURN_IF_ERROR(AddScoreAndProbPrograms(state, op, nest, p));
  if (absl::Status s = p.int8   ? AddInt8Kernels(nest, p)
                       : p.bf16 ? AddBf16Kernels(nest, p)
                                : AddKernels(nest, p);
      !s.ok()) {
    // A shape the kernels do not take runs unfused, correctly.
    return absl::UnimplementedError(
        absl::StrCat("attention kernels: ", s.message()));
  }
  return p;
}

}  // namespace codegen
}  // namespace hgc
