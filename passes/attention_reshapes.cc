#include "passes/attention_reshapes.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "analysis/attention_match.h"
#include "analysis/graph_utils.h"
#include "ir/dtype.h"
#include "passes/attention_reshapes_internal.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

using attention_reshapes_internal::BatchDims;
using attention_reshapes_internal::Block;
using attention_reshapes_internal::Concat;
using attention_reshapes_internal::Dims;
using attention_reshapes_internal::MatrixDims;
using attention_reshapes_internal::PrefixDims;
using attention_reshapes_internal::Product;
using attention_reshapes_internal::RebuildIfFeasible;

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
      HGC_ASSIGN_OR_RETURN(
          const bool rebuilt,
          RebuildIfFeasible(graph, *block, *std::move(target)));
      if (!rebuilt) continue;
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
