// canonicalize: local algebraic simplifications, to a fixed point.
//
// Every rewrite preserves IEEE results exactly (design: no `x + 0.0 -> x`,
// no division by an inexact reciprocal), unless an option below says so.
// Rewrites (c = a literal constant; "splat" = every element the same):
//   mul(x, 1), mul(1, x), add(x, -0.0), add(-0.0, x), sub(x, +0.0),
//     div(x, 1) -> x, only when the op's result type equals x's (no
//     broadcast growth, so the value really is x). add(x, +0.0) and
//     sub(x, -0.0) stay: for x = -0.0 they give +0.0. Integer zeros have no
//     sign and always qualify;
//   neg(neg(x)) -> x;
//   transpose(transpose(x, p1), p2) -> transpose(x, p1∘p2); an identity
//     permutation -> x;
//   reshape(reshape(x)) -> one reshape; a reshape to x's own shape -> x;
//   div(x, c) -> mul(x, 1/c) when every element of c has a finite, normal
//     reciprocal that is exact in c's dtype (c = ±2^k): then x·(1/c) and x/c
//     are the same correctly rounded real. With exact-reciprocal-only=false
//     (a fast-math option, off by default) f32 also takes inexact
//     reciprocals: x·(1/c) is within 2 f32 ulp of x/c (21/7 is no longer 3).
// Preconditions: a verified module. Guarantees: it still verifies, graph
// signatures are unchanged, and new ops inherit the replaced op's location
// and result name.
#ifndef HGC_PASSES_CANONICALIZE_H_
#define HGC_PASSES_CANONICALIZE_H_

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

struct CanonicalizeOptions {
  // Rewrite div by a constant only when 1/c is exact (IEEE-exact). false
  // allows inexact f32 reciprocals: fast-math, not the default.
  bool exact_reciprocal_only = true;
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
