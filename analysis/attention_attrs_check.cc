// What DecodeAttentionMatch checks once the attributes are read: the rules
// MatchAttention applies to the roles it finds, applied to the roles the
// attributes name, so that a hand-written or edited match either describes
// exactly what the body computes or is refused.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analysis/attention_attrs_internal.h"
#include "analysis/attention_quant.h"
#include "analysis/graph_utils.h"
#include "analysis/op_predicates.h"
#include "analysis/strided_view.h"
#include "ir/dtype.h"

namespace hgc {
namespace attention_attrs {
namespace {

using strided_view::View;

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
  absl::StatusOr<View> OperandView(const char* name, const char* label,
                                   const Value* v,
                                   const std::vector<const Op*>* q_ops,
                                   const std::vector<const Op*>& quant);
  absl::Status CheckQuant(const char* name, const char* label,
                          const Value* param,
                          const std::vector<const Op*>& quant,
                          size_t quant_left);

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
  if (std::optional<attention_quant::QuantProblem> p =
          attention_quant::ProbOpsProblem(m_.prob_ops)) {
    return Bad(absl::StrCat("match_prob_ops: ", Name(m_.prob_ops[p->at]), " ",
                            p->why));
  }
  for (size_t i = 0; i < m_.out_ops.size(); ++i) {
    const Op* op = m_.out_ops[i];
    const bool last = i + 1 == m_.out_ops.size();
    if (!IsFloatCast(*op) &&
        !(last && attention_quant::IsPerTensorQuantize(*op))) {
      return Bad(absl::StrCat("match_out_ops: ", Name(op),
                              " is not a cast to a float type or, last, a "
                              "per-tensor quantize"));
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

// From the body's result back to P·V through casts and a quantize (the
// out ops), reshapes and transposes: P·V's result seen inside the
// result's memory.
absl::StatusOr<View> Checker::OutputView() {
  const Value* cur = m_.result;
  View view = strided_view::Contiguous(cur);
  auto cast = m_.out_ops.rbegin();
  while (cur != m_.pv->result()) {
    const Op* op = cur->defining_op();
    if (op == nullptr) return Bad("the result is not computed from P·V");
    if (op->kind_id() == OpKind::kCast || op->kind_id() == OpKind::kQuantize) {
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

// Checks the quantization ops `quant` (match_<x>_quant) of the operand
// read from `param` once its path is walked: every one met on the path
// (`quant_left`: how many were not), a chain MatchAttention takes, and
// present exactly when `param` is an integer.
absl::Status Checker::CheckQuant(const char* name, const char* label,
                                 const Value* param,
                                 const std::vector<const Op*>& quant,
                                 size_t quant_left) {
  const std::string role = absl::StrCat(name, "_quant: ");
  if (quant_left > 0) {
    return Bad(absl::StrCat(role, Name(quant[quant_left - 1]), " is not on ",
                            label, "'s path"));
  }
  if (std::optional<attention_quant::QuantProblem> p =
          attention_quant::OperandQuantProblem(quant)) {
    return Bad(absl::StrCat(role, Name(quant[p->at]), " ", p->why));
  }
  if (quant.empty() && !IsFloat(param->type().dtype)) {
    return Bad(absl::StrCat(name, ": parameter %", param->name(), " is ",
                            DTypeName(param->type().dtype), ", and ", name,
                            "_quant lists no dequantize of it"));
  }
  return absl::OkStatus();
}

// `v` seen through reshapes and transposes (and the quantize and
// dequantize ops `quant` and, with `q_ops`, those scales, each in order)
// as a view of the parameter they start from.
absl::StatusOr<View> Checker::OperandView(const char* name, const char* label,
                                          const Value* v,
                                          const std::vector<const Op*>* q_ops,
                                          const std::vector<const Op*>& quant) {
  std::vector<const Op*> relabels;
  size_t scales_left = q_ops == nullptr ? 0 : q_ops->size();
  size_t quant_left = quant.size();
  const Value* cur = v;
  while (!cur->is_param()) {
    const Op* op = cur->defining_op();
    covered_.insert(op);
    if (IsRelabel(*op)) {
      relabels.push_back(op);
      cur = op->operand(0);
      continue;
    }
    if (op->kind_id() == OpKind::kQuantize ||
        op->kind_id() == OpKind::kDequantize) {
      if (quant_left == 0 || quant[quant_left - 1] != op) {
        return Bad(absl::StrCat(name, "_quant: ", Name(op), " on ", label,
                                "'s path is not listed in order"));
      }
      if (uses_[op->result()] != 1) {
        return Bad(absl::StrCat(name, "_quant: ", Name(op),
                                " is read outside the chain"));
      }
      --quant_left;
      cur = op->operand(0);
      continue;
    }
    if (quant_left < quant.size() && scales_left > 0 &&
        (*q_ops)[scales_left - 1] == op) {
      return Bad(absl::StrCat("match_q_ops: ", Name(op),
                              " scales Q before its last dequantize"));
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
  HGC_RETURN_IF_ERROR(CheckQuant(name, label, cur, quant, quant_left));
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

absl::Status Checker::Run() {
  covered_.insert({m_.qk, m_.softmax, m_.pv});
  for (const auto* ops : {&m_.q_ops, &m_.score_ops, &m_.prob_ops, &m_.q_quant,
                          &m_.k_quant, &m_.v_quant}) {
    covered_.insert(ops->begin(), ops->end());
  }
  HGC_RETURN_IF_ERROR(CheckRoleKinds());
  HGC_RETURN_IF_ERROR(CheckScoreChain());
  HGC_RETURN_IF_ERROR(CheckProbChain());
  if (m_.result->type().NumElements() == 0) return Bad("an empty result");
  HGC_ASSIGN_OR_RETURN(View o, OutputView());
  HGC_ASSIGN_OR_RETURN(View q, OperandView("match_q", "Q", m_.qk->operand(0),
                                           &m_.q_ops, m_.q_quant));
  HGC_ASSIGN_OR_RETURN(View k, OperandView("match_k", "K", m_.qk->operand(1),
                                           nullptr, m_.k_quant));
  HGC_ASSIGN_OR_RETURN(View v, OperandView("match_v", "V", m_.pv->operand(1),
                                           nullptr, m_.v_quant));
  HGC_RETURN_IF_ERROR(CheckDims(m_, q, k, v, o));
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
