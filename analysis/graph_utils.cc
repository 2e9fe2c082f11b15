#include "analysis/graph_utils.h"

#include "absl/strings/str_cat.h"
#include "ir/tensor.h"
#include "support/check.h"

namespace hgc {

UseInfo::UseInfo(const Graph& graph) {
  for (const auto& op : graph.ops()) {
    for (const Value* v : op->operands()) {
      ++uses_[v];
      std::vector<Op*>& users = users_[v];
      if (users.empty() || users.back() != op.get()) users.push_back(op.get());
    }
  }
  for (const Value* v : graph.results()) {
    ++uses_[v];
    returned_.insert(v);
  }
}

int UseInfo::NumUses(const Value* v) const {
  auto it = uses_.find(v);
  return it == uses_.end() ? 0 : it->second;
}

const std::vector<Op*>& UseInfo::Users(const Value* v) const {
  static const std::vector<Op*>* const kNone = new std::vector<Op*>;
  auto it = users_.find(v);
  return it == users_.end() ? *kNone : it->second;
}

bool UseInfo::OnlyUsedBy(const Value* v, const Op* user) const {
  const std::vector<Op*>& users = Users(v);
  return !IsReturned(v) && users.size() == 1 && users[0] == user;
}

namespace {

bool WalkBack(const UseInfo& uses, Value* v, const Op* consumer,
              absl::FunctionRef<bool(const Op&)> is_end,
              absl::FunctionRef<std::vector<int>(const Op&)> chain_operands,
              int depth, std::vector<ChainLink>& out) {
  Op* def = v->defining_op();
  if (def == nullptr || depth <= 0 || !uses.OnlyUsedBy(v, consumer)) {
    return false;
  }
  if (is_end(*def)) {
    out.push_back({def, -1});
    return true;
  }
  for (int c : chain_operands(*def)) {
    if (WalkBack(uses, def->operand(c), def, is_end, chain_operands,
                 depth - 1, out)) {
      out.push_back({def, c});
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<std::vector<ChainLink>> WalkBackChain(
    const UseInfo& uses, Value* v, const Op* consumer,
    absl::FunctionRef<bool(const Op&)> is_end,
    absl::FunctionRef<std::vector<int>(const Op&)> chain_operands,
    int max_depth) {
  std::vector<ChainLink> links;
  if (!WalkBack(uses, v, consumer, is_end, chain_operands, max_depth,
                links)) {
    return std::nullopt;
  }
  return links;
}

bool UseInfo::IsDead(const Op& op) const {
  for (int i = 0; i < op.num_results(); ++i) {
    if (NumUses(op.result(i)) > 0) return false;
  }
  return true;
}

Value* ValueReplacer::Resolve(Value* v) const {
  // Chains are short: Replace stores resolved targets, so one step is
  // enough unless a target was itself replaced later.
  for (auto it = map_.find(v); it != map_.end(); it = map_.find(v)) {
    v = it->second;
  }
  return v;
}

void ValueReplacer::Replace(Value* from, Value* to) {
  to = Resolve(to);
  HGC_CHECK(from != to);
  map_[from] = to;
}

bool ValueReplacer::RemapOperands(Op& op) const {
  if (map_.empty()) return false;
  bool changed = false;
  for (int i = 0; i < op.num_operands(); ++i) {
    Value* v = Resolve(op.operand(i));
    if (v != op.operand(i)) {
      op.set_operand(i, v);
      changed = true;
    }
  }
  return changed;
}

bool ValueReplacer::RemapResults(Graph& graph) const {
  if (map_.empty()) return false;
  std::vector<Value*> results = graph.results();
  bool changed = false;
  for (Value*& v : results) {
    Value* r = Resolve(v);
    changed = changed || r != v;
    v = r;
  }
  if (changed) graph.SetResults(std::move(results), graph.return_loc());
  return changed;
}

Value* TakeName(Value* created, Value* replaced) {
  created->set_name(replaced->name());
  replaced->set_name("");
  return created;
}

FreshNames::FreshNames(const Graph& graph) {
  for (const auto& p : graph.params()) taken_.insert(p->name());
  for (const auto& op : graph.ops()) {
    for (int i = 0; i < op->num_results(); ++i) {
      taken_.insert(op->result(i)->name());
    }
  }
}

std::string FreshNames::Make(absl::string_view base) {
  std::string name(base);
  for (int n = 2; taken_.contains(name); ++n) {
    name = absl::StrCat(base, "_", n);
  }
  taken_.insert(name);
  return name;
}

int EraseDeadOps(Graph& graph, std::vector<AttrMap>* erased_fusion_attrs) {
  absl::flat_hash_map<const Value*, int> uses;
  for (const auto& op : graph.ops()) {
    for (const Value* v : op->operands()) ++uses[v];
  }
  for (const Value* v : graph.results()) ++uses[v];
  // Reverse order visits users before producers, so one sweep erases whole
  // dead chains.
  std::vector<Op*> ops = graph.OpsSnapshot();
  int erased = 0;
  for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
    Op* op = *it;
    bool dead = true;
    for (int i = 0; i < op->num_results() && dead; ++i) {
      dead = uses[op->result(i)] == 0;
    }
    if (!dead) continue;
    for (const Value* v : op->operands()) --uses[v];
    if (erased_fusion_attrs != nullptr && op->kind_id() == OpKind::kFusion) {
      erased_fusion_attrs->push_back(op->attrs());
    }
    graph.Erase(op);
    ++erased;
  }
  return erased;
}

int64_t SoftmaxAxis(const Op& softmax) {
  const int64_t rank = softmax.operand(0)->type().rank();
  const Attribute* a = softmax.FindAttr("axis");
  const int64_t axis = a != nullptr && a->is_int() ? a->as_int() : -1;
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> TransposePermOf(const Op& transpose) {
  const int64_t rank = transpose.operand(0)->type().rank();
  const Attribute* a = transpose.FindAttr("perm");
  std::vector<int64_t> perm;
  if (a == nullptr) {
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
    return perm;
  }
  for (int64_t p : a->as_int_list()) perm.push_back(p < 0 ? p + rank : p);
  return perm;
}

const Op* LiteralConstantOp(const Value* v) {
  const Op* def = v->defining_op();
  return def != nullptr && def->kind_id() == OpKind::kConstant ? def : nullptr;
}

double RoundToDType(double v, DType dtype) {
  absl::StatusOr<Tensor> t = Tensor::Create(TensorType(dtype));
  HGC_CHECK(t.ok());
  t->SetDouble(0, v);
  return t->GetDouble(0);
}

std::optional<double> SplatValue(const Value* v) {
  const Op* c = LiteralConstantOp(v);
  if (c == nullptr || v->type().dtype == DType::kBool) return std::nullopt;
  const Attribute* value = c->FindAttr("value");
  if (value == nullptr) return std::nullopt;
  std::optional<double> splat;
  if (value->is_number()) {
    splat = value->as_number();
  } else if (value->is_number_list() && !value->as_list().empty()) {
    std::vector<double> values = value->as_number_list();
    for (double x : values) {
      if (x != values[0]) return std::nullopt;
    }
    splat = values[0];
  }
  if (!splat.has_value() || v->type().NumElements() == 0) return std::nullopt;
  return RoundToDType(*splat, v->type().dtype);
}

absl::flat_hash_set<const Graph*> FusionBodies(const Module& module) {
  absl::flat_hash_set<const Graph*> bodies;
  for (const auto& g : module.graphs()) {
    for (const auto& op : g->ops()) {
      if (op->kind_id() != OpKind::kFusion) continue;
      if (const Graph* b = FusionBody(*op)) {
        bodies.insert(b);
      }
    }
  }
  return bodies;
}

std::vector<Graph*> TopLevelGraphs(const Module& module) {
  absl::flat_hash_set<const Graph*> bodies = FusionBodies(module);
  std::vector<Graph*> out;
  for (const auto& g : module.graphs()) {
    if (!bodies.contains(g.get())) out.push_back(g.get());
  }
  return out;
}

std::string FreshGraphName(const Module& module, absl::string_view base,
                           int* next) {
  while (true) {
    std::string name = absl::StrCat(base, "_", (*next)++);
    if (module.FindGraph(name) == nullptr) return name;
  }
}

}  // namespace hgc
