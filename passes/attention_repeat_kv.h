// attention-repeat-kv: reads grouped-query attention's K and V in place
// when repeat_kv is written as a broadcast instead of an expand op.
//
// HF's repeat_kv, exported without an expand op, gives each kv head its R
// query heads by broadcasting over a new unit dim and merging it away:
//   %kr = reshape(%k) {shape = [B, G, 1, S, D]}     (or any [.., G, 1, S, D])
//   %ke = mul(%kr, %ones)       ones [1, 1, R, 1, 1] or [B, G, R, S, D]
//                               (or add(%kr, %zeros))
//   %kf = reshape(%ke) {shape = [B, G·R, S, D]}
//   %s  = matmul(%q, %kf) {transpose_b = true}       (Q [B, G·R, Sq, D])
// which materializes K (and V, the same way before P·V) R times. An
// attention block (the scores matmul, the single-reader score ops
// attention-fusion takes, softmax over the last axis, casts, P·V) whose K
// and V are both such repeats, K possibly through a transpose of its last
// two dims, is rebuilt in the grouped form gqa_reshape.graph writes,
// with the repeat left to the matmuls' batch broadcast:
//   %qg = reshape(%q) {shape = [B, G, R, Sq, D]}
//   %s  = matmul(%qg, %kr) {transpose_b = true}      [B, G, R, Sq, Sk]
//   score ops, softmax (axis -1), casts on [B, G, R, Sq, Sk]
//   %o  = reshape(matmul(%p, %vr), [B, G·R, Sq, E])
// A side operand of a score op (a mask, a per-head bias) gets its head dim
// split into [G, R] (a unit dim added when it broadcasts over the heads; a
// literal constant is declared again in the new shape). attention-fusion
// then reads K and V once per kv head, in place.
//
// The rewrite is exact. x · 1.0 is x for every float x (NaN, ±inf, -0.0
// and denormals included), so a mul by ones is an identity. x + 0.0 is x
// too except that -0.0 + +0.0 is +0.0; the repeated value is read only by
// the matmul, whose sums start from +0.0 (the reference's definition), so
// the sign of a zero in its operands never shows in its result. Every
// other op computes each element from the same operands as before: the
// rest is relabeling, the same elements in the same row-major order.
//
// A repeat is taken only when the constant is a literal whose elements are
// all exactly 1 (mul) or all zero (add), the broadcast grows only the unit
// dim (every other dim of the result is the other operand's), R > 1, and
// the reshape merges exactly that dim into the one before it. Refused: any
// other constant (a `const` parameter of ones included: its contents are
// not known). A block is left alone unless every value from the scores
// matmul to P·V has that single reader, each score op's result has its
// chain operand's shape, K and V are both repeated by the same R (one
// repeated alone would leave them grouped differently, and a K grouped
// and broadcast over the batch beside a full V is a form attention-fusion
// refuses), and Q, K and V have the scores' batch dims exactly (K and V
// broadcast over the batch too, which HF does not export, are left
// alone). Other readers of a repeated value keep it.
//
// Preconditions: a verified module. Guarantees: the module verifies, graph
// signatures are unchanged, every value computed is the same; the block's
// values keep their names (P·V's on the reshape back).
#ifndef HGC_PASSES_ATTENTION_REPEAT_KV_H_
#define HGC_PASSES_ATTENTION_REPEAT_KV_H_

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

// Rebuilds the attention blocks of one graph that read a repeated K or V;
// returns how many.
absl::StatusOr<int> UnrepeatAttentionKv(Graph& graph);

class AttentionRepeatKvPass : public Pass {
 public:
  absl::string_view name() const override { return "AttentionRepeatKv"; }
  absl::string_view argument() const override { return "attention-repeat-kv"; }
  absl::string_view description() const override {
    return "read grouped-query attention's K and V in place when repeat_kv "
           "is written as a mul by ones (or add of zeros) over a new dim";
  }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace hgc

#endif  // HGC_PASSES_ATTENTION_REPEAT_KV_H_
