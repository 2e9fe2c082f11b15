#include "passes/widen_f16_matmul.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/graph_utils.h"
#include "ir/builder.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

bool IsF16Matmul(const Op& op) {
  return op.kind_id() == OpKind::kMatmul &&
         op.operand(0)->type().dtype == DType::kF16 &&
         op.operand(1)->type().dtype == DType::kF16;
}

// The name of the value widening (or computing in f32) `v`: "f32_<name>"
// (an identifier even when <name> is a number).
std::string Wide(FreshNames& names, const Value* v) {
  return names.Make(absl::StrCat("f32_", v->name()));
}

// Rewrites `op` (an f16 matmul of `graph`); its old result is left unused.
// `widened` holds each operand's cast made so far: an operand several
// matmuls read (x times Wq, Wk, Wv) is widened once.
absl::Status Widen(Graph& graph, Op* op, FreshNames& names,
                   absl::flat_hash_map<Value*, Value*>& widened) {
  Builder b(&graph, op);
  const AttrMap to_f32 = {{"to", Attribute::Type(DType::kF32)}};
  std::vector<Value*> wide;
  for (Value* x : op->operands()) {
    // Before the first matmul reading x: the ones after it see it too.
    Value*& w = widened[x];
    if (w == nullptr) {
      HGC_ASSIGN_OR_RETURN(w, b.Create("cast", {x}, to_f32));
      w->set_name(Wide(names, x));
    }
    wide.push_back(w);
  }
  HGC_ASSIGN_OR_RETURN(Value * c,
                       b.Create("matmul", wide, op->attrs(), {}, op->loc()));
  Value* old = op->result();
  c->set_name(Wide(names, old));
  HGC_ASSIGN_OR_RETURN(
      Value * y, b.Create("cast", {c}, {{"to", Attribute::Type(DType::kF16)}},
                          {}, op->loc()));
  graph.ReplaceAllUsesWith(old, TakeName(y, old));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<int> WidenF16Matmuls(Module& module) {
  int rewritten = 0;
  for (Graph* graph : TopLevelGraphs(module)) {
    FreshNames names(*graph);
    absl::flat_hash_map<Value*, Value*> widened;
    for (Op* op : graph->OpsSnapshot()) {
      if (!IsF16Matmul(*op)) continue;
      HGC_RETURN_IF_ERROR(Widen(*graph, op, names, widened));
      graph->Erase(op);
      ++rewritten;
    }
  }
  return rewritten;
}

}  // namespace hgc
