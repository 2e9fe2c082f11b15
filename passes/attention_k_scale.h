// attention-k-scale: moves a scalar scale of K onto the attention scores.
//
// torch's decomposition of scaled_dot_product_attention, which its ONNX
// export writes out, scales both operands of the scores matmul by
// sqrt(scale) "for numerical stability":
//   %qs = mul(%q, %c)  %kts = mul(transpose(%k), %c)  %s = matmul(%qs, %kts)
// The Q side is one of the forms the attention kernel takes (it scales each
// Q row before Q·Kᵀ), but a scaled K would be a separate elementwise pass
// over all of K ahead of the fused block. This pass rewrites
//   matmul(a, (transpose | reshape)*(mul(x, c)))  into
//   mul(matmul(a, (transpose | reshape)*(x)), c)
// so that the scale is a score op, which Q·Kᵀ's kernel applies.
//
// The product is the same up to rounding: c·(a·x) rounds the dot products
// once more instead of each element of x (an f32 score then differs by
// about an ulp). To keep it at that, a rewrite needs c to be a literal
// one-element f32 constant, finite and nonzero with |c| <= 1 (so that
// neither form overflows where the other does not, barring scores near the
// f32 limit), x and the scores f32, and the matmul's result to reach a
// softmax over its last axis through the single-reader score ops
// attention-fusion takes: it applies to attention blocks only. Every value
// between the mul and the matmul must have that single reader too.
//
// Preconditions: a verified module. Guarantees: the module verifies, graph
// signatures are unchanged; the scores value keeps its name (the new mul
// takes it). The old mul is left dead for DCE.
#ifndef HGC_PASSES_ATTENTION_K_SCALE_H_
#define HGC_PASSES_ATTENTION_K_SCALE_H_

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

// Rewrites the K scales of one graph; returns how many.
absl::StatusOr<int> MoveAttentionKScales(Graph& graph);

class AttentionKScalePass : public Pass {
 public:
  absl::string_view name() const override { return "AttentionKScale"; }
  absl::string_view argument() const override { return "attention-k-scale"; }
  absl::string_view description() const override {
    return "move a scalar scale of K (torch's sqrt(scale) on both operands) "
           "onto the attention scores";
  }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace hgc

#endif  // HGC_PASSES_ATTENTION_K_SCALE_H_
