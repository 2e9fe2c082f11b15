#include "runtime/portable/evaluate.h"

#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/op_kind.h"
#include "ir/op_registry.h"
#include "runtime/portable/kernels.h"
#include "support/status_macros.h"

namespace hgc {
namespace portable {
namespace {

KernelFn UnaryKernel(UnaryKind kind) {
  switch (kind) {
#define HGC_MATH_OP_KIND(e, ...) case UnaryKind::e:
#include "ir/op_kinds.def"
    case UnaryKind::kRelu:
    case UnaryKind::kNeg:
    case UnaryKind::kAbs:
      return EvalUnary;
    case UnaryKind::kGelu:
      return EvalGelu;
    case UnaryKind::kClamp:
      return EvalClamp;
  }
  return nullptr;
}

// The kernel that evaluates `kind`; nullptr for fusion (evaluated through
// its body) and kUnknown.
KernelFn KernelFor(OpKind kind) {
  switch (OpClassOf(kind)) {
    case OpClass::kMatmul:
      return EvalMatmul;
    case OpClass::kBinary:
      return EvalBinary;
    case OpClass::kUnary:
      return UnaryKernel(*AsUnary(kind));
    case OpClass::kComparison:
      return EvalCompare;
    case OpClass::kSelect:
      return EvalSelect;
    case OpClass::kCast:
      return EvalCast;
    case OpClass::kQuant:
      return kind == OpKind::kQuantize ? EvalQuantize : EvalDequantize;
    case OpClass::kNormalization:
      return kind == OpKind::kSoftmax ? EvalSoftmax : EvalLayernorm;
    case OpClass::kReduction:
      return EvalReduce;
    case OpClass::kShape:
      switch (kind) {
        case OpKind::kReshape:
          return EvalReshape;
        case OpKind::kTranspose:
          return EvalTranspose;
        case OpKind::kConcat:
          return EvalConcat;
        case OpKind::kSlice:
          return EvalSlice;
        default:
          return nullptr;
      }
    case OpClass::kConstant:
      return EvalConstant;
    case OpClass::kFusion:
    case OpClass::kUnknown:
      return nullptr;
  }
  return nullptr;
}

// A tensor that really holds the data its type promises (a default-
// constructed Tensor does not).
absl::Status CheckTensor(const Tensor& t, absl::string_view what) {
  if (t.raw() == nullptr || t.num_elements() != t.type().NumElements()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " of type ", t.type().ToString(), " holds no data"));
  }
  return absl::OkStatus();
}

std::string ValueLabel(const Value* v) {
  return v->name().empty() ? std::string("<unnamed>")
                           : absl::StrCat("%", v->name());
}

absl::Status WithContext(const absl::Status& s, absl::string_view context) {
  return absl::Status(s.code(), absl::StrCat(context, ": ", s.message()));
}

// How deeply fusion bodies may nest. The verifier rejects cyclic bodies; the
// bound keeps an unverified module from recursing without limit.
constexpr int kMaxFusionDepth = 64;

absl::StatusOr<std::vector<Tensor>> EvaluateGraphAt(
    const Graph& graph, absl::Span<const Tensor> inputs, const Options& options,
    int depth);

// A fusion op runs its body graph, found through the module holding the
// op's graph, on its operands.
absl::StatusOr<Tensor> EvaluateFusion(const Op& op,
                                      absl::Span<const Tensor> operands,
                                      const Options& options, int depth) {
  const Attribute* body_attr = op.FindAttr("body");
  const Module* module = op.graph() ? op.graph()->module() : nullptr;
  if (body_attr == nullptr || !body_attr->is_symbol() || module == nullptr) {
    return absl::InvalidArgumentError(
        "'fusion' needs a body graph of the module holding it");
  }
  const Graph* body = module->FindGraph(body_attr->as_symbol());
  if (body == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "fusion body @", body_attr->as_symbol(), " is not in the module"));
  }
  if (depth >= kMaxFusionDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("fusion bodies nest more than ", kMaxFusionDepth,
                     " deep (at @", body->name(), ")"));
  }
  HGC_ASSIGN_OR_RETURN(std::vector<Tensor> results,
                       EvaluateGraphAt(*body, operands, options, depth + 1));
  if (results.size() != 1 || results[0].type() != op.result(0)->type()) {
    return absl::InvalidArgumentError(
        absl::StrCat("fusion body @", body->name(), " does not return one ",
                     op.result(0)->type().ToString()));
  }
  return std::move(results[0]);
}

absl::StatusOr<Tensor> EvaluateOpAt(const Op& op,
                                    absl::Span<const Tensor> operands,
                                    const Options& options, int depth);

}  // namespace

bool HasKernel(absl::string_view kind) {
  // fusion has no kernel of its own: EvaluateOp(const Op&) runs its body.
  const OpKind id = OpKindFromName(kind).value_or(OpKind::kUnknown);
  return id == OpKind::kFusion || KernelFor(id) != nullptr;
}

absl::StatusOr<Tensor> EvaluateOp(absl::string_view kind,
                                  absl::Span<const Tensor> operands,
                                  const AttrMap& attrs,
                                  const std::optional<TensorType>& result_type,
                                  const Options& options) {
  std::vector<TensorType> operand_types;
  operand_types.reserve(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    HGC_RETURN_IF_ERROR(CheckTensor(
        operands[i], absl::StrCat("operand ", i, " of '", kind, "'")));
    operand_types.push_back(operands[i].type());
  }
  std::vector<TensorType> declared;
  if (result_type.has_value()) declared.push_back(*result_type);
  HGC_ASSIGN_OR_RETURN(std::vector<TensorType> types,
                       InferResultTypes(kind, operand_types, attrs, declared));
  if (types.size() != 1) {
    return absl::UnimplementedError(
        absl::StrCat("the portable kernels support single-result ops; '", kind,
                     "' has ", types.size()));
  }
  const OpKind id = OpKindFromName(kind).value_or(OpKind::kUnknown);
  const KernelFn kernel = KernelFor(id);
  if (id == OpKind::kFusion) {
    return absl::UnimplementedError(
        "'fusion' is evaluated through its op (EvaluateOp(const Op&) or "
        "EvaluateGraph), which knows the module holding its body");
  }
  if (kernel == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "the portable kernels have no kernel for op '", kind, "'"));
  }
  KernelArgs args{id, attrs, operands, types[0], options.max_tensor_bytes};
  return kernel(args);
}

absl::StatusOr<Tensor> EvaluateOp(const Op& op,
                                  absl::Span<const Tensor> operands,
                                  const Options& options) {
  return EvaluateOpAt(op, operands, options, /*depth=*/0);
}

absl::StatusOr<std::vector<Tensor>> EvaluateGraph(
    const Graph& graph, absl::Span<const Tensor> inputs,
    const Options& options) {
  return EvaluateGraphAt(graph, inputs, options, /*depth=*/0);
}

namespace {

absl::StatusOr<Tensor> EvaluateOpAt(const Op& op,
                                    absl::Span<const Tensor> operands,
                                    const Options& options, int depth) {
  if (static_cast<int>(operands.size()) != op.num_operands()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", op.kind(), "' has ", op.num_operands(), " operands, but ",
        operands.size(), " tensors were given"));
  }
  for (int i = 0; i < op.num_operands(); ++i) {
    if (op.operand(i) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("operand ", i, " of '", op.kind(), "' is null"));
    }
    if (operands[i].type() != op.operand(i)->type()) {
      return absl::InvalidArgumentError(
          absl::StrCat("operand ", i, " of '", op.kind(), "' must be ",
                       op.operand(i)->type().ToString(), ", found ",
                       operands[i].type().ToString()));
    }
  }
  if (op.num_results() != 1) {
    return absl::UnimplementedError(
        absl::StrCat("the portable kernels support single-result ops; '",
                     op.kind(), "' has ", op.num_results()));
  }
  if (op.kind_id() == OpKind::kFusion) {
    return EvaluateFusion(op, operands, options, depth);
  }
  return EvaluateOp(op.kind(), operands, op.attrs(), op.result(0)->type(),
                    options);
}

absl::StatusOr<std::vector<Tensor>> EvaluateGraphAt(
    const Graph& graph, absl::Span<const Tensor> inputs, const Options& options,
    int depth) {
  if (static_cast<int>(inputs.size()) != graph.num_params()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph @", graph.name(), " takes ", graph.num_params(),
                     " inputs, but ", inputs.size(), " were given"));
  }
  absl::flat_hash_map<const Value*, Tensor> values;
  for (int i = 0; i < graph.num_params(); ++i) {
    const Value* param = graph.param(i);
    if (inputs[i].type() != param->type()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " for parameter ", ValueLabel(param),
                       " has type ", inputs[i].type().ToString(), ", expected ",
                       param->type().ToString()));
    }
    HGC_RETURN_IF_ERROR(CheckTensor(
        inputs[i], absl::StrCat("input for parameter ", ValueLabel(param))));
    values[param] = inputs[i];
  }

  // The last op reading each value, so its tensor can be freed early.
  // Graph results are kept.
  const absl::flat_hash_map<const Value*, const Op*> last_use = LastUses(graph);

  std::vector<Tensor> operands;
  int op_index = -1;
  for (const auto& op_ptr : graph.ops()) {
    const Op& op = *op_ptr;
    ++op_index;
    const std::string context = OpContext(op, op_index);
    operands.clear();
    for (int i = 0; i < op.num_operands(); ++i) {
      const Value* v = op.operand(i);
      auto it = v == nullptr ? values.end() : values.find(v);
      if (it == values.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            context, ": operand ", i, " is not defined before its use"));
      }
      operands.push_back(it->second);
    }
    absl::StatusOr<Tensor> result = EvaluateOpAt(op, operands, options, depth);
    if (!result.ok()) return WithContext(result.status(), context);
    values[op.result(0)] = *std::move(result);
    for (const Value* v : op.operands()) {
      auto it = last_use.find(v);
      if (it != last_use.end() && it->second == &op) values.erase(v);
    }
  }

  std::vector<Tensor> results;
  results.reserve(graph.results().size());
  for (const Value* v : graph.results()) {
    auto it = v == nullptr ? values.end() : values.find(v);
    if (it == values.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "graph @", graph.name(), " returns ",
          v == nullptr ? "<null>" : ValueLabel(v), ", which is never defined"));
    }
    results.push_back(it->second);
  }
  return results;
}

}  // namespace
}  // namespace portable
}  // namespace hgc
