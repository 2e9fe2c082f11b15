// attention-fusion: outlines attention blocks, softmax(f(Q·Kᵀ))·V, into
//   %r = fusion(<operands>) {body = @<graph>_attn_<n>, kind = "attention"}
// whose body MatchAttention (analysis/attention_match.h) describes, so that
// codegen can run each block as one kernel. The fusion op carries that
// match as match_* attributes (analysis/attention_attrs.h); codegen reads
// them instead of matching the body again. Attention groups already in the
// graph (written by hand) without them are given their body's match.
//
// In every top-level graph, from each softmax it walks back through score
// ops (elementwise arithmetic: scales, masks, caps; casts; see
// ScoreChainOperands) to the scores matmul and forward through casts
// (and the quantize, dequantize pair of P in the QDQ form) to the P·V
// matmul and the trailing casts, transposes and reshapes; then back from
// the matmuls' operands through reshapes, transposes, per-tensor
// dequantize and quantize ops (the QDQ form: Q, K and V stored as u8 or
// s8) and scales of Q, whose results nothing else reads. It runs before
// quantized-matmul, which would otherwise turn the QDQ matmuls into
// integer ones. A block is outlined only when MatchAttention accepts its
// body; otherwise the pass retries without the trailing ops and without
// the operands' ops (the block then reads the dequantized values), and
// leaves the ops to the `fusion` pass when nothing fits. Reshapes inside
// the score chain (CLIP, BLOOM, fairseq) are not walked: attention-reshapes,
// before it in O2, moves them to the block's operands and output; blocks
// computed transposed (Vᵀ·Pᵀ, key-major scores with softmax over axis -2)
// are not taken either: attention-transposes, also before it, rewrites
// them as P·V over Q·Kᵀ. Non-scalar constants (a folded causal mask) stay
// outside as operands; one-element literal constants are copied in. Preconditions: a verified module. Guarantees:
// the module verifies and computes the same values; graph signatures are
// unchanged.
#ifndef HGC_PASSES_ATTENTION_FUSION_H_
#define HGC_PASSES_ATTENTION_FUSION_H_

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

// Outlines the attention blocks of one graph (which must belong to a
// module); returns the number of fusion ops created.
absl::StatusOr<int> FuseAttention(Graph& graph);

// Gives each attention group of `graph` (which must belong to a module)
// that carries no match (one written by hand) the match of its body, and
// notes each group whose match is missing and cannot be made, or is
// invalid (analysis/attention_attrs.h): codegen runs those unfused.
// Returns the number of groups described.
int DescribeAttentionGroups(Graph& graph);

class AttentionFusionPass : public Pass {
 public:
  absl::string_view name() const override { return "AttentionFusion"; }
  absl::string_view argument() const override { return "attention-fusion"; }
  absl::string_view description() const override {
    return "outline attention blocks (Q.K^T, scale, mask, softmax, .V) into "
           "fusion ops of kind \"attention\"";
  }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace hgc

#endif  // HGC_PASSES_ATTENTION_FUSION_H_
