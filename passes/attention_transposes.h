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
//
// Key-major scores: Sᵀ = K·Qᵀ ([.., Sk, Sq]), the score ops on Sᵀ, softmax
// over axis -2 (the keys) and Pᵀ·V (transpose_a, or a transpose op over
// Pᵀ), or Oᵀ = Vᵀ·P transposed back. The chain from the scores matmul to
// softmax and the casts after it is rebuilt on S = Q·Kᵀ (the scores
// matmul's operands swapped and its transpose flags flipped), each side
// operand of a score op (a mask, a bias) swapped in its last two dims (a
// reshape when one of them is 1, the same order, and a literal constant
// then declared again in the new shape; a one-element value as it is; a
// transpose otherwise), softmax over the last axis, and P·V as above.
//
// Every value is the same sum of the same products: a transposed matmul
// computes each element from the same operands, and softmax sees each
// row's elements as before.
//
// A block is left alone unless softmax is over the last axis or (key-major)
// the one before, every value from softmax (key-major: from the scores
// matmul) to P·V has that single reader, each key-major score op's result
// has its chain operand's shape, the transposes before P·V only swap the
// last two dims, and the matmuls' operands have rank 2 or more.
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
    return "rewrite attention computed transposed (Vᵀ·Pᵀ, key-major "
           "scores K·Qᵀ with softmax over axis -2) as P·V over Q·Kᵀ";
  }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace hgc

#endif  // HGC_PASSES_ATTENTION_TRANSPOSES_H_
