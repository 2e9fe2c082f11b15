// prepack-weights: decides the packed layout of constant matmul weights.
//
// Rewrites: on every "matmul" or "mlp" fusion op of a top-level graph, the
// operands that feed only B sides of the body's matmuls (directly, through
// a body parameter) and are const-only in the calling graph are recorded as
//   {b_layout = "plain" | "vnni2" | "vnni4", packed_operands = [i, ...]}
// by the weight dtype: f32 -> "plain" (N-blocked rows, what the f32 BRGEMM
// reads), bf16/f16 -> "vnni2" (pairs of K rows interleaved), s8/u8 ->
// "vnni4" (quads of K rows). When a group's weights disagree in dtype only
// those with the first weight's layout are listed. Codegen packs each listed
// operand once, in an init step run per SetConstants (docs/compiler.md §1);
// the IR keeps the plain tensor, so the graph's signature and the
// interpreter's numbers are unchanged.
// Preconditions: after fusion (and mlp-fusion). Guarantees: attributes only;
// groups with no qualifying weight lose stale b_layout/packed_operands.
#ifndef HGC_PASSES_PREPACK_WEIGHTS_H_
#define HGC_PASSES_PREPACK_WEIGHTS_H_

#include <string>

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

// The packed layout of a B operand of `dtype`: "plain", "vnni2", "vnni4".
std::string PackedLayoutFor(DType dtype);

// Annotates the fusion ops of `graph` (which must belong to a module);
// returns whether any attribute changed.
bool PrepackWeightsInGraph(Graph& graph);

class PrepackWeightsPass : public Pass {
 public:
  absl::string_view name() const override { return "PrepackWeights"; }
  absl::string_view argument() const override { return "prepack-weights"; }
  absl::string_view description() const override {
    return "record the packed layout of const matmul weights on fusion ops";
  }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace hgc

#endif  // HGC_PASSES_PREPACK_WEIGHTS_H_
