#include "passes/attention_fusion.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/attention_attrs.h"
#include "analysis/attention_match.h"
#include "analysis/attention_quant.h"
#include "analysis/graph_utils.h"
#include "analysis/op_predicates.h"
#include "passes/outliner.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

using OpSet = absl::flat_hash_set<Op*>;

// A block to outline, and its match as the fusion op's attributes.
struct Block {
  std::vector<Op*> ops;
  AttrMap match;
};

// Whether `v` can scale Q inside the block: one element, a literal constant
// (inlined into the body) or a runtime value (a body parameter).
bool IsScalar(const Value* v) { return v->type().NumElements() == 1; }

class BlockFinder {
 public:
  explicit BlockFinder(const Graph& graph) : uses_(graph) {
    int i = 0;
    for (const auto& op : graph.ops()) position_[op.get()] = i++;
  }

  // Candidate op sets of the block around `softmax`, each in graph order:
  // with the operand relabels and the whole tail first, then shorter
  // tails, then the same without the relabels. Empty when no matmuls are
  // around the softmax; `why` then says what stops a block that has a
  // scores matmul and a P·V (P read by other ops too, or returned), and
  // stays empty when there is no such block.
  std::vector<std::vector<Op*>> Attempts(Op* softmax, std::string& why) {
    // Back through score ops (ScoreChainOperands) to the scores matmul.
    std::optional<std::vector<ChainLink>> scores = WalkBackChain(
        uses_, softmax->operand(0), softmax,
        [](const Op& op) { return op.kind_id() == OpKind::kMatmul; },
        ScoreChainOperands);
    if (!scores) return {};
    std::vector<Op*> core;
    for (const ChainLink& link : *scores) core.push_back(link.op);
    core.push_back(softmax);
    Value* cur = softmax->result();
    for (;;) {
      const std::vector<Op*>& users = uses_.Users(cur);
      if (users.size() != 1 || !uses_.OnlyUsedBy(cur, users[0])) {
        why = SharedProbabilities(cur);
        return {};
      }
      Op* user = users[0];
      core.push_back(user);
      if (user->kind_id() == OpKind::kMatmul) break;
      if (!IsProbLink(*user)) return {};
      cur = user->result();
    }
    Op* qk = core.front();
    Op* pv = core.back();
    std::vector<Op*> tail;
    for (cur = pv->result();;) {
      const std::vector<Op*>& users = uses_.Users(cur);
      if (users.size() != 1 || !uses_.OnlyUsedBy(cur, users[0])) break;
      Op* user = users[0];
      // (A quantize of the output, for the next int8 matmul: the last
      // elementwise op the block takes.)
      if (!IsRelabel(*user) && user->kind_id() != OpKind::kCast &&
          user->kind_id() != OpKind::kQuantize) {
        break;
      }
      tail.push_back(user);
      cur = user->result();
    }
    // Operand relabels, read only by the block (with or without the tail).
    std::vector<Op*> heads;
    OpSet in(core.begin(), core.end());
    GrowBack(qk->operand(0), true, in, heads);
    GrowBack(qk->operand(1), false, in, heads);
    GrowBack(pv->operand(1), false, in, heads);
    std::vector<std::vector<Op*>> attempts;
    for (bool with_heads : {true, false}) {
      for (size_t t = tail.size() + 1; t-- > 0;) {
        std::vector<Op*> ops = core;
        if (with_heads) ops.insert(ops.end(), heads.begin(), heads.end());
        ops.insert(ops.end(), tail.begin(), tail.begin() + t);
        std::sort(ops.begin(), ops.end(), [&](const Op* a, const Op* b) {
          return position_[a] < position_[b];
        });
        attempts.push_back(std::move(ops));
      }
      if (heads.empty()) break;
    }
    return attempts;
  }

 private:
  // An op between softmax and P·V: a cast, or the quantize / dequantize
  // of P in the QDQ form.
  static bool IsProbLink(const Op& op) {
    const OpKind k = op.kind_id();
    return k == OpKind::kCast || k == OpKind::kQuantize ||
           k == OpKind::kDequantize;
  }

  // The matmul that `user` of P reaches through P's casts and quantize /
  // dequantize ops, each read once; null when it reaches none.
  const Op* PvThrough(const Op* user) const {
    for (;;) {
      if (user->kind_id() == OpKind::kMatmul) return user;
      if (!IsProbLink(*user)) return nullptr;
      const std::vector<Op*>& next = uses_.Users(user->result());
      if (next.size() != 1 || uses_.IsReturned(user->result())) return nullptr;
      user = next[0];
    }
  }

  // Why probabilities `p` (or P's cast or quantized form) that P·V and
  // other ops read (or the graph returns) leave the block unfused; empty
  // when no matmul reads them.
  std::string SharedProbabilities(const Value* p) const {
    const std::vector<Op*>& users = uses_.Users(p);
    const Op* pv = nullptr;
    std::vector<std::string> others;
    for (const Op* user : users) {
      if (pv == nullptr && PvThrough(user) != nullptr) {
        pv = PvThrough(user);
      } else {
        others.push_back(
            absl::StrCat(user->kind(), " %", user->result()->name()));
      }
    }
    if (pv == nullptr) return "";
    if (uses_.IsReturned(p)) others.push_back("the graph's return");
    if (others.empty()) {
      return absl::StrCat("P·V %", pv->result()->name(), " reads %",
                          p->name(), " more than once");
    }
    return absl::StrCat("%", p->name(), " is read by P·V %",
                        pv->result()->name(), " and also by ",
                        absl::StrJoin(others, ", "),
                        "; the attention kernel keeps P in its score tile "
                        "and writes only P·V");
  }

  // Adds the ops that produce `v` and whose results only ops in `in` read:
  // reshapes, transposes, per-tensor dequantize and quantize ops (the QDQ
  // form) and, for Q after its last dequantize, scales by a one-element
  // constant or runtime value. The block then reads a float value, or a
  // u8 / s8 one through a dequantize: a walk that stops past a quantize
  // gives back the ops up to the dequantize before it.
  void GrowBack(Value* v, bool allow_scale, OpSet& in, std::vector<Op*>& out) {
    std::vector<Op*> walked;
    size_t keep = 0;
    bool quant = false;          // a quantize or dequantize walked
    bool reads_integer = false;  // the farthest of them is a dequantize
    for (;;) {
      Op* def = v->defining_op();
      if (def == nullptr || in.contains(def) || uses_.IsReturned(v)) break;
      if (!std::all_of(uses_.Users(v).begin(), uses_.Users(v).end(),
                       [&](Op* user) { return in.contains(user); })) {
        break;
      }
      int next = 0;
      if (IsRelabel(*def)) {
        next = 0;
      } else if (attention_quant::IsPerTensorDequantize(*def) ||
                 attention_quant::IsPerTensorQuantize(*def)) {
        quant = true;
        reads_integer = def->kind_id() == OpKind::kDequantize;
        // A scale before a dequantize is integer math, or is rounded by a
        // quantize after it: MatchAttention takes neither.
        allow_scale = false;
      } else if (allow_scale &&
                 (def->kind_id() == OpKind::kMul ||
                  def->kind_id() == OpKind::kDiv) &&
                 IsScalar(def->operand(1))) {
        next = 0;
      } else if (allow_scale && def->kind_id() == OpKind::kMul &&
                 IsScalar(def->operand(0))) {
        next = 1;
      } else {
        break;
      }
      in.insert(def);
      walked.push_back(def);
      if (!quant || reads_integer) keep = walked.size();
      v = def->operand(next);
    }
    for (size_t i = keep; i < walked.size(); ++i) in.erase(walked[i]);
    out.insert(out.end(), walked.begin(), walked.begin() + keep);
  }

  UseInfo uses_;
  absl::flat_hash_map<const Op*, int> position_;
};

}  // namespace

absl::StatusOr<int> FuseAttention(Graph& graph) {
  if (graph.module() == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "attention-fusion: graph @", graph.name(), " belongs to no module"));
  }
  BlockFinder finder(graph);
  // Only one-element literal constants go into bodies: MatchAttention
  // wants every other operand as a parameter.
  Outliner outliner(graph, "attn", /*inline_constant_elements=*/1);
  std::vector<Block> blocks;
  OpSet taken;
  for (const auto& op : graph.ops()) {
    if (op->kind_id() != OpKind::kSoftmax) continue;
    std::string why;
    bool fused = false;
    for (const std::vector<Op*>& ops : finder.Attempts(op.get(), why)) {
      if (std::any_of(ops.begin(), ops.end(),
                      [&](Op* o) { return taken.contains(o); })) {
        continue;
      }
      Graph trial("trial");
      std::vector<Value*> externals;
      outliner.FillBody(ops, trial, externals);
      absl::StatusOr<AttentionMatch> match = MatchAttention(trial);
      if (!match.ok()) {
        // The first (largest) candidate's refusal.
        if (why.empty()) why = std::string(match.status().message());
        continue;
      }
      taken.insert(ops.begin(), ops.end());
      // The body Outline builds is the trial's, op for op: the match's
      // indices hold for it.
      blocks.push_back({ops, EncodeAttentionMatch(*match, trial)});
      fused = true;
      break;
    }
    if (!fused && !why.empty()) {
      graph.module()->AddNote(absl::StrCat(
          "attention-fusion: @", graph.name(),
          ": the attention block around softmax %", op->result()->name(),
          " is not fused: ", why));
    }
  }
  if (blocks.empty()) return 0;
  // Outline in the order of the blocks' last ops, where the fusion ops go.
  absl::flat_hash_map<const Op*, int> position;
  int i = 0;
  for (const auto& op : graph.ops()) position[op.get()] = i++;
  std::sort(blocks.begin(), blocks.end(), [&](const Block& a, const Block& b) {
    return position[a.ops.back()] < position[b.ops.back()];
  });
  for (Block& block : blocks) {
    HGC_RETURN_IF_ERROR(outliner.Outline(block.ops, FusionKind::kAttention,
                                         std::move(block.match)));
  }
  outliner.Finish();
  return static_cast<int>(blocks.size());
}

int DescribeAttentionGroups(Graph& graph) {
  int described = 0;
  for (const auto& op : graph.ops()) {
    if (FusionKindOf(*op) != FusionKind::kAttention) continue;
    const Graph* body = FusionBody(*op);
    if (body == nullptr) continue;
    std::string why;
    if (HasAttentionMatchAttrs(op->attrs())) {
      absl::Status decoded = DecodeAttentionMatch(op->attrs(), *body).status();
      if (!decoded.ok()) why = absl::StrCat("its ", decoded.message());
    } else if (absl::StatusOr<AttentionMatch> match = MatchAttention(*body);
               match.ok()) {
      AttrMap attrs = EncodeAttentionMatch(*match, *body);
      op->mutable_attrs().insert(attrs.begin(), attrs.end());
      ++described;
    } else {
      why = std::string(match.status().message());
    }
    if (!why.empty()) {
      graph.module()->AddNote(absl::StrCat(
          "attention-fusion: @", graph.name(), ": the attention group %",
          op->result()->name(), " runs unfused: ", why));
    }
  }
  return described;
}

absl::StatusOr<bool> AttentionFusionPass::Run(Module& module) {
  int changed = 0;
  for (Graph* graph : TopLevelGraphs(module)) {
    changed += DescribeAttentionGroups(*graph);
    HGC_ASSIGN_OR_RETURN(int n, FuseAttention(*graph));
    changed += n;
  }
  return changed > 0;
}

}  // namespace hgc
