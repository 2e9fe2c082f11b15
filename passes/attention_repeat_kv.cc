#include "passes/attention_repeat_kv.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/attention_match.h"
#include "analysis/attention_quant.h"
#include "analysis/graph_utils.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

using Dims = std::vector<int64_t>;

Dims DimsOf(const Value* v) {
  const Shape& s = v->type().shape;
  return Dims(s.begin(), s.end());
}

// A transpose that swaps the last two dims and keeps the others.
bool IsLastTwoSwap(const Op& op) {
  if (op.kind_id() != OpKind::kTranspose) return false;
  const std::vector<int64_t> perm = TransposePermOf(op);
  const int64_t n = static_cast<int64_t>(perm.size());
  if (n < 2) return false;
  for (int64_t i = 0; i < n - 2; ++i) {
    if (perm[i] != i) return false;
  }
  return perm[n - 2] == n - 1 && perm[n - 1] == n - 2;
}

// The identity constant of a repeat: a literal whose elements are all
// exactly 1 for mul, all zero (either sign) for add. x · 1.0 is x for every
// float x, NaN, ±inf and -0.0 included; x + 0.0 is x but for -0.0 + +0.0 =
// +0.0, which no matmul result can tell apart (see the header).
bool IsRepeatIdentity(const Op& op, const Value* c) {
  const std::optional<double> v = SplatValue(c);
  if (!v.has_value() || LiteralConstantOp(c) == nullptr) return false;
  if (op.kind_id() == OpKind::kMul) return *v == 1.0;
  if (op.kind_id() == OpKind::kAdd) return *v == 0.0;
  return false;
}

// A repeated K or V read by a matmul as B.
struct Repeat {
  Value* grouped = nullptr;  // [.., G, 1, S, D]: the value before the repeat
  int64_t repeats = 1;       // R
  bool transposed = false;   // a transpose of the last two dims before B
};

// `b` (a matmul's B operand) as reshape(mul(y, ones), [.., G·R, S, D]),
// optionally transposed in its last two dims; nullopt otherwise.
std::optional<Repeat> FindRepeat(Value* b) {
  Repeat r;
  Op* def = b->defining_op();
  if (def != nullptr && IsLastTwoSwap(*def)) {
    r.transposed = true;
    def = def->operand(0)->defining_op();
  }
  if (def == nullptr || def->kind_id() != OpKind::kReshape) {
    return std::nullopt;
  }
  const Dims merged = DimsOf(def->result());  // [.., G·R, S, D]
  Op* op = def->operand(0)->defining_op();
  if (op == nullptr ||
      (op->kind_id() != OpKind::kMul && op->kind_id() != OpKind::kAdd)) {
    return std::nullopt;
  }
  const Dims expanded = DimsOf(op->result());  // [.., G, R, S, D]
  const int64_t n = static_cast<int64_t>(merged.size());
  if (n < 3 || static_cast<int64_t>(expanded.size()) != n + 1) {
    return std::nullopt;
  }
  // The reshape merges dims n-3 and n-2 of the expanded shape and keeps
  // every other.
  const int64_t h = n - 3;  // the head dim of `merged`; G in `expanded`
  for (int64_t i = 0; i < n; ++i) {
    if (i == h) continue;
    if (merged[i] != expanded[i < h ? i : i + 1]) return std::nullopt;
  }
  if (merged[h] != expanded[h] * expanded[h + 1]) return std::nullopt;
  Dims unit = expanded;
  unit[h + 1] = 1;
  for (int x = 0; x < 2; ++x) {
    Value* y = op->operand(x);
    const Value* c = op->operand(1 - x);
    // y holds the unit dim; the constant grows only it.
    if (DimsOf(y) != unit || !IsRepeatIdentity(*op, c)) continue;
    if (y->type().dtype != op->result()->type().dtype) continue;
    r.grouped = y;
    r.repeats = expanded[h + 1];
    return r.repeats > 1 ? std::optional<Repeat>(r) : std::nullopt;
  }
  return std::nullopt;
}

// One attention block: the scores matmul, the score ops from it to
// softmax, softmax, the casts after it and P·V, each value read only by
// the next op.
struct Block {
  // The scores matmul first (operand -1), each op with the operand that
  // reads the previous one's result.
  std::vector<ChainLink> links;
};

std::optional<Block> FindBlock(const UseInfo& uses, Op* softmax) {
  const int64_t rank = softmax->result()->type().rank();
  if (rank < 3 || SoftmaxAxis(*softmax) != rank - 1) return std::nullopt;
  const auto is_matmul = [](const Op& op) {
    return op.kind_id() == OpKind::kMatmul &&
           op.operand(0)->type().rank() >= 2 &&
           op.operand(1)->type().rank() >= 2;
  };
  // Back through score ops that keep the scores' shape (a side operand
  // broadcasts into them) to the scores matmul.
  std::optional<std::vector<ChainLink>> chain = WalkBackChain(
      uses, softmax->operand(0), softmax, is_matmul, [](const Op& op) {
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
  block.links.push_back({softmax, 0});
  for (Value* cur = softmax->result();;) {
    const std::vector<Op*>& users = uses.Users(cur);
    if (users.size() != 1 || !uses.OnlyUsedBy(cur, users[0])) {
      return std::nullopt;
    }
    Op* user = users[0];
    if (is_matmul(*user)) {
      const Attribute* ta = user->FindAttr("transpose_a");
      if (user->operand(0) != cur || user->operand(1) == cur ||
          (ta != nullptr && ta->is_bool() && ta->as_bool())) {
        return std::nullopt;
      }
      block.links.push_back({user, 0});
      return block;
    }
    // Casts, and the QDQ form's per-tensor quantize and dequantize of P,
    // which keep their attributes under any shape.
    if (user->kind_id() != OpKind::kCast &&
        !attention_quant::IsPerTensorQuantize(*user) &&
        !attention_quant::IsPerTensorDequantize(*user)) {
      return std::nullopt;
    }
    block.links.push_back({user, 0});
    cur = user->result();
  }
}

// [.., H, a, b] as [.., G, R, a, b], H = G·R being dim `h`.
Dims SplitHeads(Dims d, int64_t h, int64_t r) {
  d[h] /= r;
  d.insert(d.begin() + h + 1, r);
  return d;
}

// `x` reshaped to `shape`, located at x's defining op (or x).
absl::StatusOr<Value*> ReshapeTo(Builder& builder, Value* x,
                                 const Dims& shape) {
  return builder.Create(
      "reshape", {x}, {{"shape", Attribute::IntList(shape)}}, {},
      x->defining_op() != nullptr ? x->defining_op()->loc() : x->loc());
}

// A repeated B operand `b` of rank n read before its repeat (transposed
// again when it was).
absl::StatusOr<Value*> GroupedB(Builder& builder, Value* b,
                                const Repeat& repeat, int64_t n) {
  if (!repeat.transposed) return repeat.grouped;
  std::vector<int64_t> perm(n + 1);
  for (int64_t i = 0; i <= n; ++i) perm[i] = i;
  std::swap(perm[n - 1], perm[n]);
  return builder.Create("transpose", {repeat.grouped},
                        {{"perm", Attribute::IntList(perm)}}, {},
                        b->defining_op()->loc());
}

// A score op's side operand: as it is when it does not reach the head
// dim (a scalar, a [Sq, Sk] bias), else with the head dim split (or a
// unit dim added where it broadcasts over the heads).
absl::StatusOr<Value*> GroupedSide(Builder& builder, Value* x, int64_t n,
                                   int64_t h, int64_t r) {
  const Dims d = DimsOf(x);
  if (static_cast<int64_t>(d.size()) <= 2) return x;
  Dims padded(n - d.size(), 1);
  padded.insert(padded.end(), d.begin(), d.end());
  Dims shape = padded;
  if (padded[h] == 1) {
    shape.insert(shape.begin() + h + 1, 1);
  } else {
    shape = SplitHeads(padded, h, r);
  }
  if (const Op* c = LiteralConstantOp(x)) {
    return builder.Create(
        "constant", {}, c->attrs(),
        {TensorType(x->type().dtype, Shape(shape.begin(), shape.end()))},
        c->loc());
  }
  return ReshapeTo(builder, x, shape);
}

// Whether Q, K and V (float Q and V) have the scores' batch dims exactly,
// so that splitting the head dim leaves each query head on its kv head.
// (K and V broadcast over the batch too, which HF does not export, are left
// alone.)
bool OperandsFit(const Op& qk, const Op& pv, const Dims& scores) {
  const int64_t n = static_cast<int64_t>(scores.size());
  const Dims batch(scores.begin(), scores.begin() + n - 2);
  const auto fits = [&](const Value* x) {
    const Dims d = DimsOf(x);
    return static_cast<int64_t>(d.size()) == n &&
           Dims(d.begin(), d.end() - 2) == batch;
  };
  for (const Value* x : {qk.operand(0), pv.operand(1)}) {
    if (!IsFloat(x->type().dtype)) return false;
  }
  return fits(qk.operand(0)) && fits(qk.operand(1)) && fits(pv.operand(1));
}

// Rebuilds the ops of `block` in the grouped form (head dim h of the rank-n
// scores split by r), the scores matmul reading q and k and P·V reading v;
// P·V's grouped result.
absl::StatusOr<Value*> RebuildGrouped(Builder& builder, const Block& block,
                                      Value* q, Value* k, Value* v, int64_t n,
                                      int64_t h, int64_t r) {
  const Op& qk = *block.links.front().op;
  const Op& pv = *block.links.back().op;
  Value* cur = nullptr;
  for (const ChainLink& link : block.links) {
    const Op& op = *link.op;
    std::vector<Value*> operands;
    if (&op == &qk) {
      operands = {q, k};
    } else if (&op == &pv) {
      operands = {cur, v};
    } else {
      for (int i = 0; i < op.num_operands(); ++i) {
        // mul(s, s) reads the scores twice.
        if (op.operand(i) == op.operand(link.operand)) {
          operands.push_back(cur);
          continue;
        }
        HGC_ASSIGN_OR_RETURN(Value * x,
                             GroupedSide(builder, op.operand(i), n, h, r));
        operands.push_back(x);
      }
    }
    AttrMap attrs = op.attrs();
    if (op.kind_id() == OpKind::kSoftmax) attrs["axis"] = Attribute::Int(-1);
    HGC_ASSIGN_OR_RETURN(cur, builder.Create(op.kind(), std::move(operands),
                                             std::move(attrs), {}, op.loc()));
    if (DimsOf(cur) != SplitHeads(DimsOf(op.result()), h, r)) {
      return absl::InternalError(
          absl::StrCat("attention-repeat-kv: the grouped ", op.kind(),
                       " does not have the split shape"));
    }
    if (&op != &pv) TakeName(cur, op.result());
  }
  return cur;
}

// Rebuilds `block`, whose scores are [.., H, Sq, Sk] with H = G·R, in the
// grouped form [.., G, R, Sq, Sk]: Q reshaped to it, K and V read as
// their [.., G, 1, S, D] values before the repeat, each side operand of a score
// op reshaped (a literal constant declared again) to broadcast the same way,
// and P·V's result reshaped back. Returns false, changing nothing, when the
// block does not fit.
absl::StatusOr<bool> Regroup(Graph& graph, const Block& block) {
  Op& qk = *block.links.front().op;
  Op& pv = *block.links.back().op;
  // Both K and V repeated, by the same R: the kernel shares one kv head
  // between the query heads of a group for both.
  const std::optional<Repeat> k_repeat = FindRepeat(qk.operand(1));
  const std::optional<Repeat> v_repeat = FindRepeat(pv.operand(1));
  if (!k_repeat || !v_repeat || k_repeat->repeats != v_repeat->repeats) {
    return false;
  }
  const int64_t r = k_repeat->repeats;
  const Dims scores = DimsOf(qk.result());
  const int64_t n = static_cast<int64_t>(scores.size());
  if (n < 3) return false;
  const int64_t h = n - 3;  // the head dim
  if (scores[h] % r != 0) return false;
  if (!OperandsFit(qk, pv, scores)) return false;

  Builder builder(&graph, &pv);
  HGC_ASSIGN_OR_RETURN(Value * q,
                       ReshapeTo(builder, qk.operand(0),
                                 SplitHeads(DimsOf(qk.operand(0)), h, r)));
  HGC_ASSIGN_OR_RETURN(Value * k,
                       GroupedB(builder, qk.operand(1), *k_repeat, n));
  HGC_ASSIGN_OR_RETURN(Value * v,
                       GroupedB(builder, pv.operand(1), *v_repeat, n));
  HGC_ASSIGN_OR_RETURN(Value * cur,
                       RebuildGrouped(builder, block, q, k, v, n, h, r));
  Value* old = pv.result();
  HGC_ASSIGN_OR_RETURN(Value * out, ReshapeTo(builder, cur, DimsOf(old)));
  TakeName(out, old);
  graph.ReplaceAllUsesWith(old, out);
  return true;
}

}  // namespace

absl::StatusOr<int> UnrepeatAttentionKv(Graph& graph) {
  // One block per sweep: a rewrite makes the use lists stale. A rebuilt
  // block reads no repeat, so it is not taken again.
  int softmaxes = 0;
  for (const auto& op : graph.ops()) {
    softmaxes += op->kind_id() == OpKind::kSoftmax;
  }
  int rewritten = 0;
  while (rewritten < softmaxes) {
    const UseInfo uses(graph);
    bool changed = false;
    for (Op* op : graph.OpsSnapshot()) {
      if (op->kind_id() != OpKind::kSoftmax) continue;
      std::optional<Block> block = FindBlock(uses, op);
      if (!block) continue;
      HGC_ASSIGN_OR_RETURN(changed, Regroup(graph, *block));
      if (changed) break;
    }
    if (!changed) break;
    // The old block (and repeats read by nothing else) goes now.
    EraseDeadOps(graph);
    ++rewritten;
  }
  return rewritten;
}

absl::StatusOr<bool> AttentionRepeatKvPass::Run(Module& module) {
  int n = 0;
  for (Graph* graph : TopLevelGraphs(module)) {
    HGC_ASSIGN_OR_RETURN(int k, UnrepeatAttentionKv(*graph));
    n += k;
  }
  return n > 0;
}

}  // namespace hgc
