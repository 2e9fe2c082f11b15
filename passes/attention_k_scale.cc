#include "passes/attention_k_scale.h"

#include <cmath>
#include <optional>
#include <vector>

#include "analysis/attention_match.h"
#include "analysis/graph_utils.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// The scale that can move: a literal one-element f32 constant, finite,
// nonzero and at most 1 in magnitude.
bool MovableScale(const Value* c) {
  if (c->type().dtype != DType::kF32 || c->type().NumElements() != 1) {
    return false;
  }
  const std::optional<double> v = SplatValue(c);
  return v.has_value() && std::isfinite(*v) && *v != 0 && std::fabs(*v) <= 1;
}

struct KScale {
  Op* mul = nullptr;
  int scaled = -1;      // the operand of `mul` that is K
  Op* first = nullptr;  // the op reading mul's result (maybe the matmul)
};

// The scale on `matmul`'s B operand, seen through single-reader transposes
// and reshapes; nullopt when there is none that may move.
std::optional<KScale> FindKScale(const UseInfo& uses, Op& matmul) {
  Op* reader = &matmul;
  Value* cur = matmul.operand(1);
  for (;;) {
    if (cur->is_param() || uses.NumUses(cur) != 1 || uses.IsReturned(cur)) {
      return std::nullopt;
    }
    Op* def = cur->defining_op();
    const OpKind k = def->kind_id();
    if (k == OpKind::kTranspose || k == OpKind::kReshape) {
      reader = def;
      cur = def->operand(0);
      continue;
    }
    if (k != OpKind::kMul) return std::nullopt;
    for (int scaled = 0; scaled < 2; ++scaled) {
      const Value* x = def->operand(scaled);
      if (x->type() == cur->type() && MovableScale(def->operand(1 - scaled))) {
        return KScale{def, scaled, reader};
      }
    }
    return std::nullopt;
  }
}

}  // namespace

absl::StatusOr<int> MoveAttentionKScales(Graph& graph) {
  int moved = 0;
  // Use lists, recomputed after each rewrite (which makes them stale).
  std::optional<UseInfo> use_info;
  for (Op* softmax : graph.OpsSnapshot()) {
    if (softmax->kind_id() != OpKind::kSoftmax ||
        SoftmaxAxis(*softmax) != softmax->result()->type().rank() - 1) {
      continue;
    }
    if (!use_info) use_info.emplace(graph);
    const UseInfo& uses = *use_info;
    // Back through single-reader score ops to the scores matmul, as
    // attention-fusion walks (the first link ends the chain).
    std::optional<std::vector<ChainLink>> chain = WalkBackChain(
        uses, softmax->operand(0), softmax,
        [](const Op& op) { return op.kind_id() == OpKind::kMatmul; },
        ScoreChainOperands);
    if (!chain) continue;
    Op* op = chain->front().op;
    if (op->result()->type().dtype != DType::kF32) continue;
    std::optional<KScale> k = FindKScale(uses, *op);
    if (!k) continue;
    Value* scale = k->mul->operand(1 - k->scaled);
    Value* scores = op->result();
    // A one-element scale broadcasts to the scores' shape unless it has
    // more dims.
    if (scale->type().rank() > scores->type().rank()) continue;
    Op* user = uses.Users(scores).front();
    Builder builder(&graph, user);
    HGC_ASSIGN_OR_RETURN(Value * scaled, builder.Create("mul", {scores, scale},
                                                        {}, {}, k->mul->loc()));
    if (scaled->type() != scores->type()) {
      return absl::InternalError(
          "attention-k-scale: the moved scale changed the scores' type");
    }
    // The chain now starts at K itself (same type: a scalar only scales).
    for (int i = 0; i < k->first->num_operands(); ++i) {
      if (k->first->operand(i) == k->mul->result()) {
        k->first->set_operand(i, k->mul->operand(k->scaled));
      }
    }
    for (int i = 0; i < user->num_operands(); ++i) {
      if (user->operand(i) == scores) {
        user->set_operand(i, scaled);
      }
    }
    TakeName(scaled, scores);
    use_info.reset();
    ++moved;
  }
  return moved;
}

absl::StatusOr<bool> AttentionKScalePass::Run(Module& module) {
  int n = 0;
  for (Graph* graph : TopLevelGraphs(module)) {
    HGC_ASSIGN_OR_RETURN(int k, MoveAttentionKScales(*graph));
    n += k;
  }
  return n > 0;
}

}  // namespace hgc
