#include "ir/clone.h"

#include <utility>

#include "absl/container/flat_hash_map.h"

namespace hgc {

Op* CloneOp(const Op& op, Graph& dst, Op* before,
            std::vector<Value*> operands) {
  std::vector<TensorType> types;
  for (int i = 0; i < op.num_results(); ++i) {
    types.push_back(op.result(i)->type());
  }
  Op* copy = dst.InsertOp(before, op.kind(), std::move(operands), op.attrs(),
                          std::move(types), op.loc());
  for (int i = 0; i < op.num_results(); ++i) {
    copy->result(i)->set_name(op.result(i)->name());
    copy->result(i)->set_loc(op.result(i)->loc());
  }
  return copy;
}

Module CloneModule(const Module& module) {
  Module copy;
  for (const auto& g : module.graphs()) {
    Graph* dst = copy.AddGraph(g->name(), g->loc());
    absl::flat_hash_map<const Value*, Value*> map;
    for (const auto& p : g->params()) {
      map[p.get()] =
          dst->AddParam(p->name(), p->type(), p->is_const(), p->loc());
    }
    for (const auto& op : g->ops()) {
      std::vector<Value*> operands;
      for (const Value* v : op->operands()) operands.push_back(map.at(v));
      Op* c = CloneOp(*op, *dst, nullptr, std::move(operands));
      for (int i = 0; i < op->num_results(); ++i) {
        map[op->result(i)] = c->result(i);
      }
    }
    std::vector<Value*> results;
    for (const Value* v : g->results()) results.push_back(map.at(v));
    dst->SetResults(std::move(results), g->return_loc());
    dst->SetDeclaredResultTypes(g->declared_result_types());
  }
  for (const std::string& note : module.notes()) copy.AddNote(note);
  return copy;
}

}  // namespace hgc
