#include "passes/fusion.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/builder.h"
#include "ir/clone.h"
#include "passes/const_only.h"
#include "passes/graph_utils.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

class Outliner {
 public:
  Outliner(Graph& graph, const FusionOptions& options)
      : graph_(graph),
        module_(*graph.module()),
        options_(options),
        consts_(graph) {}

  // Outlines `group`: builds its body, inserts the fusion op before the
  // group's last op and records the replacement of the group's output.
  absl::Status Outline(const FusionGroup& group) {
    Graph* body = module_.AddGraph(
        FreshGraphName(module_, absl::StrCat(graph_.name(), "_fused"),
                       &next_body_),
        group.ops.front()->loc());
    absl::flat_hash_map<const Value*, Value*> inside;
    std::vector<Value*> externals;
    for (const Op* op : group.ops) {
      std::vector<Value*> operands;
      for (Value* v : op->operands()) {
        auto it = inside.find(v);
        if (it == inside.end()) {
          it = inside.emplace(v, Import(v, *body, externals)).first;
        }
        operands.push_back(it->second);
      }
      Op* copy = CloneOp(*op, *body, nullptr, std::move(operands));
      inside[op->result(0)] = copy->result(0);
    }
    Value* output = group.last()->result(0);
    body->SetResults({inside.at(output)}, group.last()->loc());
    body->SetDeclaredResultTypes({output->type()});

    for (Value*& v : externals) v = replacer_.Resolve(v);
    AttrMap attrs = {{"body", Attribute::Symbol(body->name())},
                     {"kind", Attribute::String(group.kind)}};
    Builder builder(&graph_, group.last());
    HGC_ASSIGN_OR_RETURN(
        Value * fused,
        builder.Create("fusion", std::move(externals), std::move(attrs),
                       {output->type()}, group.ops.front()->loc()));
    fused->set_name(output->name());
    output->set_name("");
    replacer_.Replace(output, fused);
    return absl::OkStatus();
  }

  // Points every remaining use at the fusion results and erases the
  // outlined ops (and literal constants nothing reads any more).
  void Finish(const std::vector<FusionGroup>& groups) {
    for (const auto& op : graph_.ops()) replacer_.RemapOperands(*op);
    replacer_.RemapResults(graph_);
    for (const FusionGroup& group : groups) {
      for (auto it = group.ops.rbegin(); it != group.ops.rend(); ++it) {
        graph_.Erase(*it);
      }
    }
    EraseDeadOps(graph_);
  }

 private:
  // The body-side value for external `v`: a copy of a small literal
  // constant, or a new parameter.
  Value* Import(Value* v, Graph& body, std::vector<Value*>& externals) {
    const Op* c = LiteralConstantOp(v);
    if (c != nullptr &&
        v->type().NumElements() <= options_.inline_constant_elements) {
      return CloneOp(*c, body, nullptr, {})->result(0);
    }
    externals.push_back(v);
    // An earlier group's output now carries its name on the fusion result.
    return body.AddParam(replacer_.Resolve(v)->name(), v->type(),
                         consts_.IsConstOnly(v), v->loc());
  }

  Graph& graph_;
  Module& module_;
  const FusionOptions& options_;
  ConstOnlyAnalysis consts_;
  ValueReplacer replacer_;
  int next_body_ = 0;
};

}  // namespace

absl::StatusOr<int> FuseGraph(Graph& graph, const FusionOptions& options) {
  if (graph.module() == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("fusion: graph @", graph.name(), " belongs to no module"));
  }
  std::vector<FusionGroup> groups = FormFusionGroups(graph, options);
  if (groups.empty()) return 0;
  Outliner outliner(graph, options);
  for (const FusionGroup& group : groups) {
    HGC_RETURN_IF_ERROR(outliner.Outline(group));
  }
  outliner.Finish(groups);
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
