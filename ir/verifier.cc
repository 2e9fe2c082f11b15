#include "ir/verifier.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/op_registry.h"
#include "support/diagnostics.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

absl::Status CheckName(absl::flat_hash_set<std::string>& names,
                       const Value& v) {
  if (v.name().empty()) return absl::OkStatus();
  if (!names.insert(v.name()).second) {
    return ErrorAt(v.loc(), absl::StrCat("redefinition of value '%", v.name(),
                                         "'"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyGraph(const Graph& graph) {
  absl::flat_hash_set<const Value*> defined;
  absl::flat_hash_set<std::string> names;
  for (const auto& p : graph.params()) {
    absl::StatusOr<int64_t> count = CheckedNumElements(p->type().shape);
    if (!count.ok()) return ErrorAt(p->loc(), count.status().message());
    absl::Status s = CheckName(names, *p);
    if (!s.ok()) return s;
    defined.insert(p.get());
  }
  for (const auto& op : graph.ops()) {
    for (Value* operand : op->operands()) {
      if (!defined.contains(operand)) {
        return ErrorAt(op->loc(),
                       absl::StrCat("operand '%", operand->name(), "' of '",
                                    op->kind(),
                                    "' is not defined before its use"));
      }
    }
    std::vector<TensorType> operand_types, result_types;
    for (Value* operand : op->operands()) operand_types.push_back(operand->type());
    for (int i = 0; i < op->num_results(); ++i) {
      result_types.push_back(op->result(i)->type());
    }
    absl::StatusOr<std::vector<TensorType>> inferred =
        InferResultTypes(op->kind(), operand_types, op->attrs(), result_types);
    if (!inferred.ok()) return AttachLoc(inferred.status(), op->loc());
    for (int i = 0; i < op->num_results(); ++i) {
      absl::Status s = CheckName(names, *op->result(i));
      if (!s.ok()) return s;
      defined.insert(op->result(i));
    }
  }
  if (graph.results().empty()) {
    return ErrorAt(graph.loc(), absl::StrCat("graph @", graph.name(),
                                             " has no return"));
  }
  const std::vector<TensorType>& declared = graph.declared_result_types();
  if (declared.size() != graph.results().size()) {
    return ErrorAt(graph.return_loc(),
                   absl::StrCat("return has ", graph.results().size(),
                                " value(s) but @", graph.name(), " declares ",
                                declared.size(), " result(s)"));
  }
  for (size_t i = 0; i < declared.size(); ++i) {
    const Value* v = graph.results()[i];
    if (!defined.contains(v)) {
      return ErrorAt(graph.return_loc(),
                     absl::StrCat("returned value '%", v->name(),
                                  "' is not defined in @", graph.name()));
    }
    if (v->type() != declared[i]) {
      return ErrorAt(graph.return_loc(),
                     absl::StrCat("returned value '%", v->name(), "' has type ",
                                  v->type().ToString(), " but @", graph.name(),
                                  " declares ", declared[i].ToString()));
    }
  }
  return absl::OkStatus();
}

namespace {

absl::Status VerifyFusionSignature(const Op& op, const Graph& body) {
  if (body.num_params() != op.num_operands()) {
    return ErrorAt(op.loc(), absl::StrCat("fusion body @", body.name(),
                                          " takes ", body.num_params(),
                                          " parameter(s), but the op has ",
                                          op.num_operands(), " operand(s)"));
  }
  for (int i = 0; i < op.num_operands(); ++i) {
    if (body.param(i)->type() != op.operand(i)->type()) {
      return ErrorAt(
          op.loc(),
          absl::StrCat("operand ", i, " of fusion has type ",
                       op.operand(i)->type().ToString(), " but parameter %",
                       body.param(i)->name(), " of @", body.name(), " is ",
                       body.param(i)->type().ToString()));
    }
  }
  const std::vector<TensorType>& results = body.declared_result_types();
  if (results.size() != 1 || op.num_results() != 1 ||
      results[0] != op.result(0)->type()) {
    return ErrorAt(op.loc(),
                   absl::StrCat("fusion result type ",
                                op.num_results() == 1
                                    ? op.result(0)->type().ToString()
                                    : "?",
                                " does not match the result of @",
                                body.name()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyCalls(const Module& module) {
  // Callees of each graph, then a depth-first search for a cycle.
  absl::flat_hash_map<const Graph*, std::vector<std::pair<const Graph*,
                                                          const Op*>>>
      callees;
  for (const auto& g : module.graphs()) {
    for (const auto& op : g->ops()) {
      if (op->kind_id() != OpKind::kFusion) continue;
      const Attribute* body_attr = op->FindAttr("body");
      if (body_attr == nullptr || !body_attr->is_symbol()) continue;
      const Graph* body = module.FindGraph(body_attr->as_symbol());
      if (body == nullptr) {
        return ErrorAt(op->loc(), absl::StrCat("fusion body @",
                                               body_attr->as_symbol(),
                                               " is not a graph of the module"));
      }
      HGC_RETURN_IF_ERROR(VerifyFusionSignature(*op, *body));
      callees[g.get()].push_back({body, op.get()});
    }
  }
  // 0 = unvisited, 1 = on the stack, 2 = done. Iterative, so that a long
  // chain of bodies cannot overflow the stack.
  absl::flat_hash_map<const Graph*, int> state;
  for (const auto& root : module.graphs()) {
    if (state[root.get()] != 0) continue;
    std::vector<std::pair<const Graph*, size_t>> stack = {{root.get(), 0}};
    state[root.get()] = 1;
    while (!stack.empty()) {
      auto& [g, next] = stack.back();
      const auto& calls = callees[g];
      if (next == calls.size()) {
        state[g] = 2;
        stack.pop_back();
        continue;
      }
      auto [callee, op] = calls[next++];
      if (state[callee] == 1) {
        return ErrorAt(op->loc(), absl::StrCat("fusion body @", callee->name(),
                                               " calls itself (through @",
                                               g->name(), ")"));
      }
      if (state[callee] == 0) {
        state[callee] = 1;
        stack.push_back({callee, 0});
      }
    }
  }
  return absl::OkStatus();
}

absl::Status Verify(const Module& module) {
  if (module.graphs().empty()) {
    return absl::InvalidArgumentError("no graph in module");
  }
  absl::flat_hash_set<std::string> graph_names;
  for (const auto& g : module.graphs()) {
    if (!graph_names.insert(g->name()).second) {
      return ErrorAt(g->loc(), absl::StrCat("redefinition of graph @",
                                            g->name()));
    }
    absl::Status s = VerifyGraph(*g);
    if (!s.ok()) return s;
  }
  return VerifyCalls(module);
}

}  // namespace hgc
