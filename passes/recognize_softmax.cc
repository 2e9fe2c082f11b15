#include "passes/recognize_softmax.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "ir/builder.h"
#include "passes/graph_utils.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// The op defining `v` when it is of `kind`, else null.
const Op* DefinedBy(const Value* v, OpKind kind) {
  const Op* op = v->defining_op();
  return op != nullptr && op->kind_id() == kind ? op : nullptr;
}

// The one axis (in [0, rank)) a keep_dims reduction reduces, if it is one.
std::optional<int64_t> KeptAxis(const Op& reduce) {
  const Attribute* keep = reduce.FindAttr("keep_dims");
  const Attribute* axes = reduce.FindAttr("axes");
  if (keep == nullptr || !keep->is_bool() || !keep->as_bool() ||
      axes == nullptr || !axes->is_list() || axes->as_list().size() != 1 ||
      !axes->as_list()[0].is_int()) {
    return std::nullopt;
  }
  const int64_t rank = reduce.operand(0)->type().rank();
  const int64_t axis = axes->as_list()[0].as_int();
  return axis < 0 ? axis + rank : axis;
}

// Softmax's spelling of `axis`: -1 (the default) for the last.
int64_t SoftmaxAxis(int64_t axis, int64_t rank) {
  return axis == rank - 1 ? -1 : axis;
}

// The softmax's input and axis when `div` is the last op of a written-out
// f32 softmax (see the header).
std::optional<std::pair<Value*, int64_t>> MatchSoftmax(const Op& div) {
  const Value* y = div.result();
  const Op* exp = DefinedBy(div.operand(0), OpKind::kExp);
  const Op* sum = DefinedBy(div.operand(1), OpKind::kReduceSum);
  if (y->type().dtype != DType::kF32 || exp == nullptr || sum == nullptr ||
      sum->operand(0) != exp->result() || exp->result()->type() != y->type()) {
    return std::nullopt;
  }
  const Op* sub = DefinedBy(exp->operand(0), OpKind::kSub);
  if (sub == nullptr) return std::nullopt;
  Value* x = sub->operand(0);
  const Op* max = DefinedBy(sub->operand(1), OpKind::kReduceMax);
  if (max == nullptr || max->operand(0) != x || x->type() != y->type()) {
    return std::nullopt;
  }
  const std::optional<int64_t> sum_axis = KeptAxis(*sum);
  const std::optional<int64_t> max_axis = KeptAxis(*max);
  if (!sum_axis || sum_axis != max_axis) return std::nullopt;
  return std::make_pair(x, *sum_axis);
}

}  // namespace

absl::StatusOr<int> RecognizeSoftmaxes(Module& module) {
  int rewritten = 0;
  for (Graph* graph : TopLevelGraphs(module)) {
    for (Op* op : graph->OpsSnapshot()) {
      if (op->kind_id() != OpKind::kDiv) continue;
      const std::optional<std::pair<Value*, int64_t>> match = MatchSoftmax(*op);
      if (!match) continue;
      Builder b(graph, op);
      HGC_ASSIGN_OR_RETURN(
          Value * softmax,
          b.Create("softmax", {match->first},
                   {{"axis", Attribute::Int(SoftmaxAxis(
                                 match->second, match->first->type().rank()))}},
                   {}, op->loc()));
      graph->ReplaceAllUsesWith(op->result(), TakeName(softmax, op->result()));
      graph->Erase(op);
      ++rewritten;
    }
  }
  return rewritten;
}

}  // namespace hgc
