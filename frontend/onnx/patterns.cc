#include "frontend/onnx/patterns.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "ir/builder.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// Operand slots that read each value; a graph result counts as many, so
// that it is never an intermediate.
using UseCounts = absl::flat_hash_map<const Value*, int>;
constexpr int kResultUses = 1 << 20;
constexpr double kPi = 3.14159265358979323846;

UseCounts CountUses(const Graph& graph) {
  UseCounts uses;
  for (const auto& op : graph.ops()) {
    for (const Value* v : op->operands()) ++uses[v];
  }
  for (const Value* v : graph.results()) uses[v] += kResultUses;
  return uses;
}

// A chain found in the graph: what replaces its root and the ops it
// consists of.
struct Match {
  std::string kind;
  std::vector<Value*> operands;
  AttrMap attrs;
  std::vector<Op*> ops;  // the chain, root included
};

class Matcher {
 public:
  explicit Matcher(const Graph& graph) : uses_(CountUses(graph)) {}

  std::optional<Match> LayerNorm(Op* root) const;
  std::optional<Match> Gelu(Op* root) const;

 private:
  int Uses(const Value* v) const {
    auto it = uses_.find(v);
    return it == uses_.end() ? 0 : it->second;
  }
  // The op of `kind` that defines `v`, read by `uses` operand slots and no
  // graph result; else null.
  Op* Def(const Value* v, absl::string_view kind, int uses = 1) const {
    Op* op = v->defining_op();
    if (op == nullptr || op->kind() != kind || Uses(v) != uses) return nullptr;
    return op;
  }
  // Appends the factors of the product `v` to `factors`: the operands of
  // mul ops read once (v's own at `depth` 0), expanding no deeper than
  // `limit` mul ops and stopping once there are `limit` factors.
  void Factors(Value* v, int depth, int limit, std::vector<Value*>& factors,
               std::vector<Op*>& ops) const;
  std::optional<Match> GeluOf(Value* x, Value* one_plus, Match m) const;
  bool IsTanhArgument(Value* x, Value* arg, std::vector<Op*>& ops) const;

  UseCounts uses_;
};

// The value of a one-element literal constant.
std::optional<double> LiteralValue(const Value* v) {
  const Op* op = v->defining_op();
  if (op == nullptr || op->kind() != "constant") return std::nullopt;
  const Attribute* value = op->FindAttr("value");
  if (value == nullptr || !value->is_number() ||
      v->type().NumElements() != 1) {
    return std::nullopt;
  }
  return value->as_number();
}

// Whether `v` is a literal within f32 rounding (a few ulps) of `expected`.
bool IsLiteral(const Value* v, double expected) {
  std::optional<double> value = LiteralValue(v);
  return value.has_value() &&
         std::abs(*value - expected) <= 1e-6 * std::abs(expected);
}

// The operand of the binary `op` beside `a`, or null when `a` is neither.
Value* Other(const Op* op, const Value* a) {
  if (op->operand(0) == a) return op->operand(1);
  if (op->operand(1) == a) return op->operand(0);
  return nullptr;
}

// The operand of the binary `op` that is a literal within f32 rounding of
// `expected`, when the other one is not; its partner is returned.
Value* BesideLiteral(const Op* op, double expected) {
  for (int i = 0; i < 2; ++i) {
    if (IsLiteral(op->operand(i), expected) &&
        !IsLiteral(op->operand(1 - i), expected)) {
      return op->operand(1 - i);
    }
  }
  return nullptr;
}

// k when `reduce` is a keep-dims reduction of `x` over its last k axes.
std::optional<int64_t> TrailingAxes(const Op* reduce, const Value* x) {
  const Attribute* axes = reduce->FindAttr("axes");
  const Attribute* keep = reduce->FindAttr("keep_dims");
  if (axes == nullptr || !axes->is_int_list() || keep == nullptr ||
      !keep->is_bool() || !keep->as_bool()) {
    return std::nullopt;
  }
  const int64_t rank = x->type().rank();
  std::vector<int64_t> normalized;
  for (const Attribute& a : axes->as_list()) {
    normalized.push_back(a.as_int() < 0 ? a.as_int() + rank : a.as_int());
  }
  std::sort(normalized.begin(), normalized.end());
  const int64_t k = static_cast<int64_t>(normalized.size());
  if (k == 0) return std::nullopt;
  for (int64_t i = 0; i < k; ++i) {
    if (normalized[i] != rank - k + i) return std::nullopt;
  }
  return k;
}

std::optional<Match> Matcher::LayerNorm(Op* root) const {
  if (root->kind() != "add") return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    Op* scale = Def(root->operand(i), "mul");
    Value* beta = root->operand(1 - i);
    if (scale == nullptr) continue;
    Op* div = Def(scale->operand(0), "div");
    Value* gamma = scale->operand(1);
    if (div == nullptr) {
      div = Def(scale->operand(1), "div");
      gamma = scale->operand(0);
    }
    if (div == nullptr) continue;
    Op* sqrt = Def(div->operand(1), "sqrt");
    Op* add_eps = sqrt ? Def(sqrt->operand(0), "add") : nullptr;
    if (add_eps == nullptr) continue;
    std::optional<double> eps = LiteralValue(add_eps->operand(1));
    Value* var = add_eps->operand(0);
    if (!eps.has_value()) {
      eps = LiteralValue(add_eps->operand(0));
      var = add_eps->operand(1);
    }
    Op* var_mean = eps.has_value() ? Def(var, "reduce_mean") : nullptr;
    Op* square = var_mean ? Def(var_mean->operand(0), "mul") : nullptr;
    // d is read by the square (twice) and the div.
    Op* sub = Def(div->operand(0), "sub", 3);
    if (square == nullptr || sub == nullptr || !(*eps > 0) ||
        !std::isfinite(*eps) || square->operand(0) != sub->result() ||
        square->operand(1) != sub->result()) {
      continue;
    }
    Value* x = sub->operand(0);
    Op* mean = Def(sub->operand(1), "reduce_mean");
    if (mean == nullptr || mean->operand(0) != x) continue;
    std::optional<int64_t> k = TrailingAxes(mean, x);
    if (!k.has_value() || TrailingAxes(var_mean, x) != k) continue;
    const TensorType& t = x->type();
    const TensorType affine(
        t.dtype, Shape(t.shape.end() - *k, t.shape.end()));
    if (t.dtype != DType::kF32 || root->result()->type() != t ||
        gamma->type() != affine || beta->type() != affine) {
      continue;
    }
    AttrMap attrs;
    attrs["axis"] = Attribute::Int(-*k);
    attrs["epsilon"] = Attribute::Float(*eps);
    return Match{"layernorm", {x, gamma, beta}, std::move(attrs),
                 {root, scale, div, sqrt, add_eps, var_mean, square, sub,
                  mean}};
  }
  return std::nullopt;
}

void Matcher::Factors(Value* v, int depth, int limit,
                      std::vector<Value*>& factors,
                      std::vector<Op*>& ops) const {
  Op* mul = depth == 0 ? v->defining_op() : Def(v, "mul");
  if (mul == nullptr || mul->kind() != "mul" || depth >= limit ||
      static_cast<int>(factors.size()) >= limit) {
    factors.push_back(v);
    return;
  }
  ops.push_back(mul);
  Factors(mul->operand(0), depth + 1, limit, factors, ops);
  Factors(mul->operand(1), depth + 1, limit, factors, ops);
}

// Whether `arg` is sqrt(2/pi) * (x + 0.044715 * x * x * x), its ops
// appended to `ops`.
bool Matcher::IsTanhArgument(Value* x, Value* arg,
                             std::vector<Op*>& ops) const {
  Op* scaled = Def(arg, "mul");
  Value* inner = scaled ? BesideLiteral(scaled, std::sqrt(2 / kPi)) : nullptr;
  Op* add = inner ? Def(inner, "add") : nullptr;
  Value* cubic = add ? Other(add, x) : nullptr;
  if (cubic == nullptr || Def(cubic, "mul") == nullptr) return false;
  std::vector<Value*> factors;
  std::vector<Op*> cubic_ops;
  Factors(cubic, 1, 4, factors, cubic_ops);
  if (factors.size() != 4 ||
      std::count(factors.begin(), factors.end(), x) != 3 ||
      std::count_if(factors.begin(), factors.end(), [](const Value* f) {
        return IsLiteral(f, 0.044715);
      }) != 1) {
    return false;
  }
  ops.insert(ops.end(), {scaled, add});
  ops.insert(ops.end(), cubic_ops.begin(), cubic_ops.end());
  return true;
}

// `m` completed when `one_plus` is 1 + erf(x / sqrt(2)) or
// 1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)).
std::optional<Match> Matcher::GeluOf(Value* x, Value* one_plus,
                                     Match m) const {
  Op* add = Def(one_plus, "add");
  Value* t = add ? BesideLiteral(add, 1.0) : nullptr;
  if (t == nullptr || x->type().dtype != DType::kF32) return std::nullopt;
  m.ops.push_back(add);
  if (Op* erf = Def(t, "erf")) {
    Op* scale = Def(erf->operand(0), "div");
    if (scale != nullptr && !(scale->operand(0) == x &&
                              IsLiteral(scale->operand(1), std::sqrt(2.0)))) {
      return std::nullopt;
    }
    if (scale == nullptr) {
      scale = Def(erf->operand(0), "mul");
      if (scale == nullptr || Other(scale, x) == nullptr ||
          !IsLiteral(Other(scale, x), std::sqrt(0.5))) {
        return std::nullopt;
      }
    }
    m.ops.insert(m.ops.end(), {erf, scale});
    m.attrs["approximate"] = Attribute::String("none");
    return m;
  }
  Op* tanh = Def(t, "tanh");
  if (tanh == nullptr || !IsTanhArgument(x, tanh->operand(0), m.ops)) {
    return std::nullopt;
  }
  m.ops.push_back(tanh);
  m.attrs["approximate"] = Attribute::String("tanh");
  return m;
}

std::optional<Match> Matcher::Gelu(Op* root) const {
  if (root->kind() != "mul") return std::nullopt;
  std::vector<Value*> factors;
  Match m;
  m.kind = "gelu";
  Factors(root->result(), 0, 3, factors, m.ops);
  if (factors.size() != 3) return std::nullopt;
  auto half = std::find_if(factors.begin(), factors.end(),
                           [](const Value* f) { return IsLiteral(f, 0.5); });
  if (half == factors.end()) return std::nullopt;
  factors.erase(half);
  for (int i = 0; i < 2; ++i) {
    Value* x = factors[i];
    if (root->result()->type() != x->type()) continue;
    m.operands = {x};
    std::optional<Match> found = GeluOf(x, factors[1 - i], m);
    if (found.has_value()) return found;
  }
  return std::nullopt;
}

// Replaces `m`'s chain by its op, erasing the chain and the literal
// constants it alone read.
absl::Status Rewrite(Graph& graph, const Match& m) {
  Op* root = m.ops.front();
  Builder builder(&graph, root);
  HGC_ASSIGN_OR_RETURN(
      Value * lifted, builder.Create(m.kind, m.operands, m.attrs, {},
                                     root->loc()));
  lifted->set_name(root->result()->name());
  graph.ReplaceAllUsesWith(root->result(), lifted);
  std::vector<Op*> constants;
  for (Op* op : m.ops) {
    for (Value* v : op->operands()) {
      Op* def = v->defining_op();
      if (def != nullptr && def->kind() == "constant" &&
          std::find(constants.begin(), constants.end(), def) ==
              constants.end()) {
        constants.push_back(def);
      }
    }
  }
  for (Op* op : m.ops) graph.Erase(op);
  const UseCounts uses = CountUses(graph);
  for (Op* constant : constants) {
    if (!uses.contains(constant->result())) graph.Erase(constant);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LiftedPatterns> LiftPatterns(Graph& graph) {
  LiftedPatterns lifted;
  // One rewrite at a time, each on fresh use counts: a rewrite erases ops
  // and changes how often x and the constants are read.
  for (bool changed = true; changed;) {
    changed = false;
    const Matcher matcher(graph);
    for (Op* op : graph.OpsSnapshot()) {
      std::optional<Match> m = matcher.LayerNorm(op);
      if (!m.has_value()) m = matcher.Gelu(op);
      if (!m.has_value()) continue;
      HGC_RETURN_IF_ERROR(Rewrite(graph, *m));
      ++(m->kind == "gelu" ? lifted.gelu : lifted.layernorm);
      changed = true;
      break;
    }
  }
  return lifted;
}

}  // namespace hgc
