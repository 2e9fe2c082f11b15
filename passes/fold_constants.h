// fold-constants: compile-time evaluation of ops on literal constants.
//
// Rewrites: every op (other than `constant`) whose operands are all results
// of literal `constant` ops is evaluated with the portable kernels
// (portable::EvaluateOp, runtime/portable/evaluate.h; the reference
// interpreter runs the same kernels, so folding computes exactly what it
// would) and replaced by a `constant` holding the result: one number when
// every element is the same, else a flat row-major `value` list. Chains fold in one run (ops are
// visited in order and see the constants folded before them).
// Not folded: ops with a result or an operand over `max-elements` elements
// (1M by default: the result is printed in the IR text, and a huge literal
// costs more in parse and print time and compile-time memory than computing
// it at run time; a splat `constant` of 2^30 elements is one number in the
// text but gigabytes once materialized), results with NaN or infinity (no
// attribute can spell them), and ops the kernels fail on. Ops left
// unused by folding are erased.
// Ops that depend on `const` parameters are not folded here: codegen runs
// them once per SetConstants (analysis/const_only.h).
// Guarantees: the module verifies; signatures are unchanged.
#ifndef HGC_PASSES_FOLD_CONSTANTS_H_
#define HGC_PASSES_FOLD_CONSTANTS_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "ir/tensor.h"
#include "passes/pass.h"

namespace hgc {

struct FoldConstantsOptions {
  int64_t max_elements = int64_t{1} << 20;
};

// The `value` attribute that makes a `constant` of t's type hold `t`: a
// single number when all elements are equal, else a flat list. nullopt when
// an element is NaN or infinite.
std::optional<Attribute> ConstantValueAttr(const Tensor& t);

// Folds one graph; returns the number of ops folded.
absl::StatusOr<int> FoldConstantsInGraph(Graph& graph,
                                         const FoldConstantsOptions& options);

class FoldConstantsPass : public Pass {
 public:
  absl::string_view name() const override { return "FoldConstants"; }
  absl::string_view argument() const override { return "fold-constants"; }
  absl::string_view description() const override {
    return "evaluate ops on literal constants at compile time";
  }
  std::vector<PassOptionInfo> options() const override;
  absl::Status SetOption(absl::string_view key,
                         absl::string_view value) override;
  absl::StatusOr<bool> Run(Module& module) override;

 private:
  FoldConstantsOptions options_;
};

}  // namespace hgc

#endif  // HGC_PASSES_FOLD_CONSTANTS_H_
