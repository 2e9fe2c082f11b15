#include "passes/attention_reshapes.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/attention_match.h"
#include "analysis/graph_utils.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

using Dims = std::vector<int64_t>;

// All dims but the last two (the batch dims of a matmul operand or of the
// scores).
Dims BatchDims(const Shape& shape) {
  return Dims(shape.begin(), shape.end() - std::min<size_t>(2, shape.size()));
}

// All dims but the last (batch dims and rows of a matmul result or of the
// scores: what a regroup may change, keys staying the last dim).
Dims PrefixDims(const Shape& shape) {
  return Dims(shape.begin(), shape.end() - std::min<size_t>(1, shape.size()));
}

// The last two dims.
Dims MatrixDims(const Shape& shape) {
  return Dims(shape.end() - std::min<size_t>(2, shape.size()), shape.end());
}

Dims Concat(Dims a, const Dims& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

int64_t Product(const Dims& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// The prefix products of `dims` at which a dim ends, ignoring dims of 1
// and the full product: where the flat batch index can be cut.
std::set<int64_t> Cuts(const Dims& dims) {
  std::set<int64_t> cuts;
  int64_t p = 1;
  for (int64_t d : dims) {
    p *= d;
    if (d != 1) cuts.insert(p);
  }
  cuts.erase(p);
  return cuts;
}

// A reshape that keeps the last two dims and regroups the others.
bool IsBatchRegroup(const Op& op) {
  if (op.kind_id() != OpKind::kReshape) return false;
  const Shape& in = op.operand(0)->type().shape;
  const Shape& out = op.result()->type().shape;
  return in.size() >= 2 && out.size() >= 2 && MatrixDims(in) == MatrixDims(out);
}

// A reshape that keeps the last dim and regroups the others: batch dims,
// or rows too (DeepSeek's MLA views scores [B, S·H, T] as [B, S, H, T]
// around its mask).
bool IsPrefixRegroup(const Op& op) {
  if (op.kind_id() != OpKind::kReshape) return false;
  const Shape& in = op.operand(0)->type().shape;
  const Shape& out = op.result()->type().shape;
  return in.size() >= 2 && out.size() >= 2 && in.back() == out.back();
}

// One attention block: the ops from the scores matmul to the P·V matmul.
struct Block {
  // The scores matmul first (operand -1), each op with the operand that
  // reads the previous one's result.
  std::vector<ChainLink> links;
  bool has_reshape = false;
  // Finer batch shapes the block's operands come from and its result goes
  // to: Q, K or V as reshapes merging batch dims ([2, 4, S, D] viewed as
  // [8, S, D], diffusers' 3-D attention), P·V's result read by the reshape
  // back. Rebuilding the block in such a shape lets attention-fusion read
  // the operands in place instead of copying each merged view.
  std::vector<Dims> hints;
  // Matmuls whose result a score op adds to the scores and nothing else
  // reads (MLA's q_nope·k_nopeᵀ + q_pe·k_peᵀ): rebuilt with the block.
  std::vector<const Op*> side_matmuls;
};

class BlockFinder {
 public:
  explicit BlockFinder(const Graph& graph) : uses_(graph) {}

  std::optional<Block> Find(Op* softmax) {
    const int64_t rank = softmax->result()->type().rank();
    if (rank < 2 || SoftmaxAxis(*softmax) != rank - 1) return std::nullopt;
    // Back through score ops and batch regroups to the scores matmul. A
    // side operand must not grow the scores: a score op's result has its
    // chain operand's shape.
    std::optional<std::vector<ChainLink>> chain = WalkBackChain(
        uses_, softmax->operand(0), softmax,
        [](const Op& op) {
          return op.kind_id() == OpKind::kMatmul &&
                 op.operand(0)->type().rank() >= 2 &&
                 op.operand(1)->type().rank() >= 2;
        },
        [](const Op& op) {
          if (op.kind_id() == OpKind::kReshape) {
            return IsPrefixRegroup(op) ? std::vector<int>{0}
                                       : std::vector<int>{};
          }
          std::vector<int> chain;
          for (int c : ScoreChainOperands(op)) {
            if (op.operand(c)->type().shape == op.result()->type().shape) {
              chain.push_back(c);
            }
          }
          return chain;
        });
    if (!chain) return std::nullopt;
    Block block;
    block.links = *std::move(chain);
    for (const ChainLink& link : block.links) {
      if (link.op->kind_id() == OpKind::kReshape) block.has_reshape = true;
    }
    block.links.push_back({softmax, 0});
    for (Value* cur = softmax->result();;) {
      const std::vector<Op*>& users = uses_.Users(cur);
      if (users.size() != 1 || !uses_.OnlyUsedBy(cur, users[0])) {
        return std::nullopt;
      }
      Op* user = users[0];
      if (user->kind_id() == OpKind::kMatmul) {
        const Attribute* ta = user->FindAttr("transpose_a");
        if (user->operand(0) != cur || user->operand(1) == cur ||
            user->operand(1)->type().rank() < 2 ||
            (ta != nullptr && ta->is_bool() && ta->as_bool())) {
          return std::nullopt;
        }
        block.links.push_back({user, 0});
        break;
      }
      if (user->kind_id() == OpKind::kReshape) {
        if (!IsPrefixRegroup(*user)) return std::nullopt;
        block.has_reshape = true;
      } else if (user->kind_id() != OpKind::kCast) {
        return std::nullopt;
      }
      block.links.push_back({user, 0});
      cur = user->result();
    }
    // attention-fusion takes float Q, K and V only; rebuilding another
    // block would only move its reshapes around.
    const Op* qk = block.links.front().op;
    const Op* pv = block.links.back().op;
    for (const Value* x : {qk->operand(0), qk->operand(1), pv->operand(1)}) {
      if (!IsFloat(x->type().dtype)) return std::nullopt;
    }
    // Hints in prefix terms: Q's and O's prefix are the scores' (batch and
    // rows); K's and V's batch dims are followed by the rows.
    const Shape& scores = qk->result()->type().shape;
    const int64_t prefix = Product(PrefixDims(scores));
    auto hint = [&](const Op* op, bool rows_follow) {
      if (op == nullptr || !IsBatchRegroup(*op)) return;
      for (const Value* v : {op->operand(0), op->result()}) {
        Dims dims = rows_follow ? Concat(BatchDims(v->type().shape),
                                         {scores[scores.size() - 2]})
                                : PrefixDims(v->type().shape);
        if (Product(dims) == prefix) block.hints.push_back(std::move(dims));
      }
    };
    hint(qk->operand(0)->defining_op(), false);
    hint(qk->operand(1)->defining_op(), true);
    hint(pv->operand(1)->defining_op(), true);
    const std::vector<Op*>& out_users = uses_.Users(pv->result());
    if (out_users.size() == 1) hint(out_users[0], false);
    for (const ChainLink& link : block.links) {
      if (link.operand < 0) continue;
      for (int i = 0; i < link.op->num_operands(); ++i) {
        const Value* x = link.op->operand(i);
        const Op* def = x->defining_op();
        if (i == link.operand || def == nullptr ||
            def->kind_id() != OpKind::kMatmul ||
            x->type() != link.op->result()->type() ||
            !uses_.OnlyUsedBy(x, link.op)) {
          continue;
        }
        block.side_matmuls.push_back(def);
      }
    }
    return block;
  }

 private:
  UseInfo uses_;
};

// The prefix (batch dims, then rows) to rebuild `block` in: the one with
// the fewest dims that every prefix of the chain merges from (an existing
// one when one is, so that the ops keep their shapes); nullopt when the
// prefixes cut the flat row index at points that do not nest ([2, 6] and
// [3, 4]).
std::optional<Dims> TargetBatch(const Block& block) {
  std::vector<Dims> shapes;
  for (const ChainLink& link : block.links) {
    shapes.push_back(PrefixDims(link.op->result()->type().shape));
  }
  shapes.insert(shapes.end(), block.hints.begin(), block.hints.end());
  const int64_t total = Product(shapes.front());
  if (total == 0) return std::nullopt;
  std::set<int64_t> cuts;
  for (const Dims& s : shapes) {
    if (Product(s) != total) return std::nullopt;
    std::set<int64_t> c = Cuts(s);
    cuts.insert(c.begin(), c.end());
  }
  for (const Dims& s : shapes) {
    if (Cuts(s) == cuts) return s;
  }
  Dims target;
  int64_t prev = 1;
  cuts.insert(total);
  for (int64_t c : cuts) {
    if (c % prev != 0) return std::nullopt;
    target.push_back(c / prev);
    prev = c;
  }
  return target;
}

}  // namespace

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

absl::StatusOr<int> MoveAttentionReshapes(Graph& graph) {
  // One block per sweep, as a rewrite changes the use lists. A rebuilt
  // block has no reshapes left, so it is not taken again; the bound only
  // guards against blocks feeding each other's matmuls back and forth.
  int softmaxes = 0;
  for (const auto& op : graph.ops()) {
    softmaxes += op->kind_id() == OpKind::kSoftmax;
  }
  int rewritten = 0;
  while (rewritten < softmaxes) {
    BlockFinder finder(graph);
    bool changed = false;
    for (const auto& op : graph.ops()) {
      if (op->kind_id() != OpKind::kSoftmax) continue;
      std::optional<Block> block = finder.Find(op.get());
      if (!block.has_value()) continue;
      std::optional<Dims> target = TargetBatch(*block);
      if (!target.has_value()) continue;
      // Without reshapes in the chain, only a finer shape is worth a
      // rebuild.
      const Dims current =
          PrefixDims(block->links.front().op->result()->type().shape);
      if (!block->has_reshape && Cuts(*target) == Cuts(current)) continue;
      Rebuilder rebuilder(graph, *block, *std::move(target));
      if (!rebuilder.Feasible()) continue;
      HGC_RETURN_IF_ERROR(rebuilder.Run());
      changed = true;
      break;
    }
    if (!changed) break;
    EraseDeadOps(graph);
    ++rewritten;
  }
  return rewritten;
}

absl::StatusOr<bool> AttentionReshapesPass::Run(Module& module) {
  int n = 0;
  for (Graph* graph : TopLevelGraphs(module)) {
    HGC_ASSIGN_OR_RETURN(int k, MoveAttentionReshapes(*graph));
    n += k;
  }
  return n > 0;
}

}  // namespace hgc
