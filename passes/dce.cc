#include "passes/dce.h"

#include <string>
#include <vector>

#include "analysis/graph_utils.h"

namespace hgc {
namespace {

void PushBody(const AttrMap& fusion_attrs, std::vector<std::string>& names) {
  auto it = fusion_attrs.find("body");
  if (it != fusion_attrs.end() && it->second.is_symbol()) {
    names.push_back(it->second.as_symbol());
  }
}

}  // namespace

int EliminateDeadCode(Module& module) {
  int erased = 0;
  std::vector<AttrMap> dead_calls;
  for (const auto& g : module.graphs()) erased += EraseDeadOps(*g, &dead_calls);
  // Only bodies of erased fusion ops are candidates for removal: a graph
  // that nothing calls may be a user's entry graph.
  std::vector<std::string> worklist;
  for (const AttrMap& attrs : dead_calls) PushBody(attrs, worklist);
  while (!worklist.empty()) {
    std::string name = std::move(worklist.back());
    worklist.pop_back();
    Graph* body = module.FindGraph(name);
    if (body == nullptr || FusionBodies(module).contains(body)) continue;
    // The fusion ops inside die with the body; their bodies may follow.
    for (const auto& op : body->ops()) {
      if (op->kind_id() == OpKind::kFusion) PushBody(op->attrs(), worklist);
    }
    module.EraseGraph(body);
    ++erased;
  }
  return erased;
}

}  // namespace hgc
