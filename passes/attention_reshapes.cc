#include "passes/attention_reshapes.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "passes/attention_match.h"
#include "passes/graph_utils.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

using Dims = std::vector<int64_t>;

// All dims but the last two (the batch dims of a matmul operand or of the
// scores).
Dims BatchDims(const Shape& shape) {
  return Dims(shape.begin(), shape.end() - std::min<size_t>(2, shape.size()));
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
            return IsBatchRegroup(op) ? std::vector<int>{0}
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
        if (!IsBatchRegroup(*user)) return std::nullopt;
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
    const int64_t batch = Product(BatchDims(qk->result()->type().shape));
    auto hint = [&](const Op* op) {
      if (op == nullptr || !IsBatchRegroup(*op)) return;
      for (const Value* v : {op->operand(0), op->result()}) {
        Dims dims = BatchDims(v->type().shape);
        if (Product(dims) == batch) block.hints.push_back(std::move(dims));
      }
    };
    for (const Value* x : {qk->operand(0), qk->operand(1), pv->operand(1)}) {
      hint(x->defining_op());
    }
    const std::vector<Op*>& out_users = uses_.Users(pv->result());
    if (out_users.size() == 1) hint(out_users[0]);
    return block;
  }

 private:
  UseInfo uses_;
};

// The batch shape to rebuild `block` in: the one with the fewest dims that
// every batch shape of the chain merges from (an existing one when one
// is, so that the ops keep their shapes); nullopt when the batch shapes
// cut the flat batch index at points that do not nest ([2, 6] and [3, 4]).
std::optional<Dims> TargetBatch(const Block& block) {
  std::vector<Dims> shapes;
  for (const ChainLink& link : block.links) {
    shapes.push_back(BatchDims(link.op->result()->type().shape));
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

// Rebuilds one block in batch shape `target`, inserting before its P·V.
class Rebuilder {
 public:
  Rebuilder(Graph& graph, const Block& block, Dims target)
      : graph_(graph), block_(block), target_(std::move(target)),
        builder_(&graph, block.links.back().op) {}

  // Whether every operand the new shape needs regroups exactly.
  bool Feasible() {
    for (const ChainLink& link : block_.links) {
      const Op& op = *link.op;
      if (op.kind_id() == OpKind::kReshape) continue;
      const Dims from = BatchDims(op.result()->type().shape);
      for (int i = 0; i < op.num_operands(); ++i) {
        if (IsChain(op, link.operand, i)) continue;
        if (!NewShape(op.operand(i), from, IsMatmul(op))) {
          return false;
        }
      }
    }
    return true;
  }

  absl::Status Run() {
    Value* cur = nullptr;
    for (const ChainLink& link : block_.links) {
      const Op& op = *link.op;
      if (op.kind_id() == OpKind::kReshape) continue;
      const Dims from = BatchDims(op.result()->type().shape);
      std::vector<Value*> operands;
      for (int i = 0; i < op.num_operands(); ++i) {
        if (IsChain(op, link.operand, i)) {
          operands.push_back(cur);
          continue;
        }
        HGC_ASSIGN_OR_RETURN(Value * x,
                             Regrouped(op.operand(i), from, IsMatmul(op)));
        operands.push_back(x);
      }
      AttrMap attrs = op.attrs();
      if (op.kind_id() == OpKind::kSoftmax) attrs["axis"] = Attribute::Int(-1);
      HGC_ASSIGN_OR_RETURN(
          cur, builder_.Create(op.kind(), std::move(operands), std::move(attrs),
                               {}, op.loc()));
      if (&op != block_.links.back().op) cur->set_name(op.result()->name());
    }
    // P·V's readers see its old shape.
    Value* old = block_.links.back().op->result();
    Value* out = cur;
    if (cur->type() != old->type()) {
      const Shape& s = old->type().shape;
      HGC_ASSIGN_OR_RETURN(
          out, builder_.Create("reshape", {cur},
                               {{"shape", Attribute::IntList(
                                              Dims(s.begin(), s.end()))}},
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
  static bool IsMatmul(const Op& op) { return op.kind_id() == OpKind::kMatmul; }
  // Whether operand i of `op` reads the scores (mul(s, s) reads them
  // twice; regrouping the old value would keep the old chain alive).
  static bool IsChain(const Op& op, int chain, int i) {
    return chain >= 0 && op.operand(i) == op.operand(chain);
  }

  // The shape operand `v` takes when its op moves from batch dims `from`
  // to target_: a matmul operand's batch dims are those before its last
  // two; a side operand broadcasts against the whole result. nullopt
  // when it cannot be regrouped exactly.
  std::optional<Dims> NewShape(const Value* v, const Dims& from,
                               bool matmul_operand) const {
    const Shape& shape = v->type().shape;
    Dims batch, tail;
    if (matmul_operand) {
      batch = BatchDims(shape);
      tail = MatrixDims(shape);
    } else {
      const size_t rank = from.size() + 2;
      if (shape.size() > rank) return std::nullopt;
      Dims padded(rank - shape.size(), 1);
      padded.insert(padded.end(), shape.begin(), shape.end());
      batch.assign(padded.begin(), padded.begin() + from.size());
      tail.assign(padded.begin() + from.size(), padded.end());
    }
    std::optional<Dims> regrouped = RegroupBatchDims(batch, from, target_);
    if (!regrouped.has_value()) return std::nullopt;
    return Concat(*std::move(regrouped), tail);
  }

  // `v` as an operand of the rebuilt op: itself when its shape already
  // broadcasts the same way, else a reshape of it (of what it reshapes,
  // when it is a reshape), or the same literal constant declared with the
  // new shape.
  absl::StatusOr<Value*> Regrouped(Value* v, const Dims& from,
                                   bool matmul_operand) {
    std::optional<Dims> shape = NewShape(v, from, matmul_operand);
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
    if (old_dims.size() <= target_.size() + 2 &&
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
      return builder_.Create("constant", {}, c->attrs(),
                             {TensorType(v->type().dtype,
                                         Shape(shape->begin(), shape->end()))},
                             c->loc());
    }
    return builder_.Create("reshape", {v},
                           {{"shape", Attribute::IntList(*shape)}}, {},
                           v->defining_op() != nullptr
                               ? v->defining_op()->loc()
                               : v->loc());
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
          BatchDims(block->links.front().op->result()->type().shape);
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
