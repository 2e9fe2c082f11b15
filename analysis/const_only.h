// Analysis: which ops of a graph depend only on constants.
//
// A value is "const-only" when it is a `const` parameter, the result of a
// literal `constant` op, or the result of an op whose operands are all
// const-only. Codegen computes the const-only ops once per SetConstants
// (init steps), never per execution (docs/compiler.md §1); fusion keeps them
// out of groups that also do per-execution work; the matmul lowering packs
// a B operand once (in an init step) only when it is const-only.
#ifndef HGC_ANALYSIS_CONST_ONLY_H_
#define HGC_ANALYSIS_CONST_ONLY_H_

#include "absl/container/flat_hash_set.h"
#include "ir/graph.h"

namespace hgc {

// The ops of `graph` whose operands are all const-only. Literal `constant`
// ops themselves are not included (there is nothing to run for them) but
// count as const-only sources.
absl::flat_hash_set<const Op*> ConstOnlyOps(const Graph& graph);

// The same analysis, answering per value.
class ConstOnlyAnalysis {
 public:
  explicit ConstOnlyAnalysis(const Graph& graph) : ops_(ConstOnlyOps(graph)) {}

  // Whether `op` is in ConstOnlyOps.
  bool IsConstOnly(const Op* op) const { return ops_.contains(op); }
  // Whether `v` (a value of the analysed graph) is const-only.
  bool IsConstOnly(const Value* v) const;
  const absl::flat_hash_set<const Op*>& ops() const { return ops_; }

 private:
  absl::flat_hash_set<const Op*> ops_;
};

}  // namespace hgc

#endif  // HGC_ANALYSIS_CONST_ONLY_H_
