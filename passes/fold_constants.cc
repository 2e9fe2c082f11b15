#include "passes/fold_constants.h"

#include <cmath>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/graph_utils.h"
#include "ir/builder.h"
#include "runtime/portable/evaluate.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

Attribute Element(const Tensor& t, int64_t i) {
  double v = t.GetDouble(i);
  if (t.dtype() == DType::kBool) return Attribute::Bool(v != 0);
  if (IsFloat(t.dtype())) return Attribute::Float(v);
  return Attribute::Int(static_cast<int64_t>(v));
}

bool AllOperandsLiteral(const Op& op) {
  if (op.num_operands() == 0) return false;
  for (const Value* v : op.operands()) {
    if (LiteralConstantOp(v) == nullptr) return false;
  }
  return true;
}

}  // namespace

std::optional<Attribute> ConstantValueAttr(const Tensor& t) {
  int64_t n = t.num_elements();
  bool splat = n > 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = t.GetDouble(i);
    if (!std::isfinite(v)) return std::nullopt;
    // Bit-level equality would split -0 from 0; values compare equal, and a
    // splat of 0 for a tensor holding -0 would change a sign: compare signs.
    if (v != t.GetDouble(0) ||
        std::signbit(v) != std::signbit(t.GetDouble(0))) {
      splat = false;
    }
  }
  if (splat) return Element(t, 0);
  Attribute::List list;
  list.reserve(n);
  for (int64_t i = 0; i < n; ++i) list.push_back(Element(t, i));
  return Attribute::MakeList(std::move(list));
}

absl::StatusOr<int> FoldConstantsInGraph(Graph& graph,
                                         const FoldConstantsOptions& options) {
  ValueReplacer replacer;
  // Each literal is materialized once, however many ops read it.
  absl::flat_hash_map<const Value*, Tensor> literals;
  auto literal = [&](const Value* v) -> absl::StatusOr<Tensor> {
    auto it = literals.find(v);
    if (it != literals.end()) return it->second;
    HGC_ASSIGN_OR_RETURN(Tensor t, portable::EvaluateOp(*v->defining_op(), {}));
    literals[v] = t;
    return t;
  };
  int folded = 0;
  for (Op* op : graph.OpsSnapshot()) {
    replacer.RemapOperands(*op);
    if (op->kind_id() == OpKind::kConstant || op->num_results() != 1 ||
        !AllOperandsLiteral(*op) ||
        op->result(0)->type().NumElements() > options.max_elements) {
      continue;
    }
    bool small_operands = true;
    for (const Value* v : op->operands()) {
      small_operands =
          small_operands && v->type().NumElements() <= options.max_elements;
    }
    if (!small_operands) continue;
    std::vector<Tensor> operands;
    bool ok = true;
    for (const Value* v : op->operands()) {
      absl::StatusOr<Tensor> t = literal(v);
      if (!t.ok()) {
        ok = false;
        break;
      }
      operands.push_back(*std::move(t));
    }
    if (!ok) continue;
    // An op the kernels cannot evaluate (too big, say) stays for run
    // time, where the same error would be reported with its location.
    absl::StatusOr<Tensor> result = portable::EvaluateOp(*op, operands);
    if (!result.ok()) continue;
    std::optional<Attribute> value = ConstantValueAttr(*result);
    if (!value.has_value()) continue;
    Builder builder(&graph, op);
    HGC_ASSIGN_OR_RETURN(Value * c,
                         builder.Create("constant", {}, {{"value", *value}},
                                        {op->result(0)->type()}, op->loc()));
    c->set_name(op->result(0)->name());
    op->result(0)->set_name("");
    literals[c] = *std::move(result);
    replacer.Replace(op->result(0), c);
    ++folded;
  }
  if (folded > 0) {
    replacer.RemapResults(graph);
    EraseDeadOps(graph);
  }
  return folded;
}

std::vector<PassOptionInfo> FoldConstantsPass::options() const {
  return {{"max-elements", "int", absl::StrCat(options_.max_elements),
           "fold only results with at most this many elements"}};
}

absl::Status FoldConstantsPass::SetOption(absl::string_view key,
                                          absl::string_view value) {
  if (key == "max-elements") {
    HGC_ASSIGN_OR_RETURN(
        options_.max_elements,
        ParseIntOption(*this, key, value, 0, int64_t{1} << 40));
    return absl::OkStatus();
  }
  return UnknownPassOption(*this, key);
}

absl::StatusOr<bool> FoldConstantsPass::Run(Module& module) {
  bool changed = false;
  for (const auto& g : module.graphs()) {
    HGC_ASSIGN_OR_RETURN(int folded, FoldConstantsInGraph(*g, options_));
    changed = changed || folded > 0;
  }
  return changed;
}

}  // namespace hgc
