// mlp-fusion: coarse-grain fusion of consecutive MLP layers.
//
// Rewrites: a fusion op F2 of kind "matmul" or "mlp" whose first matmul
// reads, as its A operand (not transposed), the result of another such
// fusion op F1 becomes, together with F1, one fusion of kind "mlp" whose
// body holds F1's body ops followed by F2's (matmul, post-ops, matmul,
// post-ops, ...), when:
//   - F1's result has no other use and is not returned;
//   - that intermediate is a rank-2 M×N matrix with M·N·4 bytes (its f32
//     accumulators) at most `max-intermediate-bytes` (1 MiB by default, a
//     typical L2 share per core): then one outer loop over M blocks can run
//     every layer on a block while its activations stay in cache
//     (docs/compiler.md §2, barrier between layers).
// Chains of layers merge pairwise until no pair qualifies. The merged
// fusion reuses F1's body graph (extended in place), keeps F1's operands
// and appends F2's other operands in order; F2's body graph is erased.
// Preconditions: a verified module after `fusion`. Guarantees: it verifies
// and computes the same values; graph signatures are unchanged.
#ifndef HGC_PASSES_MLP_FUSION_H_
#define HGC_PASSES_MLP_FUSION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

struct MlpFusionOptions {
  int64_t max_intermediate_bytes = int64_t{1} << 20;
};

// Merges layer pairs in `graph` (which must belong to a module) until none
// qualifies; returns the number of merges.
absl::StatusOr<int> FuseMlpLayers(Graph& graph,
                                  const MlpFusionOptions& options);

class MlpFusionPass : public Pass {
 public:
  absl::string_view name() const override { return "MlpFusion"; }
  absl::string_view argument() const override { return "mlp-fusion"; }
  absl::string_view description() const override {
    return "merge consecutive small matmul groups into one \"mlp\" group";
  }
  std::vector<PassOptionInfo> options() const override;
  absl::Status SetOption(absl::string_view key,
                         absl::string_view value) override;
  absl::StatusOr<bool> Run(Module& module) override;

 private:
  MlpFusionOptions options_;
};

}  // namespace hgc

#endif  // HGC_PASSES_MLP_FUSION_H_
