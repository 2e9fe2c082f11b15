#include "passes/attention_transposes.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/attention_match.h"
#include "analysis/graph_utils.h"
#include "analysis/op_predicates.h"
#include "ir/builder.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// The permutation that swaps the last two of `rank` dims.
std::vector<int64_t> SwapLastTwo(int64_t rank) {
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[rank - 2], perm[rank - 1]);
  return perm;
}

// A transpose that swaps the last two dims and keeps the others.
bool IsLastTwoSwap(const Op& op) {
  if (op.kind_id() != OpKind::kTranspose) return false;
  const std::vector<int64_t> perm = TransposePermOf(op);
  return perm.size() >= 2 &&
         perm == SwapLastTwo(static_cast<int64_t>(perm.size()));
}

bool IsMatrixMatmul(const Op& op) {
  return op.kind_id() == OpKind::kMatmul && op.operand(0)->type().rank() >= 2 &&
         op.operand(1)->type().rank() >= 2;
}

// matmul(a, b) with the given flags (only the true ones written).
AttrMap MatmulAttrs(bool transpose_a, bool transpose_b) {
  AttrMap attrs;
  if (transpose_a) attrs["transpose_a"] = Attribute::Bool(true);
  if (transpose_b) attrs["transpose_b"] = Attribute::Bool(true);
  return attrs;
}

// One attention block in a transposed form (see the header).
struct Block {
  // Key-major scores: the ops from the scores matmul (first, operand -1)
  // to softmax's operand, each with the operand that reads the previous
  // one's result; empty when softmax is over the last axis.
  std::vector<ChainLink> scores;
  Op* softmax = nullptr;
  // The casts between softmax and P·V, in order.
  std::vector<Op*> casts;
  // The transposes of P's last two dims between softmax and P·V.
  std::vector<Op*> flips;
  Op* pv = nullptr;
  int p_operand = 0;  // P·V's operand that reads P
};

class BlockFinder {
 public:
  explicit BlockFinder(const Graph& graph) : uses_(graph) {}

  std::optional<Block> Find(Op* softmax) {
    const int64_t rank = softmax->result()->type().rank();
    if (rank < 2) return std::nullopt;
    const int64_t axis = SoftmaxAxis(*softmax);
    if (axis != rank - 1 && axis != rank - 2) return std::nullopt;
    const bool key_major = axis == rank - 2;
    Block block;
    block.softmax = softmax;
    if (key_major) {
      // Back through score ops that keep the scores' shape to the scores
      // matmul.
      std::optional<std::vector<ChainLink>> chain = WalkBackChain(
          uses_, softmax->operand(0), softmax, IsMatrixMatmul,
          [](const Op& op) {
            std::vector<int> chain;
            for (int c : ScoreChainOperands(op)) {
              if (op.operand(c)->type().shape == op.result()->type().shape) {
                chain.push_back(c);
              }
            }
            return chain;
          });
      if (!chain) return std::nullopt;
      block.scores = *std::move(chain);
    }
    // Forward through casts and transposes of the last two dims to P·V.
    Value* cur = softmax->result();
    for (;;) {
      const std::vector<Op*>& users = uses_.Users(cur);
      if (users.size() != 1 || !uses_.OnlyUsedBy(cur, users[0])) {
        return std::nullopt;
      }
      Op* user = users[0];
      if (user->kind_id() == OpKind::kCast) {
        block.casts.push_back(user);
      } else if (IsLastTwoSwap(*user)) {
        block.flips.push_back(user);
      } else if (IsMatrixMatmul(*user) &&
                 (user->operand(0) == cur) != (user->operand(1) == cur)) {
        block.pv = user;
        block.p_operand = user->operand(0) == cur ? 0 : 1;
        break;
      } else {
        return std::nullopt;
      }
      cur = user->result();
    }
    // Whether the matrix P·V's P operand holds is Pᵀ ([keys, queries]), and
    // whether the matmul transposes it.
    const bool stored_t = key_major != (block.flips.size() % 2 == 1);
    const bool flag = BoolAttr(
        *block.pv, block.p_operand == 0 ? "transpose_a" : "transpose_b");
    // P·V contracts over the keys: A must be P (stored_t == flag), B must be
    // Pᵀ (stored_t != flag).
    if ((block.p_operand == 0) != (stored_t == flag)) return std::nullopt;
    // Already in the form attention-fusion takes.
    if (!key_major && block.flips.empty() && block.p_operand == 0) {
      return std::nullopt;
    }
    return block;
  }

 private:
  UseInfo uses_;
};

class Rewriter {
 public:
  Rewriter(Graph& graph, const Block& block)
      : graph_(graph),
        block_(block),
        names_(graph),
        builder_(&graph, block.pv) {}

  absl::Status Run() {
    Value* p = block_.softmax->result();
    if (!block_.scores.empty()) {
      HGC_ASSIGN_OR_RETURN(p, RebuildScores());
    }
    for (Op* cast : block_.casts) {
      HGC_ASSIGN_OR_RETURN(p, Rebuild(*cast, {p}, cast->attrs()));
    }
    // P·V with P as its plain A operand; for Vᵀ·Pᵀ, (P·V)ᵀ = Vᵀ·Pᵀ.
    const Op& pv = *block_.pv;
    Value* x = pv.operand(1 - block_.p_operand);
    Value* old = pv.result();
    Value* out = nullptr;
    if (block_.p_operand == 0) {
      HGC_ASSIGN_OR_RETURN(
          out, builder_.Create("matmul", {p, x},
                               MatmulAttrs(false, BoolAttr(pv, "transpose_b")),
                               {}, pv.loc()));
    } else {
      HGC_ASSIGN_OR_RETURN(
          Value * o,
          builder_.Create("matmul", {p, x},
                          MatmulAttrs(false, !BoolAttr(pv, "transpose_a")), {},
                          pv.loc()));
      o->set_name(names_.Make("pv"));
      HGC_ASSIGN_OR_RETURN(
          out,
          builder_.Create(
              "transpose", {o},
              {{"perm", Attribute::IntList(SwapLastTwo(o->type().rank()))}}, {},
              pv.loc()));
    }
    graph_.ReplaceAllUsesWith(old, TakeName(out, old));
    return absl::OkStatus();
  }

 private:
  // `op` again with `operands` and `attrs`, its result taking the old
  // one's name.
  absl::StatusOr<Value*> Rebuild(const Op& op, std::vector<Value*> operands,
                                 AttrMap attrs) {
    HGC_ASSIGN_OR_RETURN(Value * v,
                         builder_.Create(op.kind(), std::move(operands),
                                         std::move(attrs), {}, op.loc()));
    return TakeName(v, op.result());
  }

  // The key-major chain rebuilt on S = Q·Kᵀ, up to softmax over the last
  // axis; returns softmax's result.
  absl::StatusOr<Value*> RebuildScores() {
    const Op& qk = *block_.scores.front().op;
    HGC_ASSIGN_OR_RETURN(Value * cur,
                         Rebuild(qk, {qk.operand(1), qk.operand(0)},
                                 MatmulAttrs(!BoolAttr(qk, "transpose_b"),
                                             !BoolAttr(qk, "transpose_a"))));
    for (size_t i = 1; i < block_.scores.size(); ++i) {
      const ChainLink& link = block_.scores[i];
      const Op& op = *link.op;
      const Value* chain = op.operand(link.operand);
      std::vector<Value*> operands;
      for (int j = 0; j < op.num_operands(); ++j) {
        if (op.operand(j) == chain) {
          operands.push_back(cur);
        } else {
          HGC_ASSIGN_OR_RETURN(Value * side, Transposed(op.operand(j)));
          operands.push_back(side);
        }
      }
      HGC_ASSIGN_OR_RETURN(cur, Rebuild(op, std::move(operands), op.attrs()));
    }
    AttrMap attrs = block_.softmax->attrs();
    attrs["axis"] = Attribute::Int(-1);
    return Rebuild(*block_.softmax, {cur}, std::move(attrs));
  }

  // A side operand of a key-major score op, as the op on S reads it: its
  // last two dims swapped (a value of rank 1 taken as one row). A value
  // with one element is itself; a swap with a dim of 1 is a reshape (the
  // same order; a literal constant is declared again with the new shape);
  // any other swap is a transpose.
  absl::StatusOr<Value*> Transposed(Value* v) {
    auto it = transposed_.find(v);
    if (it != transposed_.end()) return it->second;
    const Shape& shape = v->type().shape;
    Value* result = v;
    if (v->type().NumElements() != 1) {
      std::vector<int64_t> dims(shape.begin(), shape.end());
      if (dims.size() < 2) dims.insert(dims.begin(), 1);
      const size_t r = dims.size();
      const bool reorders = dims[r - 2] != 1 && dims[r - 1] != 1;
      std::swap(dims[r - 2], dims[r - 1]);
      const Op* constant = LiteralConstantOp(v);
      const SourceLoc loc =
          v->defining_op() != nullptr ? v->defining_op()->loc() : v->loc();
      if (constant != nullptr && (!reorders || SplatValue(v).has_value())) {
        HGC_ASSIGN_OR_RETURN(
            result,
            builder_.Create(
                "constant", {}, constant->attrs(),
                {TensorType(v->type().dtype, Shape(dims.begin(), dims.end()))},
                constant->loc()));
      } else if (!reorders) {
        HGC_ASSIGN_OR_RETURN(
            result,
            builder_.Create("reshape", {v},
                            {{"shape", Attribute::IntList(dims)}}, {}, loc));
      } else {
        HGC_ASSIGN_OR_RETURN(
            result,
            builder_.Create(
                "transpose", {v},
                {{"perm", Attribute::IntList(SwapLastTwo(shape.size()))}}, {},
                loc));
      }
      result->set_name(
          names_.Make(v->name().empty() ? "side_t" : v->name() + "_t"));
    }
    transposed_[v] = result;
    return result;
  }

  Graph& graph_;
  const Block& block_;
  FreshNames names_;
  Builder builder_;
  absl::flat_hash_map<Value*, Value*> transposed_;
};

}  // namespace

absl::StatusOr<int> UntransposeAttention(Graph& graph) {
  // One block per sweep, as a rewrite changes the use lists. A rewritten
  // block is in the form the finder skips, so the number of softmaxes
  // bounds the sweeps.
  int softmaxes = 0;
  for (const auto& op : graph.ops()) {
    softmaxes += op->kind_id() == OpKind::kSoftmax;
  }
  int rewritten = 0;
  while (rewritten < softmaxes) {
    BlockFinder finder(graph);
    std::optional<Block> block;
    for (const auto& op : graph.ops()) {
      if (op->kind_id() != OpKind::kSoftmax) continue;
      block = finder.Find(op.get());
      if (block.has_value()) break;
    }
    if (!block.has_value()) break;
    HGC_RETURN_IF_ERROR(Rewriter(graph, *block).Run());
    EraseDeadOps(graph);
    ++rewritten;
  }
  return rewritten;
}

absl::StatusOr<bool> AttentionTransposesPass::Run(Module& module) {
  int n = 0;
  for (Graph* graph : TopLevelGraphs(module)) {
    HGC_ASSIGN_OR_RETURN(int k, UntransposeAttention(*graph));
    n += k;
  }
  return n > 0;
}

}  // namespace hgc
