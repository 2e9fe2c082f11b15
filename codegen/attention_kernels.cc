#include "codegen/attention_kernels.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/graph_utils.h"
#include "codegen/nest_buffers.h"
#include "codegen/row_program.h"
#include "microkernels/brgemm_blocking.h"
#include "microkernels/brgemm_dispatch.h"
#include "microkernels/kernel_cache.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {

namespace {

using microkernels::BrgemmDesc;

// The operand of binary `op` other than `x`; nullptr when both are x.
const Value* OtherOperand(const Op& op, const Value* x) {
  if (op.operand(0) == x && op.operand(1) != x) return op.operand(1);
  if (op.operand(1) == x && op.operand(0) != x) return op.operand(0);
  return nullptr;
}

}  // namespace

// Plans the score ops into Q·Kᵀ's kernel (AttentionPlan::kernel_scores)
// when they are what it runs: on f32 scores [B, H, Sq, Skv], a `mul` by an
// f32 scalar (a literal constant or a body parameter), then an `add` of
// an f32 body parameter that is one row of keys for each (batch, head),
// either or both, or no score ops at all. Anything else (a `div`, a mask
// per query row, a select) keeps the score pass.
absl::Status PlanKernelScores(LowerState& state, const Op& op, tile::Nest& nest,
                              AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  const Value* s = m.qk->result();
  // The scores' own shape, as the graph has them.
  const int64_t r = p.heads_as_rows;
  const Shape scores{m.batch, m.heads * r, m.seq_q / r, m.seq_kv};
  if (s->type().dtype != DType::kF32 || s->type().shape != scores) {
    return absl::OkStatus();
  }
  const Value* scale = nullptr;
  const Value* mask = nullptr;
  std::vector<int64_t> mask_strides;
  size_t i = 0;
  const std::vector<const Op*>& ops = m.score_ops;
  if (i < ops.size() && ops[i]->kind_id() == OpKind::kMul) {
    scale = OtherOperand(*ops[i], s);
    if (scale == nullptr || scale->type().dtype != DType::kF32 ||
        scale->type().NumElements() != 1 ||
        !(scale->is_param() || SplatValue(scale).has_value())) {
      return absl::OkStatus();
    }
    s = ops[i++]->result();
  }
  if (i < ops.size() && ops[i]->kind_id() == OpKind::kAdd) {
    mask = OtherOperand(*ops[i], s);
    if (mask == nullptr || !mask->is_param() ||
        mask->type().dtype != DType::kF32) {
      return absl::OkStatus();
    }
    absl::StatusOr<std::vector<int64_t>> strides =
        BroadcastStrides(mask->type().shape, scores);
    if (!strides.ok()) return absl::OkStatus();
    mask_strides = *std::move(strides);
    if (r > 1) {
      // (b, g, row r) as GroupHeadsAsRows reads the heads.
      mask_strides = {mask_strides[0], mask_strides[1] * r, mask_strides[1],
                      mask_strides[3]};
    }
    // One mask row for all the rows of a block: the kernel adds it to each.
    if (mask_strides[2] != 0 || mask_strides[3] != 1) return absl::OkStatus();
    s = ops[i++]->result();
  }
  if (i != ops.size() || s->type() != m.qk->result()->type()) {
    return absl::OkStatus();
  }
  p.kernel_scores = true;
  // On AVX2 the kernel's maxima cost more than they save: with N blocks
  // outermost each register tile loads, folds and stores 12 of them, and
  // its stores compete with the tile's own. The score pass then takes the
  // max of the row itself, which also brings the row into L1 for the
  // softmax pass (heads of 64 ran 2-3 % faster on Zen 3, one thread).
  if (p.isa != Isa::kAvx2) {
    p.row_max =
        nest.AddLocal(64 * p.blocks.mb, "row_max",
                      absl::StrCat("f32[", p.blocks.mb,
                                   ", 16] running maxima of score rows"));
  }
  if (scale != nullptr && scale->is_param()) {
    p.score_scale = ValueBuffer(state, nest, op.operand(scale->index()));
  } else if (scale != nullptr) {
    p.scale_is_constant = true;
    p.scale_constant = static_cast<float>(*SplatValue(scale));
    p.score_scale = nest.AddLocal(
        4, "scale", absl::StrCat("f32 score scale ", p.scale_constant));
  }
  if (mask != nullptr) {
    p.mask = ValueBuffer(state, nest, op.operand(mask->index()));
    p.mask_batch_stride = mask_strides[0];
    p.mask_head_stride = mask_strides[1];
  }
  return absl::OkStatus();
}

absl::Status AddKernels(tile::Nest& nest, AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  const Isa isa = p.isa;
  const int64_t mb = p.blocks.mb, nb = p.blocks.nb;
  for (int mt = 0; mt < 2; ++mt) {
    const int64_t rows = mt && m.seq_q % mb ? m.seq_q % mb : mb;
    for (int nt = 0; nt < 2; ++nt) {
      const int64_t keys = nt && m.seq_kv % nb ? m.seq_kv % nb : nb;
      using microkernels::BrgemmDataType;
      BrgemmDesc qk = microkernels::MakeBrgemmDesc(isa, BrgemmDataType::kF32,
                                                   rows, keys, m.head_dim);
      // A dim of extent 1 has stride 0 in the match: any row length will do.
      qk.lda = p.qs >= 0 ? m.head_dim : std::max(m.q.strides[2], m.head_dim);
      qk.ldb = p.kt >= 0 ? p.kt_ld : std::max(m.k.strides[3], keys);
      if (p.k_rows) {
        qk.b_layout = microkernels::BLayout::kTransposed;
        qk.ldb = m.k.strides[2];
      }
      qk.ldc = p.s_ld;
      qk.batch_kind = microkernels::BatchKind::kStrided;
      qk.scale = p.score_scale >= 0;
      qk.bias = p.mask >= 0;
      qk.row_max = p.row_max >= 0;
      qk.prefetch_lines = p.prefetch_k_lines;
      HGC_ASSIGN_OR_RETURN(auto qk_code,
                           microkernels::BrgemmKernelCache::Global().Get(qk));
      p.qk_kernels.At(mt, nt) = nest.AddKernel(qk, std::move(qk_code));
      BrgemmDesc pv = microkernels::MakeBrgemmDesc(isa, BrgemmDataType::kF32,
                                                   rows, m.head_dim_v, keys);
      pv.lda = p.s_ld;
      pv.ldb = p.v_ld;
      if (p.v_panels) pv.b_panel_bytes = p.v_panel_ld * 4;
      // One query (extent 1, stride 0 in the match) has any row stride.
      pv.ldc = p.direct_out ? std::max(m.out_strides[2], m.head_dim_v)
                            : m.head_dim_v;
      pv.accumulate = m.seq_kv > nb;  // several key blocks accumulate
      pv.divide_rows = p.direct_out;
      pv.prefetch_lines = p.prefetch_v_lines;
      pv.batch_kind = microkernels::BatchKind::kStrided;
      HGC_ASSIGN_OR_RETURN(auto pv_code,
                           microkernels::BrgemmKernelCache::Global().Get(pv));
      p.pv_kernels.At(mt, nt) = nest.AddKernel(pv, std::move(pv_code));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<tile::Kernel>> OneKeyBlockKernels(
    const AttentionPlan& p, Isa isa, microkernels::BrgemmDataType dtype,
    const PackedStrides& ld) {
  const AttentionMatch& m = p.m;
  const int64_t mb = p.blocks.mb;
  std::vector<tile::Kernel> kernels;
  for (int mt = 0; mt < 2; ++mt) {
    const int64_t rows = mt && m.seq_q % mb ? m.seq_q % mb : mb;
    BrgemmDesc qk =
        microkernels::MakeBrgemmDesc(isa, dtype, rows, m.seq_kv, m.head_dim);
    qk.lda = ld.q;
    qk.ldb = ld.kt;
    qk.ldc = p.s_ld;
    BrgemmDesc pv =
        microkernels::MakeBrgemmDesc(isa, dtype, rows, m.head_dim_v, m.seq_kv);
    pv.lda = ld.p;
    pv.ldb = ld.v;
    pv.ldc = m.head_dim_v;
    for (BrgemmDesc* d : {&qk, &pv}) {
      d->batch_kind = microkernels::BatchKind::kStrided;
      HGC_ASSIGN_OR_RETURN(auto code,
                           microkernels::BrgemmKernelCache::Global().Get(*d));
      kernels.push_back(tile::Kernel{*d, std::move(code)});
    }
  }
  return kernels;
}

void AddOneKeyBlockKernels(tile::Nest& nest, AttentionPlan& p,
                           std::vector<tile::Kernel> kernels) {
  for (int mt = 0; mt < 2; ++mt) {
    tile::Kernel& qk = kernels[2 * mt];
    tile::Kernel& pv = kernels[2 * mt + 1];
    p.qk_kernels.At(mt, false) = nest.AddKernel(qk.desc, std::move(qk.code));
    p.pv_kernels.At(mt, false) = nest.AddKernel(pv.desc, std::move(pv.code));
  }
}

}  // namespace codegen
}  // namespace hgc
