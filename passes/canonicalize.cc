#include "passes/canonicalize.h"

#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/graph_utils.h"
#include "ir/builder.h"
#include "ir/ops/op_helpers.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

bool IsSplat(const Value* v, double value) {
  std::optional<double> s = SplatValue(v);
  return s.has_value() && *s == value;
}

// `x` when `op`'s result is exactly x's type (so replacing it is sound).
Value* IfSameType(const Op& op, Value* x) {
  return op.result(0)->type() == x->type() ? x : nullptr;
}

// A splat zero that is an exact identity: x + (-0.0) == x and x - (+0.0) == x
// for every x, but x + (+0.0) is +0.0 for x = -0.0, and x - (-0.0) too.
// Integer zeros have no sign.
bool IsSignedZero(const Value* v, bool negative) {
  std::optional<double> s = SplatValue(v);
  if (!s.has_value() || *s != 0) return false;
  return !IsFloat(v->type().dtype) || std::signbit(*s) == negative;
}

Value* SimplifyIdentity(const Op& op) {
  if (op.num_operands() != 2) return nullptr;
  Value* a = op.operand(0);
  Value* b = op.operand(1);
  const OpKind kind = op.kind_id();
  if (kind == OpKind::kMul) {
    if (IsSplat(b, 1.0)) {
      if (Value* v = IfSameType(op, a)) return v;
    }
    if (IsSplat(a, 1.0)) return IfSameType(op, b);
  }
  if (kind == OpKind::kAdd) {
    if (IsSignedZero(b, /*negative=*/true)) {
      if (Value* v = IfSameType(op, a)) return v;
    }
    if (IsSignedZero(a, /*negative=*/true)) return IfSameType(op, b);
  }
  if (kind == OpKind::kSub && IsSignedZero(b, /*negative=*/false)) {
    return IfSameType(op, a);
  }
  if (kind == OpKind::kDiv && IsSplat(b, 1.0)) return IfSameType(op, a);
  return nullptr;
}

bool IsIdentityPerm(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// The elements of literal constant `v` as stored (rounded to its dtype).
std::vector<double> ConstantElements(const Value* v) {
  const Attribute& value = *LiteralConstantOp(v)->FindAttr("value");
  std::vector<double> out;
  if (value.is_number()) {
    out.push_back(value.as_number());
  } else {
    out = value.as_number_list();
  }
  for (double& x : out) x = RoundToDType(x, v->type().dtype);
  return out;
}

double MinNormal(DType dtype) {
  return dtype == DType::kF16 ? std::ldexp(1.0, -14)
                              : std::numeric_limits<float>::min();
}

// 1/c per element of `c`, or nullopt when the rewrite is not allowed.
std::optional<std::vector<double>> Reciprocals(
    const Value* c, const CanonicalizeOptions& options) {
  const Op* def = LiteralConstantOp(c);
  DType dtype = c->type().dtype;
  if (def == nullptr || !IsFloat(dtype)) return std::nullopt;
  const Attribute* value = def->FindAttr("value");
  if (value == nullptr || !(value->is_number() || value->is_number_list())) {
    return std::nullopt;
  }
  bool allow_inexact = dtype == DType::kF32 && !options.exact_reciprocal_only;
  std::vector<double> out = ConstantElements(c);
  for (double& x : out) {
    if (x == 0 || !std::isfinite(x)) return std::nullopt;
    double r = 1.0 / x;
    double rounded = RoundToDType(r, dtype);
    if (!std::isfinite(rounded) || std::fabs(rounded) < MinNormal(dtype)) {
      return std::nullopt;
    }
    if (rounded != r && !allow_inexact) return std::nullopt;
    x = rounded;
  }
  return out;
}

// A slice that reads every element of x in order: each dim keeps its
// length, forwards (a dim of length 0 or 1 reads the same either way).
bool IsIdentitySlice(const Op& op) {
  const Shape& shape = op.operand(0)->type().shape;
  absl::StatusOr<SliceDims> dims =
      ResolveSlice(op.FindAttr("starts"), op.FindAttr("ends"),
                   op.FindAttr("axes"), op.FindAttr("steps"), shape);
  if (!dims.ok()) return false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (dims->count[d] != shape[d]) return false;
    if (shape[d] > 1 && dims->step[d] != 1) return false;
  }
  return true;
}

}  // namespace

Value* SimplifyWithoutNewOps(const Op& op) {
  if (op.num_results() != 1) return nullptr;
  if (Value* v = SimplifyIdentity(op)) return v;
  const OpKind kind = op.kind_id();
  if (kind == OpKind::kNeg) {
    const Op* inner = op.operand(0)->defining_op();
    if (inner != nullptr && inner->kind_id() == OpKind::kNeg) {
      return inner->operand(0);
    }
  }
  if (kind == OpKind::kTranspose) {
    if (IsIdentityPerm(TransposePermOf(op))) return op.operand(0);
  }
  if (kind == OpKind::kReshape) return IfSameType(op, op.operand(0));
  if (kind == OpKind::kConcat && op.num_operands() == 1) {
    return IfSameType(op, op.operand(0));
  }
  if (kind == OpKind::kSlice && IsIdentitySlice(op)) return op.operand(0);
  return nullptr;
}

absl::StatusOr<Value*> SimplifyWithNewOp(Op& op,
                                         const CanonicalizeOptions& options) {
  Graph& graph = *op.graph();
  Builder builder(&graph, &op);
  const OpKind kind = op.kind_id();
  const Op* inner =
      op.num_operands() == 1 ? op.operand(0)->defining_op() : nullptr;
  if (kind == OpKind::kTranspose && inner != nullptr &&
      inner->kind_id() == OpKind::kTranspose) {
    const std::vector<int64_t> outer_perm = TransposePermOf(op);
    const std::vector<int64_t> inner_perm = TransposePermOf(*inner);
    // Output dim j of the outer transpose is inner dim outer[j], which is
    // input dim inner[outer[j]].
    std::vector<int64_t> composed;
    for (int64_t p : outer_perm) composed.push_back(inner_perm[p]);
    Value* x = inner->operand(0);
    if (IsIdentityPerm(composed)) return x;
    HGC_ASSIGN_OR_RETURN(
        Value * t,
        builder.Create("transpose", {x},
                       {{"perm", Attribute::IntList(composed)}}, {}, op.loc()));
    return TakeName(t, op.result(0));
  }
  if (kind == OpKind::kReshape && inner != nullptr &&
      inner->kind_id() == OpKind::kReshape) {
    Value* x = inner->operand(0);
    if (x->type() == op.result(0)->type()) return x;
    const Shape& shape = op.result(0)->type().shape;
    HGC_ASSIGN_OR_RETURN(
        Value * r,
        builder.Create("reshape", {x},
                       {{"shape", Attribute::IntList(std::vector<int64_t>(
                                      shape.begin(), shape.end()))}},
                       {}, op.loc()));
    return TakeName(r, op.result(0));
  }
  if (kind == OpKind::kDiv && !IsSplat(op.operand(1), 1.0)) {
    Value* c = op.operand(1);
    std::optional<std::vector<double>> recip = Reciprocals(c, options);
    if (!recip.has_value()) return nullptr;
    Attribute value = recip->size() == 1 ? Attribute::Float((*recip)[0])
                                         : Attribute::FloatList(*recip);
    HGC_ASSIGN_OR_RETURN(Value * rc,
                         builder.Create("constant", {}, {{"value", value}},
                                        {c->type()}, op.loc()));
    HGC_ASSIGN_OR_RETURN(Value * m, builder.Create("mul", {op.operand(0), rc},
                                                   {}, {}, op.loc()));
    return TakeName(m, op.result(0));
  }
  return nullptr;
}

absl::StatusOr<bool> CanonicalizeGraph(Graph& graph,
                                       const CanonicalizeOptions& options) {
  bool changed = false;
  for (int64_t iteration = 0; iteration < options.max_iterations; ++iteration) {
    ValueReplacer replacer;
    bool rewrote = false;
    for (Op* op : graph.OpsSnapshot()) {
      replacer.RemapOperands(*op);
      Value* replacement = SimplifyWithoutNewOps(*op);
      if (replacement == nullptr) {
        HGC_ASSIGN_OR_RETURN(replacement, SimplifyWithNewOp(*op, options));
      }
      if (replacement == nullptr) continue;
      replacer.Replace(op->result(0), replacement);
      rewrote = true;
    }
    replacer.RemapResults(graph);
    int erased = EraseDeadOps(graph);
    if (!rewrote && erased == 0) break;
    changed = true;
  }
  return changed;
}

std::vector<PassOptionInfo> CanonicalizePass::options() const {
  return {{"exact-reciprocal-only", "bool",
           options_.exact_reciprocal_only ? "true" : "false",
           "rewrite x/c as x*(1/c) only when 1/c is exact (false: fast-math, "
           "inexact f32 reciprocals too)"},
          {"max-iterations", "int", absl::StrCat(options_.max_iterations),
           "sweeps per graph before stopping short of a fixed point"}};
}

absl::Status CanonicalizePass::SetOption(absl::string_view key,
                                         absl::string_view value) {
  if (key == "exact-reciprocal-only") {
    HGC_ASSIGN_OR_RETURN(options_.exact_reciprocal_only,
                         ParseBoolOption(*this, key, value));
    return absl::OkStatus();
  }
  if (key == "max-iterations") {
    HGC_ASSIGN_OR_RETURN(options_.max_iterations,
                         ParseIntOption(*this, key, value, 1, 1000));
    return absl::OkStatus();
  }
  return UnknownPassOption(*this, key);
}

absl::StatusOr<bool> CanonicalizePass::Run(Module& module) {
  bool changed = false;
  for (const auto& g : module.graphs()) {
    HGC_ASSIGN_OR_RETURN(bool c, CanonicalizeGraph(*g, options_));
    changed = changed || c;
  }
  return changed;
}

}  // namespace hgc
