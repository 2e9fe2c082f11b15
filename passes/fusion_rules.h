// Which ops fuse together: the grouping half of the fusion pass (the
// outlining half is passes/fusion.h).
//
// Groups are formed greedily in one forward sweep over a graph:
//   - every matmul starts a "matmul" group (the matmul is the group's first
//     op; producers are never pulled in, so codegen's BRGEMM sees plain
//     operands);
//   - a row op (softmax, layernorm, reduce_*) joins the group producing its
//     data operand when that group is anchor-free ("elementwise") and the
//     value is the group's output with no other use; the group takes the row
//     op's kind ("softmax", "layernorm", "reduce"); else it starts one. A
//     reduction that stands alone (ReductionStandsAlone) always starts one,
//     and nothing joins it;
//   - a pointwise op (elementwise, cast, quantize, dequantize) joins the
//     group whose output it reads (first such operand) when that output has
//     no other use, is not returned, has the op's result shape (the chain
//     never grows by broadcasting: post-ops run on the anchor's output
//     tile), and the op is const-only whenever the group is (constant work
//     is never mixed into per-execution work); else it starts an
//     "elementwise" group;
//   - anything else (constant, reshape, transpose, fusion) is not grouped.
// So a group has one output, the result of its last op, and every other
// value it defines is used only inside it. Small literal constants a group
// reads are copied into its body rather than passed in (see FusionOptions).
#ifndef HGC_PASSES_FUSION_RULES_H_
#define HGC_PASSES_FUSION_RULES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "ir/op_kind.h"

namespace hgc {

struct FusionOptions {
  // The most ops in one group (a longer chain is split).
  int64_t max_ops = 64;
  // Literal constants with at most this many elements are copied into the
  // bodies that read them; larger ones are passed as operands.
  int64_t inline_constant_elements = 64;
};

// A one-result op that is elementwise in the fusion sense (IsPointwise of
// ir/op_kind.h: the elementwise ops plus quantize and dequantize).
bool IsPointwise(const Op& op);
// Whether `op` is a reduction of integers, or over axes that are not the
// trailing ones: such a reduction is computed as a whole by its own step
// (integer sums wrap, and leading axes are not rows), so it groups with
// neither producers nor consumers.
bool ReductionStandsAlone(const Op& op);

// The group kind an op of kind `kind` anchors (matmul, softmax, layernorm,
// reduce for reduce_*), or nullopt for kinds that anchor none.
std::optional<FusionKind> AnchorKind(OpKind kind);

// One group: its ops in graph order and its kind.
struct FusionGroup {
  std::vector<Op*> ops;
  FusionKind kind = FusionKind::kElementwise;
  Op* anchor = nullptr;  // the matmul / row op, or nullptr
  bool const_only = false;
  Op* last() const { return ops.back(); }
};

// The groups of `graph`, in the order of their last ops.
std::vector<FusionGroup> FormFusionGroups(const Graph& graph,
                                          const FusionOptions& options);

}  // namespace hgc

#endif  // HGC_PASSES_FUSION_RULES_H_
