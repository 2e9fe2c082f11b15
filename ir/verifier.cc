#include "ir/verifier.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/op_registry.h"
#include "support/diagnostics.h"

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
  return absl::OkStatus();
}

}  // namespace hgc
