#include "passes/softmax_last_axis.h"

#include <vector>

#include "analysis/graph_utils.h"
#include "ir/builder.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

absl::Status MoveLast(Graph& graph, Op* op) {
  const int64_t rank = op->operand(0)->type().rank();
  const int64_t axis = SoftmaxAxis(*op);
  std::vector<int64_t> perm, inverse(rank);
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis) perm.push_back(d);
  }
  perm.push_back(axis);
  for (int64_t d = 0; d < rank; ++d) inverse[perm[d]] = d;
  Builder b(&graph, op);
  HGC_ASSIGN_OR_RETURN(
      Value * t, b.Create("transpose", {op->operand(0)},
                          {{"perm", Attribute::IntList(perm)}}, {}, op->loc()));
  HGC_ASSIGN_OR_RETURN(
      Value * s,
      b.Create("softmax", {t}, {{"axis", Attribute::Int(-1)}}, {}, op->loc()));
  HGC_ASSIGN_OR_RETURN(
      Value * y,
      b.Create("transpose", {s}, {{"perm", Attribute::IntList(inverse)}}, {},
               op->loc()));
  graph.ReplaceAllUsesWith(op->result(), TakeName(y, op->result()));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> MoveSoftmaxAxesLast(Module& module) {
  int rewritten = 0;
  for (Graph* graph : TopLevelGraphs(module)) {
    for (Op* op : graph->OpsSnapshot()) {
      if (op->kind_id() != OpKind::kSoftmax) continue;
      const int64_t rank = op->operand(0)->type().rank();
      if (rank == 0 || SoftmaxAxis(*op) == rank - 1) continue;
      HGC_RETURN_IF_ERROR(MoveLast(*graph, op));
      graph->Erase(op);
      ++rewritten;
    }
  }
  return rewritten;
}

}  // namespace hgc
