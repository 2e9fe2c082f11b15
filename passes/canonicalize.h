// canonicalize: local algebraic simplifications, to a fixed point.
//
// Rewrites (c = a literal constant; "splat" = every element the same):
//   mul(x, 1), mul(1, x), add(x, 0), add(0, x), sub(x, 0), div(x, 1) -> x,
//     only when the op's result type equals x's (no broadcast growth, so the
//     value really is x);
//   neg(neg(x)) -> x;
//   transpose(transpose(x, p1), p2) -> transpose(x, p1∘p2); an identity
//     permutation -> x;
//   reshape(reshape(x)) -> one reshape; a reshape to x's own shape -> x;
//   div(x, c) -> mul(x, 1/c) when every element of c has a finite, normal
//     reciprocal and either the reciprocal is exact (c a power of two) or the
//     dtype is f32 and inexact reciprocals are allowed (the default): x·(1/c)
//     is within 2 f32 ulp of x/c, far inside --check's 1e-4 tolerance. bf16
//     and f16 take exact reciprocals only (rounding 1/c to 8 or 11 bits
//     would double their error).
// Then dead ops are erased. Float caveats accepted here, as in XLA's
// algebraic simplifier: add(x, 0) -> x turns -0 + 0 = +0 into -0.
// Preconditions: a verified module. Guarantees: it still verifies, graph
// signatures are unchanged, and new ops inherit the replaced op's location
// and result name.
#ifndef HGC_PASSES_CANONICALIZE_H_
#define HGC_PASSES_CANONICALIZE_H_

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

struct CanonicalizeOptions {
  // Rewrite div by a constant only when 1/c is exact.
  bool exact_reciprocal_only = false;
  // Sweeps per graph before giving up on a fixed point.
  int64_t max_iterations = 16;
};

// The value `op` simplifies to without creating ops (identities, neg(neg),
// identity transpose/reshape), or nullptr.
Value* SimplifyWithoutNewOps(const Op& op);

// Rewrites that create an op before `op` (transpose and reshape chains,
// division by a constant); returns the replacement, or nullptr when none
// applies.
absl::StatusOr<Value*> SimplifyWithNewOp(Op& op,
                                         const CanonicalizeOptions& options);

// Canonicalizes one graph to a fixed point; returns whether it changed.
absl::StatusOr<bool> CanonicalizeGraph(Graph& graph,
                                       const CanonicalizeOptions& options);

class CanonicalizePass : public Pass {
 public:
  absl::string_view name() const override { return "Canonicalize"; }
  absl::string_view argument() const override { return "canonicalize"; }
  absl::string_view description() const override {
    return "algebraic identities, transpose/reshape chains, div by constant";
  }
  std::vector<PassOptionInfo> options() const override;
  absl::Status SetOption(absl::string_view key,
                         absl::string_view value) override;
  absl::StatusOr<bool> Run(Module& module) override;

  CanonicalizeOptions& mutable_options() { return options_; }

 private:
  CanonicalizeOptions options_;
};

}  // namespace hgc

#endif  // HGC_PASSES_CANONICALIZE_H_
