#include "passes/prepack_weights.h"

#include <set>
#include <vector>

#include "passes/const_only.h"
#include "passes/graph_utils.h"

namespace hgc {
namespace {

bool IsLayerGroup(const Op& op) {
  if (op.kind() != "fusion") return false;
  const Attribute* kind = op.FindAttr("kind");
  return kind != nullptr && kind->is_string() &&
         (kind->as_string() == "matmul" || kind->as_string() == "mlp");
}

// Body parameters read only as the B operand of matmuls.
std::set<int> WeightParams(const Graph& body) {
  UseInfo uses(body);
  std::set<int> out;
  for (const auto& p : body.params()) {
    const std::vector<Op*>& users = uses.Users(p.get());
    if (users.empty() || uses.IsReturned(p.get())) continue;
    bool only_b = true;
    for (const Op* user : users) {
      only_b = only_b && user->kind() == "matmul" &&
               user->operand(0) != p.get() && user->operand(1) == p.get();
    }
    if (only_b) out.insert(p->index());
  }
  return out;
}

}  // namespace

std::string PackedLayoutFor(DType dtype) {
  switch (dtype) {
    case DType::kBF16:
    case DType::kF16:
      return "vnni2";
    case DType::kS8:
    case DType::kU8:
      return "vnni4";
    default:
      return "plain";
  }
}

bool PrepackWeightsInGraph(Graph& graph) {
  ConstOnlyAnalysis consts(graph);
  bool changed = false;
  for (const auto& op : graph.ops()) {
    if (!IsLayerGroup(*op)) continue;
    const Graph* body = FusionBody(*op);
    if (body == nullptr) continue;
    std::string layout;
    std::vector<int64_t> packed;
    for (int i : WeightParams(*body)) {
      const Value* w = op->operand(i);
      if (!consts.IsConstOnly(w)) continue;
      std::string l = PackedLayoutFor(w->type().dtype);
      if (layout.empty()) layout = l;
      if (l == layout) packed.push_back(i);
    }
    AttrMap attrs = op->attrs();
    attrs.erase("b_layout");
    attrs.erase("packed_operands");
    if (!packed.empty()) {
      attrs["b_layout"] = Attribute::String(layout);
      attrs["packed_operands"] = Attribute::IntList(packed);
    }
    if (attrs != op->attrs()) {
      op->mutable_attrs() = std::move(attrs);
      changed = true;
    }
  }
  return changed;
}

absl::StatusOr<bool> PrepackWeightsPass::Run(Module& module) {
  bool changed = false;
  for (Graph* graph : TopLevelGraphs(module)) {
    changed = PrepackWeightsInGraph(*graph) || changed;
  }
  return changed;
}

}  // namespace hgc
