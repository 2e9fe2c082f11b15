// attention-reshapes' rebuild (passes/attention_reshapes_internal.h): the
// shape each operand takes in the target prefix (RegroupBatchDims) and the
// block rebuilt in it.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/attention_match.h"
#include "analysis/graph_utils.h"
#include "ir/builder.h"
#include "passes/attention_reshapes.h"
#include "passes/attention_reshapes_internal.h"
#include "support/status_macros.h"

namespace hgc {

using attention_reshapes_internal::BatchDims;
using attention_reshapes_internal::Block;
using attention_reshapes_internal::Concat;
using attention_reshapes_internal::Dims;
using attention_reshapes_internal::MatrixDims;
using attention_reshapes_internal::PrefixDims;
using attention_reshapes_internal::Product;

std::optional<Dims> RegroupBatchDims(const Dims& dims, const Dims& from,
                                     const Dims& to) {
  if (dims.size() > from.size() || Product(from) != Product(to) ||
      Product(from) == 0) {
    return std::nullopt;
  }
  Dims side(from.size() - dims.size(), 1);
  side.insert(side.end(), dims.begin(), dims.end());
  Dims out;
  size_t i = 0, j = 0;
  while (i < from.size() || j < to.size()) {
    // Unit dims on either side form groups of their own.
    if (i < from.size() && from[i] == 1) {
      if (side[i++] != 1) return std::nullopt;
      continue;
    }
    if (j < to.size() && to[j] == 1) {
      ++j;
      out.push_back(1);
      continue;
    }
    // The shortest runs from[i, i1) and to[j, j1) with equal products.
    size_t i1 = i + 1, j1 = j + 1;
    int64_t pf = from[i], pt = to[j];
    while (pf != pt) {
      if (pf < pt) {
        pf *= from[i1++];
      } else {
        pt *= to[j1++];
      }
    }
    // The operand is full or broadcast over the whole run; a run of
    // mixed dims ([2, 1] of [2, 4]) has no regrouped form.
    bool full = true, broadcast = true;
    for (size_t k = i; k < i1; ++k) {
      if (from[k] == 1) continue;
      if (side[k] != from[k]) full = false;
      if (side[k] != 1) broadcast = false;
    }
    if (!full && !broadcast) return std::nullopt;
    for (size_t k = j; k < j1; ++k) out.push_back(full ? to[k] : 1);
    i = i1;
    j = j1;
  }
  return out;
}

namespace {

// Rebuilds one block with prefix `target` (its batch dims, then rows),
// inserting before its P·V.
class Rebuilder {
 public:
  Rebuilder(Graph& graph, const Block& block, Dims target)
      : graph_(graph),
        block_(block),
        target_(std::move(target)),
        builder_(&graph, block.links.back().op) {}

  // Whether every operand the new shape needs regroups exactly.
  bool Feasible() {
    for (const ChainLink& link : block_.links) {
      const Op& op = *link.op;
      if (op.kind_id() == OpKind::kReshape) continue;
      if (!OperandsFit(op, link.operand)) return false;
    }
    return true;
  }

  absl::Status Run() {
    Value* cur = nullptr;
    for (const ChainLink& link : block_.links) {
      const Op& op = *link.op;
      if (op.kind_id() == OpKind::kReshape) continue;
      HGC_ASSIGN_OR_RETURN(cur, Rebuild(op, link.operand, cur));
      if (&op != block_.links.back().op) cur->set_name(op.result()->name());
    }
    // P·V's readers see its old shape.
    Value* old = block_.links.back().op->result();
    Value* out = cur;
    if (cur->type() != old->type()) {
      const Shape& s = old->type().shape;
      HGC_ASSIGN_OR_RETURN(
          out, builder_.Create(
                   "reshape", {cur},
                   {{"shape", Attribute::IntList(Dims(s.begin(), s.end()))}},
                   {}, old->defining_op()->loc()));
    }
    out->set_name(old->name());
    for (const ChainLink& link : block_.links) {
      if (link.op != block_.links.back().op) link.op->result()->set_name("");
    }
    old->set_name("");
    graph_.ReplaceAllUsesWith(old, out);
    return absl::OkStatus();
  }

 private:
  // How an operand relates to its op's result prefix.
  enum class Role {
    kSide,  // broadcasts against the whole result
    kLhs,   // a matmul's A: its batch dims and rows are the result's
    kRhs,   // a matmul's B: its batch dims, then the rows it broadcasts over
  };

  static Role RoleOf(const Op& op, int i) {
    if (op.kind_id() != OpKind::kMatmul) return Role::kSide;
    return i == 0 ? Role::kLhs : Role::kRhs;
  }
  static bool TransposeA(const Op& op) {
    const Attribute* ta = op.FindAttr("transpose_a");
    return ta != nullptr && ta->is_bool() && ta->as_bool();
  }
  // Whether operand i of `op` reads the scores (mul(s, s) reads them
  // twice; regrouping the old value would keep the old chain alive).
  static bool IsChain(const Op& op, int chain, int i) {
    return chain >= 0 && op.operand(i) == op.operand(chain);
  }
  bool IsSideMatmul(const Value* v) const {
    const Op* def = v->defining_op();
    return def != nullptr &&
           std::find(block_.side_matmuls.begin(), block_.side_matmuls.end(),
                     def) != block_.side_matmuls.end();
  }

  // Whether every operand of `op` but the chain one takes the new shape.
  bool OperandsFit(const Op& op, int chain) const {
    const Dims from = PrefixDims(op.result()->type().shape);
    for (int i = 0; i < op.num_operands(); ++i) {
      if (IsChain(op, chain, i)) continue;
      const Value* x = op.operand(i);
      if (IsSideMatmul(x)) {
        if (!OperandsFit(*x->defining_op(), -1)) return false;
        continue;
      }
      if (!NewShape(x, from, RoleOf(op, i), TransposeA(op))) return false;
    }
    return true;
  }

  // `op` in the new shape, `chain` (its operand that reads `cur`) aside.
  absl::StatusOr<Value*> Rebuild(const Op& op, int chain, Value* cur) {
    const Dims from = PrefixDims(op.result()->type().shape);
    std::vector<Value*> operands;
    for (int i = 0; i < op.num_operands(); ++i) {
      if (IsChain(op, chain, i)) {
        operands.push_back(cur);
        continue;
      }
      Value* x = op.operand(i);
      if (IsSideMatmul(x)) {
        HGC_ASSIGN_OR_RETURN(Value * side, Rebuild(*x->defining_op(), -1, cur));
        side->set_name(x->name());
        x->set_name("");
        operands.push_back(side);
        continue;
      }
      HGC_ASSIGN_OR_RETURN(Value * regrouped,
                           Regrouped(x, from, RoleOf(op, i), TransposeA(op)));
      operands.push_back(regrouped);
    }
    AttrMap attrs = op.attrs();
    if (op.kind_id() == OpKind::kSoftmax) attrs["axis"] = Attribute::Int(-1);
    return builder_.Create(op.kind(), std::move(operands), std::move(attrs), {},
                           op.loc());
  }

  // The shape operand `v` of an op with result prefix `from` takes when
  // the op moves to prefix target_ (Role above); nullopt when it cannot be
  // regrouped exactly.
  std::optional<Dims> NewShape(const Value* v, const Dims& from, Role role,
                               bool transpose_a) const {
    const Shape& shape = v->type().shape;
    const int64_t rows = from.empty() ? 1 : from.back();
    Dims prefix, tail;
    switch (role) {
      case Role::kSide: {
        const size_t rank = from.size() + 1;
        if (shape.size() > rank) return std::nullopt;
        Dims padded(rank - shape.size(), 1);
        padded.insert(padded.end(), shape.begin(), shape.end());
        prefix.assign(padded.begin(), padded.begin() + from.size());
        tail.assign(padded.begin() + from.size(), padded.end());
        break;
      }
      case Role::kLhs:
        // A transposed A keeps its rows as they are: [batch, K, rows].
        if (transpose_a) {
          if (target_.empty() || target_.back() != rows) return std::nullopt;
          prefix = Concat(BatchDims(shape), {rows});
          tail = MatrixDims(shape);
        } else {
          prefix = PrefixDims(shape);
          tail = {shape.back()};
        }
        break;
      case Role::kRhs:
        prefix = Concat(BatchDims(shape), {1});
        tail = MatrixDims(shape);
        break;
    }
    std::optional<Dims> regrouped = RegroupBatchDims(prefix, from, target_);
    if (!regrouped.has_value()) return std::nullopt;
    if (role == Role::kRhs || (role == Role::kLhs && transpose_a)) {
      regrouped->pop_back();  // the rows, which B does not have
    }
    return Concat(*std::move(regrouped), tail);
  }

  // `v` as an operand of the rebuilt op: itself when its shape already
  // broadcasts the same way, else a reshape of it (of what it reshapes,
  // when it is a reshape), or the same literal constant declared with the
  // new shape.
  absl::StatusOr<Value*> Regrouped(Value* v, const Dims& from, Role role,
                                   bool transpose_a) {
    std::optional<Dims> shape = NewShape(v, from, role, transpose_a);
    if (!shape.has_value()) {
      return absl::InternalError("attention-reshapes: operand lost its shape");
    }
    const Shape& old = v->type().shape;
    // Leading 1s do not change how an operand broadcasts, as long as it
    // does not have more dims than the op's new result.
    const auto strip = [](const Dims& d) {
      size_t k = 0;
      while (k < d.size() && d[k] == 1) ++k;
      return Dims(d.begin() + k, d.end());
    };
    const Dims old_dims(old.begin(), old.end());
    if (old_dims.size() <= target_.size() + 1 &&
        strip(old_dims) == strip(*shape)) {
      return v;
    }
    while (v->defining_op() != nullptr &&
           v->defining_op()->kind_id() == OpKind::kReshape) {
      v = v->defining_op()->operand(0);
    }
    if (Dims(v->type().shape.begin(), v->type().shape.end()) == *shape) {
      return v;
    }
    if (const Op* c = LiteralConstantOp(v)) {
      return builder_.Create(
          "constant", {}, c->attrs(),
          {TensorType(v->type().dtype, Shape(shape->begin(), shape->end()))},
          c->loc());
    }
    return builder_.Create(
        "reshape", {v}, {{"shape", Attribute::IntList(*shape)}}, {},
        v->defining_op() != nullptr ? v->defining_op()->loc() : v->loc());
  }

  Graph& graph_;
  const Block& block_;
  const Dims target_;
  Builder builder_;
};

}  // namespace

namespace attention_reshapes_internal {

absl::StatusOr<bool> RebuildIfFeasible(Graph& graph, const Block& block,
                                       Dims target) {
  Rebuilder rebuilder(graph, block, std::move(target));
  if (!rebuilder.Feasible()) return false;
  HGC_RETURN_IF_ERROR(rebuilder.Run());
  return true;
}

}  // namespace attention_reshapes_internal
}  // namespace hgc
