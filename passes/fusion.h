// fusion: outlines fused groups into `fusion` ops calling body graphs.
//
// Rewrites: in every top-level graph (one no fusion op calls), each group
// formed by passes/fusion_rules.h becomes
//   %r = fusion(<external operands>) {body = @<graph>_fused_<n>, kind = "…"}
// standing where the group's last op stood, and a new graph
// @<graph>_fused_<n> of the module holds the group's ops in order (docs/
// compiler.md §1). Operands are the external values in first-use order; the
// body's parameters carry their names, types and const-ness (const when the
// value is const-only); small literal constants are copied into the body;
// the result takes the name and type of the group's last op.
// Preconditions: a verified module. Guarantees: the module verifies and
// computes the same values (the interpreter runs bodies); graph signatures
// are unchanged; literal constants left unused are erased.
#ifndef HGC_PASSES_FUSION_H_
#define HGC_PASSES_FUSION_H_

#include <string>

#include "absl/status/statusor.h"
#include "passes/fusion_rules.h"
#include "passes/pass.h"

namespace hgc {

// Outlines the groups of one graph (which must belong to a module); returns
// the number of fusion ops created.
absl::StatusOr<int> FuseGraph(Graph& graph, const FusionOptions& options);

class FusionPass : public Pass {
 public:
  absl::string_view name() const override { return "Fusion"; }
  absl::string_view argument() const override { return "fusion"; }
  absl::string_view description() const override {
    return "outline matmul+post-op, elementwise and row-op groups into "
           "fusion ops";
  }
  std::vector<PassOptionInfo> options() const override;
  absl::Status SetOption(absl::string_view key,
                         absl::string_view value) override;
  absl::StatusOr<bool> Run(Module& module) override;

 private:
  FusionOptions options_;
};

}  // namespace hgc

#endif  // HGC_PASSES_FUSION_H_
