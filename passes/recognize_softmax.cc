#include "passes/recognize_softmax.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "analysis/graph_utils.h"
#include "ir/builder.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// The op defining `v` when it is of `kind`, else null.
const Op* DefinedBy(const Value* v, OpKind kind) {
  const Op* op = v->defining_op();
  return op != nullptr && op->kind_id() == kind ? op : nullptr;
}

// The one axis (in [0, rank)) a reduction reduces, if it reduces one.
std::optional<int64_t> ReducedAxis(const Op& reduce) {
  const Attribute* axes = reduce.FindAttr("axes");
  if (axes == nullptr || !axes->is_list() || axes->as_list().size() != 1 ||
      !axes->as_list()[0].is_int()) {
    return std::nullopt;
  }
  const int64_t rank = reduce.operand(0)->type().rank();
  const int64_t axis = axes->as_list()[0].as_int();
  return axis < 0 ? axis + rank : axis;
}

// The axis when `v` is a reduction of `kind` over one axis of `x`, as an
// elementwise op with `x`'s shape reads it: its shape, padded with leading
// 1s to x's rank, is x's shape with that axis 1. That is the reduction with
// keep_dims; the one without, read through reshapes that put the axis back
// (ONNX before opset 18 with keepdims = 0, then Unsqueeze); or the one
// without, read as it is when every dim before the axis is 1 (numpy
// broadcasting puts the leading 1s back).
std::optional<int64_t> ReductionOf(const Value* v, OpKind kind,
                                   const Value* x) {
  const Value* cur = v;
  while (const Op* reshape = DefinedBy(cur, OpKind::kReshape)) {
    cur = reshape->operand(0);
  }
  const Op* reduce = DefinedBy(cur, kind);
  if (reduce == nullptr || reduce->operand(0) != x) return std::nullopt;
  const std::optional<int64_t> axis = ReducedAxis(*reduce);
  if (!axis) return std::nullopt;
  const Shape& xs = x->type().shape;
  const Shape& vs = v->type().shape;
  if (vs.size() > xs.size()) return std::nullopt;
  const size_t pad = xs.size() - vs.size();
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t want = static_cast<int64_t>(i) == *axis ? 1 : xs[i];
    const int64_t have = i < pad ? 1 : vs[i - pad];
    if (have != want) return std::nullopt;
  }
  return axis;
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
  if (y->type().dtype != DType::kF32 || exp == nullptr ||
      exp->result()->type() != y->type()) {
    return std::nullopt;
  }
  const Op* sub = DefinedBy(exp->operand(0), OpKind::kSub);
  if (sub == nullptr) return std::nullopt;
  Value* x = sub->operand(0);
  if (x->type() != y->type()) return std::nullopt;
  const std::optional<int64_t> sum_axis =
      ReductionOf(div.operand(1), OpKind::kReduceSum, exp->result());
  const std::optional<int64_t> max_axis =
      ReductionOf(sub->operand(1), OpKind::kReduceMax, x);
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
