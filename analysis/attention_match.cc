#include "analysis/attention_match.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analysis/attention_quant.h"
#include "analysis/graph_utils.h"
#include "analysis/op_predicates.h"
#include "analysis/strided_view.h"
#include "ir/dtype.h"

namespace hgc {
namespace {

using strided_view::Contiguous;
using strided_view::MergeDims;
using strided_view::View;

#define ATTN_RETURN_IF_ERROR(expr)              \
  do {                                          \
    absl::Status attn_status_ = (expr);         \
    if (!attn_status_.ok()) return attn_status_; \
  } while (false)

absl::Status Unfit(absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat("attention: ", what));
}

class Matcher {
 public:
  explicit Matcher(const Graph& graph) : graph_(graph) {
    for (const auto& op : graph.ops()) {
      for (const Value* v : op->operands()) ++uses_[v];
    }
    for (const Value* v : graph.results()) ++uses_[v];
    for (const auto& op : graph.ops()) {
      for (const Value* v : op->operands()) {
        std::vector<const Op*>& u = users_[v];
        if (u.empty() || u.back() != op.get()) u.push_back(op.get());
      }
    }
  }

  absl::StatusOr<AttentionMatch> Run();

 private:
  // An op of the block; `v` (its chain operand) must have no other use.
  absl::Status Take(const Op* op, const Value* chain_value) {
    if (chain_value != nullptr && uses_[chain_value] != 1) {
      return Unfit(absl::StrCat("%", chain_value->name(),
                                " is used outside the attention chain"));
    }
    taken_.insert(op);
    return absl::OkStatus();
  }
  // A one-element literal constant, taken into the block.
  bool TakeScalarConstant(const Value* v) {
    const Op* def = v->defining_op();
    if (def == nullptr || def->kind_id() != OpKind::kConstant ||
        v->type().NumElements() != 1) {
      return false;
    }
    taken_.insert(def);
    return true;
  }
  // A one-element literal constant (taken) or parameter.
  bool TakeScalar(const Value* v) {
    return TakeScalarConstant(v) ||
           (v->is_param() && v->type().NumElements() == 1);
  }
  absl::StatusOr<const Value*> ScoreOp(const Op& op);
  absl::Status SideOperand(const Op& op, const Value* v);
  absl::StatusOr<View> ViewOf(const Value* v, std::vector<const Op*>* scales,
                              std::vector<const Op*>* quant);
  absl::Status ProbOps();
  absl::StatusOr<View> OutputView();
  absl::Status AssignDims(const View& q, const View& k, const View& v,
                          const View& o);

  const Graph& graph_;
  absl::flat_hash_map<const Value*, int> uses_;
  absl::flat_hash_map<const Value*, std::vector<const Op*>> users_;
  absl::flat_hash_set<const Op*> taken_;
  AttentionMatch m_;
};

// A side operand of a score op: a one-element literal constant, or a
// parameter broadcasting to the scores (a runtime scale f32[], a mask, a
// bias); the score program reads either per element.
absl::Status Matcher::SideOperand(const Op& op, const Value* v) {
  if (TakeScalarConstant(v)) return absl::OkStatus();
  if (v->is_param() && BroadcastsTo(v->type(), op.result()->type().shape)) {
    return absl::OkStatus();
  }
  return Unfit(absl::StrCat(op.kind(), " reads %", v->name(),
                            ", not a parameter or scalar constant"));
}

// Checks one op between the scores and softmax; returns its chain operand.
absl::StatusOr<const Value*> Matcher::ScoreOp(const Op& op) {
  // The score program evaluates any elementwise arithmetic per element:
  // scales, masks by add / sub / max / min / select, tanh soft-capping
  // (Gemma), whichever side the scores are on.
  const std::vector<int> chain_operands = ScoreChainOperands(op);
  if (chain_operands.empty()) {
    return Unfit(absl::StrCat(op.kind(), " between the scores and softmax"));
  }
  if (op.kind_id() == OpKind::kCast && !IsFloatCast(op)) {
    return Unfit("casts around softmax must be to f32, bf16 or f16");
  }
  // The scores: the first candidate operand that is computed.
  int c = -1;
  for (int i : chain_operands) {
    const Value* v = op.operand(i);
    if (!v->is_param() && v->defining_op()->kind_id() != OpKind::kConstant) {
      c = i;
      break;
    }
  }
  if (c < 0) {
    return Unfit(absl::StrCat(op.kind(), " does not apply to the scores"));
  }
  for (int i = 0; i < op.num_operands(); ++i) {
    if (i != c) ATTN_RETURN_IF_ERROR(SideOperand(op, op.operand(i)));
  }
  return op.operand(c);
}

// Walks from `v` back to a parameter through reshapes and transposes,
// quantize and dequantize ops (into `quant`, in path order; each read by
// the next op alone), and, when `scales` is given, mul / div by a
// one-element literal constant or parameter (a runtime scale) after the
// last dequantize.
absl::StatusOr<View> Matcher::ViewOf(const Value* v,
                                     std::vector<const Op*>* scales,
                                     std::vector<const Op*>* quant) {
  std::vector<const Op*> ops;
  const Value* cur = v;
  while (!cur->is_param()) {
    const Op* op = cur->defining_op();
    const OpKind k = op->kind_id();
    if (k == OpKind::kDequantize || k == OpKind::kQuantize) {
      // The kernel reads the parameter and dequantizes it as it loads;
      // nothing else may read the values in between, and an op names one
      // operand's role only.
      if (taken_.contains(op)) {
        return Unfit(absl::StrCat("%", cur->name(), " (", op->kind(),
                                  ") is on two operands' paths"));
      }
      ATTN_RETURN_IF_ERROR(Take(op, op->result()));
      quant->push_back(op);
      ops.push_back(op);
      cur = op->operand(0);
      continue;
    }
    bool scale = (k == OpKind::kMul || k == OpKind::kDiv) && scales != nullptr;
    if (scale && !quant->empty()) {
      // A scale before a (quantize, dequantize) pair would change what
      // the pair rounds; before the first dequantize it is integer math.
      return Unfit(absl::StrCat(op->kind(), " %", cur->name(),
                                " scales Q before its last dequantize"));
    }
    if (k != OpKind::kReshape && k != OpKind::kTranspose && !scale) {
      return Unfit(absl::StrCat("%", cur->name(), " (", op->kind(),
                                ") is not a parameter seen through reshape "
                                "and transpose"));
    }
    if (scale) {
      int c = -1;
      if (TakeScalar(op->operand(1))) {
        c = 0;
      } else if (k == OpKind::kMul && TakeScalar(op->operand(0))) {
        c = 1;
      }
      if (c < 0 || op->operand(c)->type() != op->result()->type()) {
        return Unfit(absl::StrCat(op->kind(),
                                  " before the scores matmul is not a "
                                  "scale by a one-element constant or "
                                  "parameter"));
      }
      scales->push_back(op);
      taken_.insert(op);
      ops.push_back(op);
      cur = op->operand(c);
      continue;
    }
    taken_.insert(op);
    ops.push_back(op);
    cur = op->operand(0);
  }
  if (cur->type().NumElements() == 0) return Unfit("empty operand");
  std::reverse(quant->begin(), quant->end());
  if (std::optional<attention_quant::QuantProblem> p =
          attention_quant::OperandQuantProblem(*quant)) {
    const Op& op = *(*quant)[p->at];
    return Unfit(
        absl::StrCat("%", op.result()->name(), " (", op.kind(), ") ", p->why));
  }
  if (quant->empty() && !IsFloat(cur->type().dtype)) {
    return Unfit(absl::StrCat("%", cur->name(),
                              " is not f32, bf16 or f16, nor read through a "
                              "per-tensor dequantize"));
  }
  View view = Contiguous(cur);
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    const Op& op = **it;
    if (!IsRelabel(op)) continue;  // a scale or a quant op: elementwise
    std::optional<View> r = strided_view::Forward(view, op);
    if (!r.has_value()) {
      return Unfit(absl::StrCat("reshape to %", op.result()->name(),
                                " is not expressible by strides"));
    }
    view = *std::move(r);
  }
  if (scales != nullptr) std::reverse(scales->begin(), scales->end());
  return view;
}

// Walks from the graph's result back to P·V through casts, a per-tensor
// quantize (the last of the elementwise ops: an int8 model quantizes the
// block's output for the next matmul), reshapes and transposes: the P·V
// result seen inside the result's memory.
absl::StatusOr<View> Matcher::OutputView() {
  const Value* cur = m_.result;
  if (cur->type().NumElements() == 0) return Unfit("empty result");
  View view = Contiguous(cur);
  std::vector<const Op*> casts;
  while (cur != m_.pv->result()) {
    if (cur->is_param()) return Unfit("the result is not computed from P·V");
    const Op* op = cur->defining_op();
    const Value* in = op->operand(0);
    if (op->kind_id() == OpKind::kQuantize) {
      if (!attention_quant::IsPerTensorQuantize(*op) || !casts.empty()) {
        return Unfit(
            "a quantize after P·V must be per-tensor and after the casts");
      }
      casts.push_back(op);
    } else if (op->kind_id() == OpKind::kCast) {
      if (!IsFloatCast(*op)) {
        return Unfit("casts after P·V must be to f32, bf16 or f16");
      }
      casts.push_back(op);
    } else if (IsRelabel(*op)) {
      std::optional<View> r = strided_view::Backward(view, *op);
      if (!r.has_value()) {
        return Unfit("the reshape after P·V is not expressible by strides");
      }
      view = *std::move(r);
    } else {
      return Unfit(absl::StrCat(op->kind(), " after P·V"));
    }
    ATTN_RETURN_IF_ERROR(Take(op, in));
    cur = in;
  }
  m_.out_ops.assign(casts.rbegin(), casts.rend());
  return view;
}

absl::Status Matcher::AssignDims(const View& q, const View& k, const View& v,
                                 const View& o) {
  const Op& qk = *m_.qk;
  const Op& pv = *m_.pv;
  const bool ta = BoolAttr(qk, "transpose_a");
  const bool tb = BoolAttr(qk, "transpose_b");
  const bool vt = BoolAttr(pv, "transpose_b");
  const Shape& s = qk.result()->type().shape;
  const Shape& os = pv.result()->type().shape;
  const size_t n = s.size() - 2;
  if (os.size() != s.size() || !std::equal(s.begin(), s.begin() + n,
                                           os.begin())) {
    return Unfit("V broadcasts P·V beyond the scores' batch dims");
  }
  const size_t rq = q.shape.size(), rk = k.shape.size(), rv = v.shape.size();
  if (rq < 2 || rk < 2 || rv < 2) return Unfit("a matmul operand of rank 1");
  m_.seq_q = s[n];
  m_.seq_kv = s[n + 1];
  m_.head_dim = q.shape[rq - (ta ? 2 : 1)];
  m_.head_dim_v = os[n + 1];
  std::vector<int64_t> r(s.begin(), s.begin() + n);
  // Batch strides of an operand aligned with r (numpy broadcasting).
  const auto align = [&](const View& x) {
    std::vector<int64_t> st(n, 0);
    const size_t xb = x.shape.size() - 2;
    for (size_t t = n - xb; t < n; ++t) {
      size_t i = t - (n - xb);
      if (x.shape[i] != 1) st[t] = x.strides[i];
    }
    return st;
  };
  const std::vector<int64_t> sq = align(q), sk = align(k), sv = align(v);
  const std::vector<int64_t> so(o.strides.begin(), o.strides.begin() + n);
  // Trailing dims over which K and V are broadcast form the query group.
  size_t g0 = n;
  while (g0 > 0 && (r[g0 - 1] == 1 || (sk[g0 - 1] == 0 && sv[g0 - 1] == 0))) {
    --g0;
  }
  std::vector<size_t> splits = {std::min<size_t>(1, n), 0};
  for (size_t p = 2; p <= n; ++p) splits.push_back(p);
  const auto product = [&](size_t lo, size_t hi) {
    int64_t x = 1;
    for (size_t i = lo; i < hi; ++i) x *= r[i];
    return x;
  };
  for (size_t p : splits) {
    const size_t g = std::max(g0, p);
    std::optional<int64_t> qb = MergeDims(r, sq, 0, p), qh = MergeDims(r, sq, p, n),
                           kb = MergeDims(r, sk, 0, p), kh = MergeDims(r, sk, p, g),
                           vb = MergeDims(r, sv, 0, p), vh = MergeDims(r, sv, p, g),
                           ob = MergeDims(r, so, 0, p), oh = MergeDims(r, so, p, n);
    if (!qb || !qh || !kb || !kh || !vb || !vh || !ob || !oh) continue;
    m_.batch = product(0, p);
    m_.heads = product(p, n);
    m_.group = product(g, n);
    m_.q = {q.param, q.offset,
            {*qb, *qh, q.strides[rq - (ta ? 1 : 2)], q.strides[rq - (ta ? 2 : 1)]}};
    m_.k = {k.param, k.offset,
            {*kb, *kh, k.strides[rk - (tb ? 2 : 1)], k.strides[rk - (tb ? 1 : 2)]}};
    m_.v = {v.param, v.offset,
            {*vb, *vh, v.strides[rv - (vt ? 1 : 2)], v.strides[rv - (vt ? 2 : 1)]}};
    m_.out_offset = o.offset;
    m_.out_strides = {*ob, *oh, o.strides[n], o.strides[n + 1]};
    return absl::OkStatus();
  }
  return Unfit(
      "the batch dims of Q, K, V and the output do not flatten to (batch, "
      "heads) with K and V shared by groups of query heads");
}

absl::StatusOr<AttentionMatch> Matcher::Run() {
  if (graph_.results().size() != 1) return Unfit("not one result");
  m_.result = graph_.results()[0];
  for (const auto& op : graph_.ops()) {
    if (op->kind_id() != OpKind::kSoftmax) continue;
    if (m_.softmax != nullptr) return Unfit("more than one softmax");
    m_.softmax = op.get();
  }
  if (m_.softmax == nullptr) return Unfit("no softmax");
  const Op& softmax = *m_.softmax;
  const int64_t rank = softmax.result()->type().rank();
  if (rank < 2 || SoftmaxAxis(softmax) != rank - 1) {
    return Unfit("softmax is not over the last axis of the scores");
  }
  taken_.insert(&softmax);
  // Back from softmax to the scores matmul.
  const Value* cur = softmax.operand(0);
  std::vector<const Op*> score_ops;
  for (;;) {
    if (cur->is_param()) return Unfit("softmax does not read a matmul");
    const Op* op = cur->defining_op();
    ATTN_RETURN_IF_ERROR(Take(op, cur));
    if (op->kind_id() == OpKind::kMatmul) break;
    absl::StatusOr<const Value*> next = ScoreOp(*op);
    if (!next.ok()) return next.status();
    score_ops.push_back(op);
    cur = *next;
  }
  m_.qk = cur->defining_op();
  m_.score_ops.assign(score_ops.rbegin(), score_ops.rend());
  if (!IsFloat(cur->type().dtype)) return Unfit("scores are not float");
  // Forward from softmax to the P·V matmul.
  cur = softmax.result();
  for (;;) {
    auto it = users_.find(cur);
    if (uses_[cur] != 1 || it == users_.end()) {
      return Unfit(absl::StrCat("%", cur->name(),
                                " is not read by exactly one op"));
    }
    const Op* user = it->second.front();
    taken_.insert(user);
    if (user->kind_id() == OpKind::kMatmul) {
      m_.pv = user;
      break;
    }
    const OpKind k = user->kind_id();
    if (k != OpKind::kCast && k != OpKind::kQuantize &&
        k != OpKind::kDequantize) {
      return Unfit(absl::StrCat(user->kind(), " between softmax and P·V"));
    }
    m_.prob_ops.push_back(user);
    cur = user->result();
  }
  ATTN_RETURN_IF_ERROR(ProbOps());
  if (m_.pv->operand(0) != cur || BoolAttr(*m_.pv, "transpose_a")) {
    return Unfit("the probabilities are not P·V's plain A operand");
  }
  absl::StatusOr<View> o = OutputView();
  if (!o.ok()) return o.status();
  absl::StatusOr<View> q = ViewOf(m_.qk->operand(0), &m_.q_ops, &m_.q_quant);
  if (!q.ok()) return q.status();
  absl::StatusOr<View> k = ViewOf(m_.qk->operand(1), nullptr, &m_.k_quant);
  if (!k.ok()) return k.status();
  absl::StatusOr<View> v = ViewOf(m_.pv->operand(1), nullptr, &m_.v_quant);
  if (!v.ok()) return v.status();
  ATTN_RETURN_IF_ERROR(AssignDims(*q, *k, *v, *o));
  for (const auto& op : graph_.ops()) {
    if (!taken_.contains(op.get())) {
      return Unfit(absl::StrCat("%", op->result()->name(), " (", op->kind(),
                                ") is not part of the attention block"));
    }
  }
  return m_;
}

// The casts, quantize and dequantize between softmax and P·V, taken in
// graph order.
absl::Status Matcher::ProbOps() {
  if (std::optional<attention_quant::QuantProblem> p =
          attention_quant::ProbOpsProblem(m_.prob_ops)) {
    const Op& op = *m_.prob_ops[p->at];
    return Unfit(absl::StrCat("%", op.result()->name(), " (", op.kind(),
                              ") between softmax and P·V ", p->why));
  }
  return absl::OkStatus();
}

}  // namespace

OperandQuant DequantizeOf(const std::vector<const Op*>& quant) {
  if (quant.empty()) return {};
  return attention_quant::ParamsOf(*quant.front());
}

absl::StatusOr<AttentionMatch> MatchAttention(const Graph& graph) {
  return Matcher(graph).Run();
}

std::vector<int> ScoreChainOperands(const Op& op) {
  const OpKind k = op.kind_id();
  if (k == OpKind::kCast || IsUnary(k)) return {0};
  if (IsBinary(k) && !IsComparison(k)) return {0, 1};
  if (k == OpKind::kSelect) return {1, 2};
  // The scores' own quantization (Intel Neural Compressor quantizes Q·Kᵀ's
  // output before the scale and the mask): elementwise as well.
  if (attention_quant::IsPerTensorQuantize(op) ||
      attention_quant::IsPerTensorDequantize(op)) {
    return {0};
  }
  return {};
}

}  // namespace hgc
