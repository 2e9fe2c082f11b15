#include "passes/outliner.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/builder.h"
#include "ir/clone.h"
#include "support/status_macros.h"

namespace hgc {

Outliner::Outliner(Graph& graph, absl::string_view suffix,
                   int64_t inline_constant_elements)
    : graph_(graph),
      module_(*graph.module()),
      base_(absl::StrCat(graph.name(), "_", suffix)),
      inline_constant_elements_(inline_constant_elements),
      consts_(graph) {}

Value* Outliner::FillBody(const std::vector<Op*>& ops, Graph& body,
                          std::vector<Value*>& externals) {
  // A matmul's operands stay parameters, constants included: its lowering
  // takes them from the group's parameters (a const one prepacked once),
  // and refuses an operand computed inside, which a copied constant is.
  absl::flat_hash_set<const Value*> matmul_operands;
  for (const Op* op : ops) {
    if (op->kind_id() != OpKind::kMatmul) continue;
    for (const Value* v : op->operands()) matmul_operands.insert(v);
  }
  absl::flat_hash_map<const Value*, Value*> inside;
  for (const Op* op : ops) {
    std::vector<Value*> operands;
    for (Value* v : op->operands()) {
      auto it = inside.find(v);
      if (it == inside.end()) {
        it = inside
                 .emplace(v, Import(v, body, externals,
                                    !matmul_operands.contains(v)))
                 .first;
      }
      operands.push_back(it->second);
    }
    Op* copy = CloneOp(*op, body, nullptr, std::move(operands));
    inside[op->result(0)] = copy->result(0);
  }
  Value* output = ops.back()->result(0);
  Value* result = inside.at(output);
  body.SetResults({result}, ops.back()->loc());
  body.SetDeclaredResultTypes({output->type()});
  return result;
}

absl::Status Outliner::Outline(const std::vector<Op*>& ops, FusionKind kind,
                               AttrMap attrs) {
  Graph* body = module_.AddGraph(FreshGraphName(module_, base_, &next_body_),
                                 ops.front()->loc());
  std::vector<Value*> externals;
  FillBody(ops, *body, externals);
  Value* output = ops.back()->result(0);
  for (Value*& v : externals) v = replacer_.Resolve(v);
  attrs["body"] = Attribute::Symbol(body->name());
  attrs["kind"] = Attribute::String(std::string(FusionKindName(kind)));
  Builder builder(&graph_, ops.back());
  HGC_ASSIGN_OR_RETURN(
      Value * fused,
      builder.Create("fusion", std::move(externals), std::move(attrs),
                     {output->type()}, ops.front()->loc()));
  fused->set_name(output->name());
  output->set_name("");
  replacer_.Replace(output, fused);
  outlined_.push_back(ops);
  return absl::OkStatus();
}

void Outliner::Finish() {
  for (const auto& op : graph_.ops()) replacer_.RemapOperands(*op);
  replacer_.RemapResults(graph_);
  for (const std::vector<Op*>& ops : outlined_) {
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) graph_.Erase(*it);
  }
  outlined_.clear();
  EraseDeadOps(graph_);
}

// The body-side value for external `v`: a copy of a small literal constant
// (where `may_copy`), or a new parameter.
Value* Outliner::Import(Value* v, Graph& body, std::vector<Value*>& externals,
                        bool may_copy) {
  const Op* c = LiteralConstantOp(v);
  if (may_copy && c != nullptr &&
      v->type().NumElements() <= inline_constant_elements_) {
    return CloneOp(*c, body, nullptr, {})->result(0);
  }
  externals.push_back(v);
  // An earlier group's output now carries its name on the fusion result.
  return body.AddParam(replacer_.Resolve(v)->name(), v->type(),
                       consts_.IsConstOnly(v), v->loc());
}

}  // namespace hgc
