// SSA values, ops, graphs and modules: the core IR.
//
// A Module owns Graphs; a Graph owns its parameters, its ops (in topological
// order) and through them every Value. There are no per-op subclasses: an op
// is a kind name plus operands, attributes and results, and its semantics
// live in the OpRegistry (ir/op_registry.h).
#ifndef HGC_IR_GRAPH_H_
#define HGC_IR_GRAPH_H_

#include <list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "ir/attribute.h"
#include "ir/op_kind.h"
#include "ir/tensor_type.h"
#include "support/source_location.h"

namespace hgc {

class Op;
class Graph;
class Module;

// An SSA value: a graph parameter or an op result.
class Value {
 public:
  const TensorType& type() const { return type_; }
  void set_type(TensorType type) { type_ = std::move(type); }

  // Name without the leading '%' ("x", "0").
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // The op defining this value; nullptr for a graph parameter.
  Op* defining_op() const { return defining_op_; }
  bool is_param() const { return defining_op_ == nullptr; }
  // Index among the graph's parameters (params) or the op's results.
  int index() const { return index_; }

  // Parameters only: fixed for the life of the compiled graph.
  bool is_const() const { return is_const_; }
  void set_const(bool is_const) { is_const_ = is_const; }

  SourceLoc loc() const { return loc_; }
  void set_loc(SourceLoc loc) { loc_ = loc; }

 private:
  friend class Graph;
  friend class Op;
  Value(TensorType type, std::string name, Op* def, int index)
      : type_(std::move(type)), name_(std::move(name)), defining_op_(def),
        index_(index) {}

  TensorType type_;
  std::string name_;
  Op* defining_op_;
  int index_;
  bool is_const_ = false;
  SourceLoc loc_;
};

// One statement: `%r = kind(operands) {attrs} : types`.
class Op {
 public:
  // The kind's name, as written ("matmul"): for printing and diagnostics.
  const std::string& kind() const { return kind_; }
  // The kind as an enumerator (OpKind::kUnknown for a name not in
  // ir/op_kinds.def): for deciding by kind (see ir/op_kind.h).
  OpKind kind_id() const { return kind_id_; }
  const std::vector<Value*>& operands() const { return operands_; }
  Value* operand(int i) const { return operands_[i]; }
  int num_operands() const { return static_cast<int>(operands_.size()); }
  void set_operand(int i, Value* v) { operands_[i] = v; }

  int num_results() const { return static_cast<int>(results_.size()); }
  Value* result(int i = 0) const { return results_[i].get(); }

  const AttrMap& attrs() const { return attrs_; }
  AttrMap& mutable_attrs() { return attrs_; }
  // The attribute `name`, or nullptr when it was not given.
  const Attribute* FindAttr(absl::string_view name) const;

  SourceLoc loc() const { return loc_; }
  Graph* graph() const { return graph_; }

 private:
  friend class Graph;
  Op(std::string kind, std::vector<Value*> operands, AttrMap attrs,
     SourceLoc loc)
      : kind_(std::move(kind)),
        kind_id_(OpKindFromName(kind_).value_or(OpKind::kUnknown)),
        operands_(std::move(operands)), attrs_(std::move(attrs)), loc_(loc) {}

  std::string kind_;
  OpKind kind_id_;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  AttrMap attrs_;
  SourceLoc loc_;
  Graph* graph_ = nullptr;
  // This op's position in graph_->ops_, so that Erase and InsertOp before it
  // are O(1).
  std::list<std::unique_ptr<Op>>::iterator self_;
};

// A named function: parameters, ops in topological order, returned values.
class Graph {
 public:
  explicit Graph(std::string name, SourceLoc loc = {})
      : name_(std::move(name)), loc_(loc) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  SourceLoc loc() const { return loc_; }

  // The module holding this graph (kept current when the module is moved),
  // or nullptr for a graph built on its own. Passes and the interpreter use
  // it to resolve `@name` references such as a fusion op's body.
  Module* module() const { return module_; }

  // Adds a parameter `%name: type [const]`.
  Value* AddParam(std::string name, TensorType type, bool is_const = false,
                  SourceLoc loc = {});
  const std::vector<std::unique_ptr<Value>>& params() const { return params_; }
  Value* param(int i) const { return params_[i].get(); }
  int num_params() const { return static_cast<int>(params_.size()); }
  // The parameter named `name`, or nullptr.
  Value* FindParam(absl::string_view name) const;

  // Appends an op whose results have `result_types` (types are not checked
  // here: the Builder infers them, the Verifier checks them). Result names
  // default to "" and are assigned by the caller or the printer.
  Op* AddOp(std::string kind, std::vector<Value*> operands, AttrMap attrs,
            std::vector<TensorType> result_types, SourceLoc loc = {});
  // Like AddOp, but places the op immediately before `before` (an op of this
  // graph), or at the end when `before` is nullptr. The caller keeps the
  // order topological.
  Op* InsertOp(Op* before, std::string kind, std::vector<Value*> operands,
               AttrMap attrs, std::vector<TensorType> result_types,
               SourceLoc loc = {});

  // Ops in order. Iteration is stable under Erase of other ops.
  const std::list<std::unique_ptr<Op>>& ops() const { return ops_; }
  // A snapshot of op pointers, safe to iterate while erasing.
  std::vector<Op*> OpsSnapshot() const;
  // Removes `op` (an op of this graph) in O(1); its results must have no
  // remaining uses.
  void Erase(Op* op);
  // Replaces every use of `from` (operands and returns) with `to`.
  void ReplaceAllUsesWith(Value* from, Value* to);

  // Returned values and the result types the signature declares.
  const std::vector<Value*>& results() const { return results_; }
  void SetResults(std::vector<Value*> results, SourceLoc loc = {});
  const std::vector<TensorType>& declared_result_types() const {
    return declared_result_types_;
  }
  void SetDeclaredResultTypes(std::vector<TensorType> types) {
    declared_result_types_ = std::move(types);
  }
  SourceLoc return_loc() const { return return_loc_; }

 private:
  friend class Module;
  std::string name_;
  SourceLoc loc_;
  Module* module_ = nullptr;
  std::vector<std::unique_ptr<Value>> params_;
  std::list<std::unique_ptr<Op>> ops_;
  std::vector<Value*> results_;
  std::vector<TensorType> declared_result_types_;
  SourceLoc return_loc_;
};

// A `.graph` file: one or more graphs, looked up by name.
class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  // Moves keep every graph's module() pointing at the module holding it.
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;

  // Appends a graph (names are not checked here; the verifier does).
  Graph* AddGraph(std::string name, SourceLoc loc = {});
  const std::vector<std::unique_ptr<Graph>>& graphs() const { return graphs_; }
  // The graph named `name` (without '@'), or nullptr.
  Graph* FindGraph(absl::string_view name) const;
  // Removes and destroys `graph` (a graph of this module); nothing may still
  // refer to it.
  void EraseGraph(const Graph* graph);

  // Notes the passes leave for the user on what they looked at and left as
  // it was, and why (an attention block attention-fusion did not take);
  // `hgc --emit=loops` prints them. They are not part of the program: the
  // printer and the verifier ignore them.
  const std::vector<std::string>& notes() const { return notes_; }
  void AddNote(std::string note) { notes_.push_back(std::move(note)); }

 private:
  void AdoptGraphs();
  void RebuildIndex();

  std::vector<std::unique_ptr<Graph>> graphs_;
  // The first graph of each name, so lookups stay O(1) in modules with
  // thousands of fused bodies.
  absl::flat_hash_map<std::string, Graph*> by_name_;
  std::vector<std::string> notes_;
};

// The body graph a `fusion` op's `body` symbol names; nullptr when the op
// has no body symbol, its graph belongs to no module, or no graph has that
// name.
Graph* FusionBody(const Op& op);

// The group kind of a `fusion` op (its `kind` attribute); nullopt for any
// other op, or a fusion op whose kind is missing or not a known name.
std::optional<FusionKind> FusionKindOf(const Op& op);
// A fusion op of kind "matmul" or "mlp".
bool IsMatmulGroup(const Op& op);
// A fusion op of kind "softmax", "layernorm" or "reduce".
bool IsRowGroup(const Op& op);

}  // namespace hgc

#endif  // HGC_IR_GRAPH_H_
