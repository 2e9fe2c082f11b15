#include "passes/attention_transposes.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "passes/graph_utils.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

bool BoolAttr(const Op& op, absl::string_view name) {
  const Attribute* a = op.FindAttr(name);
  return a != nullptr && a->is_bool() && a->as_bool();
}

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
    if (SoftmaxAxis(*softmax) != rank - 1) return std::nullopt;
    Block block;
    block.softmax = softmax;
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
    const bool stored_t = block.flips.size() % 2 == 1;
    const bool flag = BoolAttr(
        *block.pv, block.p_operand == 0 ? "transpose_a" : "transpose_b");
    // P·V contracts over the keys: A must be P (stored_t == flag), B must be
    // Pᵀ (stored_t != flag).
    if ((block.p_operand == 0) != (stored_t == flag)) return std::nullopt;
    // Already in the form attention-fusion takes.
    if (block.flips.empty() && block.p_operand == 0) {
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

  Graph& graph_;
  const Block& block_;
  FreshNames names_;
  Builder builder_;
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
