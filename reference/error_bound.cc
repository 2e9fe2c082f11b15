#include "reference/error_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/ops/op_helpers.h"
#include "runtime/portable/kernels.h"
#include "reference/op_bounds.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

constexpr int kMaxFusionDepth = 64;

std::string ValueLabel(const Value* v) {
  return v->name().empty() ? std::string("<unnamed>")
                           : absl::StrCat("%", v->name());
}

absl::StatusOr<BoundedResults> InterpretAt(const Graph& graph,
                                           absl::Span<const Tensor> inputs,
                                           absl::Span<const Tensor> bounds,
                                           const InterpretOptions& options,
                                           int depth);

// A fusion op: its body graph with the operands' bounds.
absl::StatusOr<BoundedResults> FusionBody(const Op& op,
                                          absl::Span<const Tensor> xs,
                                          absl::Span<const Tensor> es,
                                          const InterpretOptions& options,
                                          int depth) {
  const Attribute* body_attr = op.FindAttr("body");
  const Module* module = op.graph() ? op.graph()->module() : nullptr;
  const Graph* body = body_attr != nullptr && body_attr->is_symbol() && module
                          ? module->FindGraph(body_attr->as_symbol())
                          : nullptr;
  if (body == nullptr) {
    return absl::InvalidArgumentError(
        "'fusion' needs a body graph of the module holding it");
  }
  if (depth >= kMaxFusionDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("fusion bodies nest more than ", kMaxFusionDepth,
                     " deep (at @", body->name(), ")"));
  }
  HGC_ASSIGN_OR_RETURN(BoundedResults r,
                       InterpretAt(*body, xs, es, options, depth + 1));
  if (r.values.size() != 1 || r.values[0].type() != op.result(0)->type()) {
    return absl::InvalidArgumentError(
        absl::StrCat("fusion body @", body->name(), " does not return one ",
                     op.result(0)->type().ToString()));
  }
  return r;
}

absl::StatusOr<BoundedResults> InterpretAt(const Graph& graph,
                                           absl::Span<const Tensor> inputs,
                                           absl::Span<const Tensor> bounds,
                                           const InterpretOptions& options,
                                           int depth) {
  if (static_cast<int>(inputs.size()) != graph.num_params()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph @", graph.name(), " takes ", graph.num_params(),
                     " inputs, but ", inputs.size(), " were given"));
  }
  struct Entry {
    Tensor value, bound;
  };
  absl::flat_hash_map<const Value*, Entry> values;
  for (int i = 0; i < graph.num_params(); ++i) {
    const Value* param = graph.param(i);
    if (inputs[i].type() != param->type() || inputs[i].raw() == nullptr ||
        inputs[i].num_elements() != param->type().NumElements()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " for parameter ", ValueLabel(param),
                       " has type ", inputs[i].type().ToString(),
                       " or no data, expected ", param->type().ToString()));
    }
    values[param] = {inputs[i], bounds.empty() ? Tensor() : bounds[i]};
  }
  const absl::flat_hash_map<const Value*, const Op*> last_use =
      portable::LastUses(graph);

  std::vector<Tensor> xs, es;
  int op_index = -1;
  for (const auto& op_ptr : graph.ops()) {
    const Op& op = *op_ptr;
    ++op_index;
    const std::string context = portable::OpContext(op, op_index);
    auto with_context = [&](const absl::Status& s) {
      return absl::Status(s.code(), absl::StrCat(context, ": ", s.message()));
    };
    xs.clear();
    es.clear();
    for (int i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      auto it = v == nullptr ? values.end() : values.find(v);
      if (it == values.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            context, ": operand ", i, " is not defined before its use"));
      }
      xs.push_back(it->second.value);
      es.push_back(it->second.bound);
    }
    Entry entry;
    if (op.kind_id() == OpKind::kFusion && op.num_results() == 1) {
      absl::StatusOr<BoundedResults> r = FusionBody(op, xs, es, options, depth);
      if (!r.ok()) return with_context(r.status());
      entry = {std::move(r->values[0]), std::move(r->bounds[0])};
    } else {
      absl::StatusOr<Tensor> value = EvaluateOp(op, xs, options);
      if (!value.ok()) return with_context(value.status());
      absl::StatusOr<Tensor> bound =
          reference::OpBound(op, xs, es, *value, options);
      if (!bound.ok()) return with_context(bound.status());
      entry.bound = reference::FinishBound(*std::move(bound), *value);
      entry.value = *std::move(value);
    }
    values[op.result(0)] = std::move(entry);
    for (const Value* v : op.operands()) {
      auto it = last_use.find(v);
      if (it != last_use.end() && it->second == &op) values.erase(v);
    }
  }
  BoundedResults results;
  for (const Value* v : graph.results()) {
    auto it = v == nullptr ? values.end() : values.find(v);
    if (it == values.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "graph @", graph.name(), " returns ",
          v == nullptr ? "<null>" : ValueLabel(v), ", which is never defined"));
    }
    results.values.push_back(it->second.value);
    results.bounds.push_back(it->second.bound);
  }
  return results;
}

}  // namespace

double UnitRoundoff(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 0x1p-24;
    case DType::kF16:
      return 0x1p-11;
    case DType::kBF16:
      return 0x1p-8;
    default:
      return 0;
  }
}

absl::StatusOr<BoundedResults> InterpretWithErrorBounds(
    const Graph& graph, absl::Span<const Tensor> inputs,
    const InterpretOptions& options) {
  return InterpretAt(graph, inputs, {}, options, /*depth=*/0);
}

}  // namespace hgc
