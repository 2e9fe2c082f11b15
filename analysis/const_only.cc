#include "analysis/const_only.h"

namespace hgc {

absl::flat_hash_set<const Op*> ConstOnlyOps(const Graph& graph) {
  absl::flat_hash_set<const Value*> const_values;
  for (const auto& p : graph.params()) {
    if (p->is_const()) const_values.insert(p.get());
  }
  absl::flat_hash_set<const Op*> ops;
  // Ops are in topological order, so one forward sweep sees every operand's
  // status before its users.
  for (const auto& op : graph.ops()) {
    bool all_const = true;
    for (const Value* v : op->operands()) {
      if (!const_values.contains(v)) {
        all_const = false;
        break;
      }
    }
    if (!all_const) continue;
    if (op->kind_id() != OpKind::kConstant) ops.insert(op.get());
    for (int i = 0; i < op->num_results(); ++i) {
      const_values.insert(op->result(i));
    }
  }
  return ops;
}

bool ConstOnlyAnalysis::IsConstOnly(const Value* v) const {
  if (v->is_param()) return v->is_const();
  const Op* def = v->defining_op();
  return def->kind_id() == OpKind::kConstant || ops_.contains(def);
}

}  // namespace hgc
