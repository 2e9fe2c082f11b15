#include "passes/cse.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/graph_utils.h"
#include "ir/op_registry.h"

namespace hgc {
namespace {

// A string that is equal for two ops exactly when CSE may merge them.
// Operands are identified by address (they are values of the same graph).
std::string OpKey(const Op& op) {
  std::string key = op.kind();
  for (const Value* v : op.operands()) {
    absl::StrAppend(&key, "|", reinterpret_cast<uintptr_t>(v));
  }
  const OpInfo* info = OpRegistry::Get().Find(op.kind_id());
  for (const auto& [name, value] : op.attrs()) {
    const AttrSpec* spec = info ? info->FindAttr(name) : nullptr;
    if (spec && spec->default_value && *spec->default_value == value) continue;
    absl::StrAppend(&key, "|", name, "=", value.ToString());
  }
  for (int i = 0; i < op.num_results(); ++i) {
    absl::StrAppend(&key, "|:", op.result(i)->type().ToString());
  }
  return key;
}

}  // namespace

int EliminateCommonSubexpressions(Graph& graph) {
  ValueReplacer replacer;
  absl::flat_hash_map<std::string, Op*> seen;
  std::vector<Op*> merged;
  for (Op* op : graph.OpsSnapshot()) {
    // Operands first, so that duplicates of duplicates are found in the
    // same sweep.
    replacer.RemapOperands(*op);
    auto [it, inserted] = seen.emplace(OpKey(*op), op);
    if (inserted) continue;
    for (int i = 0; i < op->num_results(); ++i) {
      replacer.Replace(op->result(i), it->second->result(i));
    }
    merged.push_back(op);
  }
  replacer.RemapResults(graph);
  // Every use of a merged op now reads the op it duplicates.
  for (Op* op : merged) graph.Erase(op);
  return static_cast<int>(merged.size());
}

absl::StatusOr<bool> CsePass::Run(Module& module) {
  bool changed = false;
  for (const auto& g : module.graphs()) {
    changed = EliminateCommonSubexpressions(*g) > 0 || changed;
  }
  return changed;
}

}  // namespace hgc
