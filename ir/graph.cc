#include "ir/graph.h"

#include <algorithm>

#include "support/check.h"

namespace hgc {

const Attribute* Op::FindAttr(absl::string_view name) const {
  auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

Value* Graph::AddParam(std::string name, TensorType type, bool is_const,
                       SourceLoc loc) {
  int index = num_params();
  params_.push_back(std::unique_ptr<Value>(
      new Value(std::move(type), std::move(name), nullptr, index)));
  Value* param = params_.back().get();
  param->set_const(is_const);
  param->set_loc(loc);
  return param;
}

Value* Graph::FindParam(absl::string_view name) const {
  for (const auto& p : params_) {
    if (p->name() == name) return p.get();
  }
  return nullptr;
}

Op* Graph::AddOp(std::string kind, std::vector<Value*> operands, AttrMap attrs,
                 std::vector<TensorType> result_types, SourceLoc loc) {
  return InsertOp(nullptr, std::move(kind), std::move(operands),
                  std::move(attrs), std::move(result_types), loc);
}

Op* Graph::InsertOp(Op* before, std::string kind, std::vector<Value*> operands,
                    AttrMap attrs, std::vector<TensorType> result_types,
                    SourceLoc loc) {
  HGC_CHECK(before == nullptr || before->graph_ == this);
  std::unique_ptr<Op> op(
      new Op(std::move(kind), std::move(operands), std::move(attrs), loc));
  op->graph_ = this;
  for (size_t i = 0; i < result_types.size(); ++i) {
    op->results_.push_back(std::unique_ptr<Value>(
        new Value(std::move(result_types[i]), "", op.get(),
                  static_cast<int>(i))));
    op->results_.back()->set_loc(loc);
  }
  auto it = ops_.insert(before == nullptr ? ops_.end() : before->self_,
                        std::move(op));
  (*it)->self_ = it;
  return it->get();
}

std::vector<Op*> Graph::OpsSnapshot() const {
  std::vector<Op*> ops;
  ops.reserve(ops_.size());
  for (const auto& op : ops_) ops.push_back(op.get());
  return ops;
}

void Graph::Erase(Op* op) {
  HGC_CHECK(op != nullptr && op->graph_ == this);
  ops_.erase(op->self_);
}

void Graph::ReplaceAllUsesWith(Value* from, Value* to) {
  for (auto& op : ops_) {
    for (Value*& v : op->operands_) {
      if (v == from) v = to;
    }
  }
  for (Value*& v : results_) {
    if (v == from) v = to;
  }
}

void Graph::SetResults(std::vector<Value*> results, SourceLoc loc) {
  results_ = std::move(results);
  return_loc_ = loc;
}

Module::Module(Module&& other) noexcept
    : graphs_(std::move(other.graphs_)), notes_(std::move(other.notes_)) {
  AdoptGraphs();
}

Module& Module::operator=(Module&& other) noexcept {
  graphs_ = std::move(other.graphs_);
  notes_ = std::move(other.notes_);
  AdoptGraphs();
  return *this;
}

void Module::AdoptGraphs() {
  for (auto& g : graphs_) g->module_ = this;
  RebuildIndex();
}

void Module::RebuildIndex() {
  by_name_.clear();
  for (const auto& g : graphs_) by_name_.emplace(g->name(), g.get());
}

Graph* Module::AddGraph(std::string name, SourceLoc loc) {
  graphs_.push_back(std::make_unique<Graph>(std::move(name), loc));
  graphs_.back()->module_ = this;
  by_name_.emplace(graphs_.back()->name(), graphs_.back().get());
  return graphs_.back().get();
}

void Module::EraseGraph(const Graph* graph) {
  auto it = std::find_if(graphs_.begin(), graphs_.end(),
                         [graph](const std::unique_ptr<Graph>& g) {
                           return g.get() == graph;
                         });
  HGC_CHECK(it != graphs_.end());
  bool indexed = FindGraph(graph->name()) == graph;
  graphs_.erase(it);
  // A later graph of the same name (an invalid module) becomes the match.
  if (indexed) RebuildIndex();
}

Graph* Module::FindGraph(absl::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Graph* FusionBody(const Op& op) {
  const Attribute* body = op.FindAttr("body");
  const Module* module = op.graph() != nullptr ? op.graph()->module() : nullptr;
  if (body == nullptr || !body->is_symbol() || module == nullptr) {
    return nullptr;
  }
  return module->FindGraph(body->as_symbol());
}

std::optional<FusionKind> FusionKindOf(const Op& op) {
  if (op.kind_id() != OpKind::kFusion) return std::nullopt;
  const Attribute* kind = op.FindAttr("kind");
  if (kind == nullptr || !kind->is_string()) return std::nullopt;
  return FusionKindFromName(kind->as_string());
}

bool IsMatmulGroup(const Op& op) {
  std::optional<FusionKind> kind = FusionKindOf(op);
  return kind.has_value() && IsMatmulFusion(*kind);
}

bool IsRowGroup(const Op& op) {
  std::optional<FusionKind> kind = FusionKindOf(op);
  return kind.has_value() && IsRowFusion(*kind);
}

}  // namespace hgc
