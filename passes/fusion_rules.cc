#include "passes/fusion_rules.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "analysis/const_only.h"
#include "analysis/graph_utils.h"
#include "ir/ops/op_helpers.h"

namespace hgc {

bool IsPointwise(const Op& op) {
  return op.num_results() == 1 && IsPointwise(op.kind_id());
}

std::optional<FusionKind> AnchorKind(OpKind kind) {
  if (kind == OpKind::kMatmul) return FusionKind::kMatmul;
  if (kind == OpKind::kSoftmax) return FusionKind::kSoftmax;
  if (kind == OpKind::kLayernorm) return FusionKind::kLayernorm;
  if (IsReduction(kind)) return FusionKind::kReduce;
  return std::nullopt;
}

bool ReductionStandsAlone(const Op& op) {
  if (!IsReduction(op.kind_id())) return false;
  const TensorType& x = op.operand(0)->type();
  if (!IsFloat(x.dtype)) return true;
  absl::StatusOr<std::vector<bool>> reduced =
      ReducedAxes(op.kind(), op.FindAttr("axes"), x.rank());
  if (!reduced.ok()) return true;
  // Trailing: no kept dim after a reduced one.
  bool seen_reduced = false;
  for (bool r : *reduced) {
    if (seen_reduced && !r) return true;
    seen_reduced = seen_reduced || r;
  }
  return false;
}

namespace {

class GroupBuilder {
 public:
  GroupBuilder(const Graph& graph, const FusionOptions& options)
      : options_(options), uses_(graph), consts_(graph) {}

  std::vector<FusionGroup> Build(const Graph& graph) {
    for (const auto& op : graph.ops()) Visit(op.get());
    // Order by last op, the position where each fusion op will stand.
    absl::flat_hash_map<const Op*, int> position;
    int i = 0;
    for (const auto& op : graph.ops()) position[op.get()] = i++;
    std::sort(groups_.begin(), groups_.end(),
              [&](const FusionGroup& a, const FusionGroup& b) {
                return position[a.last()] < position[b.last()];
              });
    return std::move(groups_);
  }

 private:
  void Visit(Op* op) {
    std::optional<FusionKind> anchor = AnchorKind(op->kind_id());
    if (anchor == FusionKind::kMatmul) {
      Start(op, *anchor, op);
    } else if (anchor.has_value()) {
      int g =
          ReductionStandsAlone(*op) ? -1 : JoinableProducer(op, op->operand(0));
      if (g >= 0 && groups_[g].anchor == nullptr) {
        Join(g, op);
        groups_[g].kind = *anchor;
        groups_[g].anchor = op;
      } else {
        Start(op, *anchor, op);
      }
    } else if (IsPointwise(*op)) {
      for (Value* v : op->operands()) {
        int g = JoinableProducer(op, v);
        if (g >= 0 && v->type().shape == op->result(0)->type().shape) {
          Join(g, op);
          return;
        }
      }
      Start(op, FusionKind::kElementwise, nullptr);
    }
  }

  // The group whose output `v` is, when `op` may join it through `v`;
  // -1 otherwise.
  int JoinableProducer(const Op* op, const Value* v) const {
    const Op* def = v->defining_op();
    if (def == nullptr) return -1;
    auto it = group_of_.find(def);
    if (it == group_of_.end()) return -1;
    const FusionGroup& group = groups_[it->second];
    if (group.last() != def || !uses_.OnlyUsedBy(v, op)) return -1;
    if (group.anchor != nullptr && ReductionStandsAlone(*group.anchor)) {
      return -1;
    }
    if (group.const_only && !consts_.IsConstOnly(op)) return -1;
    if (static_cast<int64_t>(group.ops.size()) >= options_.max_ops) return -1;
    return it->second;
  }

  void Start(Op* op, FusionKind kind, Op* anchor) {
    FusionGroup group;
    group.ops = {op};
    group.kind = kind;
    group.anchor = anchor;
    group.const_only = consts_.IsConstOnly(op);
    group_of_[op] = static_cast<int>(groups_.size());
    groups_.push_back(std::move(group));
  }

  void Join(int g, Op* op) {
    groups_[g].ops.push_back(op);
    group_of_[op] = g;
  }

  const FusionOptions& options_;
  UseInfo uses_;
  ConstOnlyAnalysis consts_;
  std::vector<FusionGroup> groups_;
  absl::flat_hash_map<const Op*, int> group_of_;
};

}  // namespace

std::vector<FusionGroup> FormFusionGroups(const Graph& graph,
                                          const FusionOptions& options) {
  return GroupBuilder(graph, options).Build(graph);
}

}  // namespace hgc
