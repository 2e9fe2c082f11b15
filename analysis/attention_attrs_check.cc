// What DecodeAttentionMatch checks once the attributes are read: the rules
// MatchAttention applies to the roles it finds, applied to the roles the
// attributes name, so that a hand-written or edited match either describes
// exactly what the body computes or is refused.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analysis/attention_attrs_internal.h"
#include "analysis/graph_utils.h"
#include "analysis/op_predicates.h"
#include "analysis/strided_view.h"
#include "ir/dtype.h"

namespace hgc {
namespace attention_attrs {
namespace {

using strided_view::View;

// The products of r's dims from each index to the end (suffix[r.size()]
// is 1).
std::vector<int64_t> SuffixProducts(const std::vector<int64_t>& r) {
  std::vector<int64_t> suffix(r.size() + 1, 1);
  for (size_t i = r.size(); i-- > 0;) suffix[i] = suffix[i + 1] * r[i];
  return suffix;
}

// The first index from `from` whose trailing batch dims hold `extent`
// elements.
std::optional<size_t> SplitAt(const std::vector<int64_t>& suffix,
                              int64_t extent, size_t from) {
  for (size_t t = from; t < suffix.size(); ++t) {
    if (suffix[t] == extent) return t;
  }
  return std::nullopt;
}

// How the logical (batch, head) strides of one operand must step over the
// scores' batch dims r: dims before `p` make the batch, dims [p, g) the
// head index (the kv head for K and V), dims from g the query group (over
// which K and V are shared: stride 0).
struct BatchSplit {
  std::vector<int64_t> r, suffix;
  size_t p = 0, g = 0;
};

// Checks `st` (an operand's strides over r) against the described batch
// and head strides; a logical extent of 1 has stride 0.
absl::Status CheckBatchStrides(const char* name, const BatchSplit& split,
                               const std::vector<int64_t>& st, int64_t sb,
                               int64_t sh) {
  const std::vector<int64_t>& suffix = split.suffix;
  if (suffix[0] == suffix[split.p] && sb != 0) {
    return Bad(absl::StrCat(name, ": a batch stride over one batch"));
  }
  if (suffix[split.p] == suffix[split.g] && sh != 0) {
    return Bad(absl::StrCat(name, ": a head stride over one head"));
  }
  for (size_t i = 0; i < split.r.size(); ++i) {
    if (split.r[i] == 1) continue;
    const int64_t base = i < split.p ? sb : sh;
    const int64_t mult = i < split.p   ? suffix[i + 1] / suffix[split.p]
                         : i < split.g ? suffix[i + 1] / suffix[split.g]
                                       : 0;
    const bool ok = mult == 0 ? st[i] == 0
                              : st[i] % mult == 0 && st[i] / mult == base;
    if (!ok) {
      return Bad(absl::StrCat(name, ": the body steps ", st[i],
                              " elements over the scores' batch dim ", i,
                              ", which the batch and head strides do not "
                              "give"));
    }
  }
  return absl::OkStatus();
}

// Checks the described operand `d` against `x`, the body's view of a
// matmul operand whose last two dims are (seq, features), or (features,
// seq) when `features_first`.
absl::Status CheckOperand(const char* name, const View& x, bool features_first,
                          const StridedOperand& d, const BatchSplit& split) {
  if (d.param != x.param) {
    return Bad(absl::StrCat(name, ": the body reads parameter ",
                            x.param->index(), ", not ", d.param->index()));
  }
  const size_t rank = x.shape.size(), n = split.r.size();
  const int64_t seq = x.strides[rank - (features_first ? 1 : 2)];
  const int64_t features = x.strides[rank - (features_first ? 2 : 1)];
  if (d.offset != x.offset || d.strides[2] != seq ||
      d.strides[3] != features) {
    return Bad(absl::StrCat(name, ": the body reads offset ", x.offset,
                            ", row stride ", seq, ", column stride ",
                            features));
  }
  // Batch strides aligned with r (numpy broadcasting).
  std::vector<int64_t> st(n, 0);
  const size_t xb = rank - 2;
  for (size_t t = n - xb; t < n; ++t) {
    const size_t i = t - (n - xb);
    if (x.shape[i] != 1) st[t] = x.strides[i];
  }
  return CheckBatchStrides(name, split, st, d.strides[0], d.strides[1]);
}

class Checker {
 public:
  Checker(const AttentionMatch& m, const Graph& body) : m_(m), body_(body) {
    int i = 0;
    for (const auto& op : body.ops()) index_[op.get()] = i++;
    for (const auto& op : body.ops()) {
      for (const Value* v : op->operands()) {
        ++uses_[v];
        if (user_.find(v) == user_.end()) user_[v] = op.get();
      }
    }
    for (const Value* v : body.results()) ++uses_[v];
  }

  absl::Status Run();

 private:
  std::string Name(const Op* op) {
    return absl::StrCat("op ", index_.at(op), " (%", op->result()->name(),
                        " = ", op->kind(), ")");
  }
  absl::Status SingleUse(const Value* v) {
    if (uses_[v] == 1) return absl::OkStatus();
    return Bad(absl::StrCat("%", v->name(), " is used outside the chain"));
  }
  // A one-element literal constant (covered) or, when `param_ok`, a
  // one-element parameter.
  bool Scalar(const Value* v, bool param_ok) {
    if (v->type().NumElements() != 1) return false;
    if (v->is_param()) return param_ok;
    if (v->defining_op()->kind_id() != OpKind::kConstant) return false;
    covered_.insert(v->defining_op());
    return true;
  }
  absl::Status CheckRoleKinds();
  absl::Status CheckScoreChain();
  absl::Status CheckProbChain();
  absl::StatusOr<View> OutputView();
  absl::StatusOr<View> OperandView(const char* name, const Value* v,
                                   const std::vector<const Op*>* q_ops);
  absl::Status CheckDims(const View& q, const View& k, const View& v,
                         const View& o);

  const AttentionMatch& m_;
  const Graph& body_;
  absl::flat_hash_map<const Op*, int> index_;
  absl::flat_hash_map<const Value*, int> uses_;
  absl::flat_hash_map<const Value*, const Op*> user_;
  absl::flat_hash_set<const Op*> covered_;
};

absl::Status Checker::CheckRoleKinds() {
  if (m_.qk->kind_id() != OpKind::kMatmul) {
    return Bad(absl::StrCat("match_ops: Q·Kᵀ is ", Name(m_.qk)));
  }
  if (m_.pv->kind_id() != OpKind::kMatmul) {
    return Bad(absl::StrCat("match_ops: P·V is ", Name(m_.pv)));
  }
  const Op& softmax = *m_.softmax;
  const int64_t rank = softmax.result()->type().rank();
  if (softmax.kind_id() != OpKind::kSoftmax || rank < 2 ||
      SoftmaxAxis(softmax) != rank - 1) {
    return Bad(absl::StrCat("match_ops: ", Name(&softmax),
                            " is not a softmax over the last axis"));
  }
  for (const Op* op : m_.q_ops) {
    if (op->kind_id() != OpKind::kMul && op->kind_id() != OpKind::kDiv) {
      return Bad(absl::StrCat("match_q_ops: ", Name(op), " is not a scale"));
    }
  }
  for (const auto* ops : {&m_.prob_ops, &m_.out_ops}) {
    for (const Op* op : *ops) {
      if (!IsFloatCast(*op)) {
        return Bad(absl::StrCat(ops == &m_.prob_ops ? "match_prob_ops: "
                                                    : "match_out_ops: ",
                                Name(op), " is not a cast to a float type"));
      }
    }
  }
  for (const Op* op : m_.score_ops) {
    if (ScoreChainOperands(*op).empty() ||
        (op->kind_id() == OpKind::kCast && !IsFloatCast(*op))) {
      return Bad(absl::StrCat("match_score_ops: ", Name(op),
                              " cannot apply to the scores"));
    }
  }
  return absl::OkStatus();
}

// From softmax's operand back through the score ops, last first, to Q·Kᵀ.
absl::Status Checker::CheckScoreChain() {
  const Value* cur = m_.softmax->operand(0);
  for (auto it = m_.score_ops.rbegin(); it != m_.score_ops.rend(); ++it) {
    const Op& op = **it;
    if (cur->defining_op() != &op) {
      return Bad(absl::StrCat("match_score_ops: %", cur->name(),
                              " on the way to softmax is not ", Name(&op)));
    }
    HGC_RETURN_IF_ERROR(SingleUse(cur));
    // The scores: the first candidate operand that is computed.
    int c = -1;
    for (int i : ScoreChainOperands(op)) {
      const Value* v = op.operand(i);
      if (!v->is_param() && v->defining_op()->kind_id() != OpKind::kConstant) {
        c = i;
        break;
      }
    }
    if (c < 0) {
      return Bad(absl::StrCat("match_score_ops: ", Name(&op),
                              " does not read the scores"));
    }
    for (int i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      if (i == c || Scalar(v, /*param_ok=*/false)) continue;
      if (!v->is_param() ||
          !BroadcastsTo(v->type(), op.result()->type().shape)) {
        return Bad(absl::StrCat("match_score_ops: ", Name(&op), " reads %",
                                v->name(),
                                ", not a parameter or scalar constant"));
      }
    }
    cur = op.operand(c);
  }
  if (cur->defining_op() != m_.qk) {
    return Bad(absl::StrCat("match_ops: softmax does not read Q·Kᵀ ",
                            Name(m_.qk), " through match_score_ops"));
  }
  HGC_RETURN_IF_ERROR(SingleUse(cur));
  if (!IsFloat(cur->type().dtype)) return Bad("the scores are not float");
  return absl::OkStatus();
}

// From softmax's result forward through the prob ops to P·V's A operand.
absl::Status Checker::CheckProbChain() {
  const Value* cur = m_.softmax->result();
  for (const Op* op : m_.prob_ops) {
    if (uses_[cur] != 1 || user_[cur] != op) {
      return Bad(absl::StrCat("match_prob_ops: %", cur->name(),
                              " is not read by ", Name(op), " alone"));
    }
    cur = op->result();
  }
  if (uses_[cur] != 1 || user_[cur] != m_.pv || m_.pv->operand(0) != cur ||
      BoolAttr(*m_.pv, "transpose_a")) {
    return Bad(absl::StrCat("match_ops: %", cur->name(),
                            " is not the plain A operand of P·V ",
                            Name(m_.pv), " alone"));
  }
  return absl::OkStatus();
}

// From the body's result back to P·V through casts (the out ops), reshapes
// and transposes: P·V's result seen inside the result's memory.
absl::StatusOr<View> Checker::OutputView() {
  const Value* cur = m_.result;
  View view = strided_view::Contiguous(cur);
  auto cast = m_.out_ops.rbegin();
  while (cur != m_.pv->result()) {
    const Op* op = cur->defining_op();
    if (op == nullptr) return Bad("the result is not computed from P·V");
    if (op->kind_id() == OpKind::kCast) {
      if (cast == m_.out_ops.rend() || *cast != op) {
        return Bad(absl::StrCat("match_out_ops: ", Name(op),
                                " after P·V is not listed in order"));
      }
      ++cast;
    } else {
      std::optional<View> r;
      if (IsRelabel(*op)) r = strided_view::Backward(view, *op);
      if (!r.has_value()) {
        return Bad(absl::StrCat(Name(op), " after P·V is not a cast or a "
                                          "reshape or transpose that strides "
                                          "express"));
      }
      view = *std::move(r);
    }
    covered_.insert(op);
    HGC_RETURN_IF_ERROR(SingleUse(op->operand(0)));
    cur = op->operand(0);
  }
  if (cast != m_.out_ops.rend()) {
    return Bad(absl::StrCat("match_out_ops: ", Name(*cast),
                            " is not between P·V and the result"));
  }
  return view;
}

// `v` seen through reshapes and transposes (and, with `q_ops`, those
// scales in order) as a view of the parameter they start from.
absl::StatusOr<View> Checker::OperandView(const char* name, const Value* v,
                                          const std::vector<const Op*>* q_ops) {
  std::vector<const Op*> relabels;
  size_t scales_left = q_ops == nullptr ? 0 : q_ops->size();
  const Value* cur = v;
  while (!cur->is_param()) {
    const Op* op = cur->defining_op();
    covered_.insert(op);
    if (IsRelabel(*op)) {
      relabels.push_back(op);
      cur = op->operand(0);
      continue;
    }
    if (scales_left == 0 || (*q_ops)[scales_left - 1] != op) {
      return Bad(absl::StrCat(name, " reads ", Name(op),
                              ", not a reshape or transpose",
                              q_ops == nullptr ? "" : " or a listed Q op"));
    }
    --scales_left;
    int c = -1;
    if (Scalar(op->operand(1), /*param_ok=*/true)) {
      c = 0;
    } else if (op->kind_id() == OpKind::kMul &&
               Scalar(op->operand(0), /*param_ok=*/true)) {
      c = 1;
    }
    if (c < 0 || op->operand(c)->type() != op->result()->type()) {
      return Bad(absl::StrCat("match_q_ops: ", Name(op),
                              " is not a scale by a one-element constant or "
                              "parameter"));
    }
    cur = op->operand(c);
  }
  if (scales_left > 0) {
    return Bad(absl::StrCat("match_q_ops: ", Name((*q_ops)[scales_left - 1]),
                            " is not on Q's path"));
  }
  if (cur->type().NumElements() == 0) return Bad("an empty operand");
  View view = strided_view::Contiguous(cur);
  for (auto it = relabels.rbegin(); it != relabels.rend(); ++it) {
    std::optional<View> r = strided_view::Forward(view, **it);
    if (!r.has_value()) {
      return Bad(absl::StrCat(name, ": ", Name(*it),
                              " is not expressible by strides"));
    }
    view = *std::move(r);
  }
  return view;
}

absl::Status Checker::CheckDims(const View& q, const View& k, const View& v,
                                const View& o) {
  const Shape& s = m_.qk->result()->type().shape;
  const Shape& os = m_.pv->result()->type().shape;
  if (s.size() < 2 || os.size() != s.size() ||
      !std::equal(s.begin(), s.end() - 2, os.begin())) {
    return Bad("V broadcasts P·V beyond the scores' batch dims");
  }
  const size_t n = s.size() - 2;
  for (const View* x : {&q, &k, &v}) {
    if (x->shape.size() < 2 || x->shape.size() - 2 > n) {
      return Bad("a matmul operand of rank 1");
    }
  }
  const bool ta = BoolAttr(*m_.qk, "transpose_a");
  const int64_t head_dim = q.shape[q.shape.size() - (ta ? 2 : 1)];
  if (m_.seq_q != s[n] || m_.seq_kv != s[n + 1] || m_.head_dim != head_dim ||
      m_.head_dim_v != os[n + 1]) {
    return Bad(absl::StrCat("match_dims: the body has seq_q ", s[n],
                            ", seq_kv ", s[n + 1], ", head_dim ", head_dim,
                            ", head_dim_v ", os[n + 1]));
  }
  BatchSplit split;
  split.r.assign(s.begin(), s.begin() + n);
  split.suffix = SuffixProducts(split.r);
  const std::optional<size_t> p = SplitAt(split.suffix, m_.heads, 0);
  if (!p.has_value() || split.suffix[0] / split.suffix[*p] != m_.batch ||
      m_.heads % m_.group != 0) {
    return Bad(absl::StrCat(
        "match_dims: batch ", m_.batch, ", heads ", m_.heads, " and group ",
        m_.group, " do not split the scores' batch dims (",
        split.suffix[0], " elements)"));
  }
  const std::optional<size_t> g = SplitAt(split.suffix, m_.group, *p);
  if (!g.has_value()) {
    return Bad(absl::StrCat("match_dims: group ", m_.group,
                            " is not made of trailing batch dims"));
  }
  split.p = *p;
  split.g = n;
  HGC_RETURN_IF_ERROR(CheckOperand("match_q", q, ta, m_.q, split));
  StridedOperand out{o.param, m_.out_offset, m_.out_strides};
  HGC_RETURN_IF_ERROR(CheckOperand("match_out", o, false, out, split));
  split.g = *g;
  HGC_RETURN_IF_ERROR(CheckOperand(
      "match_k", k, !BoolAttr(*m_.qk, "transpose_b"), m_.k, split));
  return CheckOperand("match_v", v, BoolAttr(*m_.pv, "transpose_b"), m_.v,
                      split);
}

absl::Status Checker::Run() {
  covered_.insert({m_.qk, m_.softmax, m_.pv});
  for (const auto* ops : {&m_.q_ops, &m_.score_ops, &m_.prob_ops}) {
    covered_.insert(ops->begin(), ops->end());
  }
  HGC_RETURN_IF_ERROR(CheckRoleKinds());
  HGC_RETURN_IF_ERROR(CheckScoreChain());
  HGC_RETURN_IF_ERROR(CheckProbChain());
  if (m_.result->type().NumElements() == 0) return Bad("an empty result");
  HGC_ASSIGN_OR_RETURN(View o, OutputView());
  HGC_ASSIGN_OR_RETURN(View q,
                       OperandView("match_q", m_.qk->operand(0), &m_.q_ops));
  HGC_ASSIGN_OR_RETURN(View k,
                       OperandView("match_k", m_.qk->operand(1), nullptr));
  HGC_ASSIGN_OR_RETURN(View v,
                       OperandView("match_v", m_.pv->operand(1), nullptr));
  for (const View* x : {&q, &k, &v}) {
    if (!IsFloat(x->param->type().dtype)) {
      return Bad("Q, K and V must be f32, bf16 or f16");
    }
  }
  HGC_RETURN_IF_ERROR(CheckDims(q, k, v, o));
  for (const auto& op : body_.ops()) {
    if (!covered_.contains(op.get())) {
      return Bad(absl::StrCat(Name(op.get()),
                              " has no part in the attention block"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckAgainstBody(const AttentionMatch& m, const Graph& body) {
  return Checker(m, body).Run();
}

}  // namespace attention_attrs
}  // namespace hgc
