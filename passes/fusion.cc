#include "passes/fusion.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/graph_utils.h"
#include "ir/clone.h"
#include "passes/outliner.h"
#include "support/status_macros.h"

namespace hgc {

absl::StatusOr<int> FuseGraph(Graph& graph, const FusionOptions& options) {
  if (graph.module() == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("fusion: graph @", graph.name(), " belongs to no module"));
  }
  std::vector<FusionGroup> groups = FormFusionGroups(graph, options);
  if (groups.empty()) return 0;
  Outliner outliner(graph, "fused", options.inline_constant_elements);
  for (const FusionGroup& group : groups) {
    HGC_RETURN_IF_ERROR(outliner.Outline(group.ops, group.kind));
  }
  outliner.Finish();
  return static_cast<int>(groups.size());
}

std::vector<PassOptionInfo> FusionPass::options() const {
  return {{"max-ops", "int", absl::StrCat(options_.max_ops),
           "the most ops in one fused group"},
          {"inline-constant-elements", "int",
           absl::StrCat(options_.inline_constant_elements),
           "copy literal constants up to this size into bodies"}};
}

absl::Status FusionPass::SetOption(absl::string_view key,
                                   absl::string_view value) {
  if (key == "max-ops") {
    HGC_ASSIGN_OR_RETURN(options_.max_ops,
                         ParseIntOption(*this, key, value, 1, 1 << 20));
    return absl::OkStatus();
  }
  if (key == "inline-constant-elements") {
    HGC_ASSIGN_OR_RETURN(
        options_.inline_constant_elements,
        ParseIntOption(*this, key, value, 0, int64_t{1} << 40));
    return absl::OkStatus();
  }
  return UnknownPassOption(*this, key);
}

absl::StatusOr<bool> FusionPass::Run(Module& module) {
  int fused = 0;
  // Bodies made by this run are not revisited: only the graphs that were
  // top-level when it started.
  for (Graph* graph : TopLevelGraphs(module)) {
    HGC_ASSIGN_OR_RETURN(int n, FuseGraph(*graph, options_));
    fused += n;
  }
  return fused > 0;
}

}  // namespace hgc
