// cse: common subexpression elimination.
//
// Rewrites: within each graph, an op with the same kind, the same operands
// (in order), the same attributes (attributes equal to their schema default
// count as absent) and the same result types as an earlier op is replaced by
// that op's result; the duplicate is erased. Literal constants with equal
// values and types merge too, as do fusion ops calling the same body.
// Preconditions: a verified module. Guarantees: graph signatures unchanged;
// every kept op keeps its position (the first occurrence wins).
#ifndef HGC_PASSES_CSE_H_
#define HGC_PASSES_CSE_H_

#include "passes/pass.h"

namespace hgc {

// CSE on one graph; returns the number of ops erased.
int EliminateCommonSubexpressions(Graph& graph);

class CsePass : public Pass {
 public:
  absl::string_view name() const override {
    return "CommonSubexpressionElimination";
  }
  absl::string_view argument() const override { return "cse"; }
  absl::string_view description() const override {
    return "merge ops with the same kind, operands and attributes";
  }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace hgc

#endif  // HGC_PASSES_CSE_H_
