// attention-transposes: rewrites attention blocks computed in transposed
// form into the form attention-fusion takes, softmax over the last axis of
// Q·Kᵀ and P as the plain A operand of P·V.
//
// JAX exports P·V written transposed when its einsum picks the operand
// order (V, P): Oᵀ = matmul(Vᵀ, Pᵀ), then Oᵀ transposed back. Pᵀ is a
// transpose op over P's last two dims or the matmul's transpose_b, Vᵀ
// either as well. It becomes O = matmul(P, V) transposed in its last two
// dims, which the transposes after it absorb (canonicalize merges the
// pair, attention-fusion reads the rest as output strides):
//   matmul(X, P) {transpose_a = a, transpose_b = true}
//     -> transpose(matmul(P, X) {transpose_b = !a}, last two dims)
// A transpose op over P's last two dims before a plain P·V goes into the
// matmul's flags the same way.
// Every value is the same sum of the same products: a transposed matmul
// computes each element from the same operands.
//
// A block is left alone unless softmax is over the last axis, every value
// from softmax to P·V has that single reader, the transposes before P·V
// only swap the last two dims, and P·V's operands have rank 2 or more.
//
// Preconditions: a verified module. Guarantees: the module verifies, graph
// signatures are unchanged, every value computed is the same; P·V's result
// keeps its name.
#ifndef HGC_PASSES_ATTENTION_TRANSPOSES_H_
#define HGC_PASSES_ATTENTION_TRANSPOSES_H_

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

// Rewrites the transposed attention blocks of one graph; returns how many.
absl::StatusOr<int> UntransposeAttention(Graph& graph);

class AttentionTransposesPass : public Pass {
 public:
  absl::string_view name() const override { return "AttentionTransposes"; }
  absl::string_view argument() const override { return "attention-transposes"; }
  absl::string_view description() const override {
    return "rewrite attention whose P·V is computed transposed (Vᵀ·Pᵀ) "
           "as P·V";
  }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace hgc

#endif  // HGC_PASSES_ATTENTION_TRANSPOSES_H_
