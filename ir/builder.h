// Builder: creates type-checked ops at an insertion point of a graph (its
// end by default). The parser and every pass construct IR through it, so
// inference and attribute validation happen in one place.
#ifndef HGC_IR_BUILDER_H_
#define HGC_IR_BUILDER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace hgc {

class Builder {
 public:
  explicit Builder(Graph* graph) : graph_(graph) {}
  // A builder inserting immediately before `before`, an op of `graph`.
  Builder(Graph* graph, Op* before) : graph_(graph), insert_before_(before) {}

  // New ops go immediately before `before` (an op of graph()), or at the end
  // of the graph when it is nullptr.
  void SetInsertionPoint(Op* before) { insert_before_ = before; }
  Op* insertion_point() const { return insert_before_; }

  // Inserts `kind(operands) {attrs}` and returns its (single) result.
  // `declared` are result types written by the user (required for
  // `constant`); when given they must match inference. Errors are
  // InvalidArgument located at `loc`.
  absl::StatusOr<Value*> Create(absl::string_view kind,
                                std::vector<Value*> operands,
                                AttrMap attrs = {},
                                std::vector<TensorType> declared = {},
                                SourceLoc loc = {});

  // Like Create, for ops that may return several results.
  absl::StatusOr<Op*> CreateOp(absl::string_view kind,
                               std::vector<Value*> operands, AttrMap attrs,
                               std::vector<TensorType> declared, SourceLoc loc);

  // Conveniences for the common ops.
  absl::StatusOr<Value*> Matmul(Value* a, Value* b, bool transpose_a = false,
                                bool transpose_b = false);
  absl::StatusOr<Value*> Binary(absl::string_view kind, Value* a, Value* b) {
    return Create(kind, {a, b});
  }
  absl::StatusOr<Value*> Unary(absl::string_view kind, Value* x) {
    return Create(kind, {x});
  }
  // A constant of `type` filled with `value`.
  absl::StatusOr<Value*> Splat(double value, TensorType type);

  Graph* graph() const { return graph_; }

 private:
  Graph* graph_;
  Op* insert_before_ = nullptr;
};

}  // namespace hgc

#endif  // HGC_IR_BUILDER_H_
