#include "passes/mlp_fusion.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/graph_utils.h"
#include "ir/builder.h"
#include "ir/clone.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// The fusion operand index feeding the A side of `op`'s first matmul, or -1
// when the body does not start with a plain matmul reading a parameter.
int LayerInputIndex(const Op& op) {
  Graph* body = FusionBody(op);
  if (body == nullptr || body->ops().empty()) return -1;
  const Op& first = *body->ops().front();
  if (first.kind_id() != OpKind::kMatmul) return -1;
  const Attribute* ta = first.FindAttr("transpose_a");
  if (ta != nullptr && ta->as_bool()) return -1;
  const Value* a = first.operand(0);
  return a->is_param() ? a->index() : -1;
}

// How many fusion ops of the module call each body.
absl::flat_hash_map<const Graph*, int> CallerCounts(const Module& module) {
  absl::flat_hash_map<const Graph*, int> counts;
  for (const auto& g : module.graphs()) {
    for (const auto& op : g->ops()) {
      if (op->kind_id() == OpKind::kFusion) ++counts[FusionBody(*op)];
    }
  }
  return counts;
}

struct Candidate {
  Op* first = nullptr;   // F1
  Op* second = nullptr;  // F2
  int input_index = -1;  // F2's operand reading F1
};

std::optional<Candidate> FindPair(const Graph& graph,
                                  const MlpFusionOptions& options) {
  UseInfo uses(graph);
  absl::flat_hash_map<const Graph*, int> callers =
      CallerCounts(*graph.module());
  for (const auto& op : graph.ops()) {
    if (!IsMatmulGroup(*op)) continue;
    int index = LayerInputIndex(*op);
    if (index < 0) continue;
    Value* input = op->operand(index);
    Op* producer = input->defining_op();
    if (producer == nullptr || !IsMatmulGroup(*producer) ||
        FusionBody(*producer) == nullptr || !uses.OnlyUsedBy(input, op.get())) {
      continue;
    }
    const TensorType& t = input->type();
    if (t.rank() != 2 || t.NumElements() > options.max_intermediate_bytes / 4) {
      continue;
    }
    // Bodies are rewritten in place: each must have this one caller.
    if (FusionBody(*op) == FusionBody(*producer) ||
        callers[FusionBody(*op)] != 1 || callers[FusionBody(*producer)] != 1) {
      continue;
    }
    return Candidate{producer, op.get(), index};
  }
  return std::nullopt;
}

// Appends F2's body to F1's and replaces both ops by one "mlp" fusion.
absl::Status Merge(Graph& graph, const Candidate& c) {
  Module& module = *graph.module();
  Graph* b1 = FusionBody(*c.first);
  Graph* b2 = FusionBody(*c.second);
  // Names already used in b1: copies whose names collide are renamed by the
  // printer instead.
  absl::flat_hash_set<std::string> names;
  for (const auto& p : b1->params()) names.insert(p->name());
  for (const auto& op : b1->ops()) names.insert(op->result(0)->name());
  auto keep_name = [&](Value* v, const std::string& name) {
    if (!name.empty() && names.insert(name).second) {
      v->set_name(name);
    } else {
      v->set_name("");
    }
  };

  std::vector<Value*> operands = c.first->operands();
  absl::flat_hash_map<const Value*, Value*> map;
  for (int j = 0; j < c.second->num_operands(); ++j) {
    const Value* p = b2->param(j);
    if (j == c.input_index) {
      map[p] = b1->results()[0];
      continue;
    }
    Value* external = c.second->operand(j);
    // An operand both layers read becomes one parameter.
    Value* param = nullptr;
    for (size_t k = 0; k < operands.size(); ++k) {
      if (operands[k] == external) param = b1->param(static_cast<int>(k));
    }
    if (param == nullptr) {
      param = b1->AddParam("", p->type(), p->is_const(), p->loc());
      keep_name(param, p->name());
      operands.push_back(external);
    }
    map[p] = param;
  }
  for (const auto& op : b2->ops()) {
    std::vector<Value*> inputs;
    for (const Value* v : op->operands()) inputs.push_back(map.at(v));
    Op* copy = CloneOp(*op, *b1, nullptr, std::move(inputs));
    keep_name(copy->result(0), op->result(0)->name());
    map[op->result(0)] = copy->result(0);
  }
  b1->SetResults({map.at(b2->results()[0])}, b2->return_loc());
  b1->SetDeclaredResultTypes(b2->declared_result_types());

  AttrMap attrs = {
      {"body", Attribute::Symbol(b1->name())},
      {"kind",
       Attribute::String(std::string(FusionKindName(FusionKind::kMlp)))}};
  Value* old = c.second->result(0);
  HGC_ASSIGN_OR_RETURN(
      Value * merged,
      Builder(&graph, c.second)
          .Create("fusion", std::move(operands), std::move(attrs),
                  {old->type()}, c.first->loc()));
  merged->set_name(old->name());
  old->set_name("");
  graph.ReplaceAllUsesWith(old, merged);
  graph.Erase(c.second);
  graph.Erase(c.first);
  module.EraseGraph(b2);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> FuseMlpLayers(Graph& graph,
                                  const MlpFusionOptions& options) {
  if (graph.module() == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "mlp-fusion: graph @", graph.name(), " belongs to no module"));
  }
  // One merge per round keeps the use information exact; rounds are as many
  // as layers, each linear in the graph.
  int merges = 0;
  while (std::optional<Candidate> c = FindPair(graph, options)) {
    HGC_RETURN_IF_ERROR(Merge(graph, *c));
    ++merges;
  }
  return merges;
}

std::vector<PassOptionInfo> MlpFusionPass::options() const {
  return {{"max-intermediate-bytes", "int",
           absl::StrCat(options_.max_intermediate_bytes),
           "merge layers only when M*N*4 of the intermediate fits this"}};
}

absl::Status MlpFusionPass::SetOption(absl::string_view key,
                                      absl::string_view value) {
  if (key == "max-intermediate-bytes") {
    HGC_ASSIGN_OR_RETURN(
        options_.max_intermediate_bytes,
        ParseIntOption(*this, key, value, 0, int64_t{1} << 40));
    return absl::OkStatus();
  }
  return UnknownPassOption(*this, key);
}

absl::StatusOr<bool> MlpFusionPass::Run(Module& module) {
  int merges = 0;
  for (Graph* graph : TopLevelGraphs(module)) {
    HGC_ASSIGN_OR_RETURN(int n, FuseMlpLayers(*graph, options_));
    merges += n;
  }
  return merges > 0;
}

}  // namespace hgc
