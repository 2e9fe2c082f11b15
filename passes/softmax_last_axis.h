// softmax-last-axis: a softmax over another axis as a last-axis softmax
// between transposes.
//
// Codegen computes softmax over rows, the contiguous last dim. A softmax
// over axis a of a rank-r value (the channels of [N, C, H, W], say) is
// rewritten as
//   y = softmax(x) {axis = a}
//     ->  y = transpose(softmax(transpose(x, p)) {axis = -1}, p^-1)
// with p moving dim a last and keeping the others in order. Transposes are
// exact and the softmax sees each of its rows' elements in the same order,
// so every value computed is the same; the two transposes run as copy
// steps around a native row step instead of one interpreter fallback.
//
// Preconditions: a verified module. Guarantees: the module verifies, graph
// signatures are unchanged, every value computed is the same; the final
// transpose keeps the softmax's result name.
#ifndef HGC_PASSES_SOFTMAX_LAST_AXIS_H_
#define HGC_PASSES_SOFTMAX_LAST_AXIS_H_

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

// Rewrites every softmax over an axis other than the last in `module`'s
// graphs. Returns the number rewritten.
absl::StatusOr<int> MoveSoftmaxAxesLast(Module& module);

class SoftmaxLastAxisPass : public Pass {
 public:
  absl::string_view name() const override { return "SoftmaxLastAxis"; }
  absl::string_view argument() const override { return "softmax-last-axis"; }
  absl::string_view description() const override {
    return "compute a softmax over another axis as a last-axis softmax "
           "between transposes";
  }
  absl::StatusOr<bool> Run(Module& module) override {
    absl::StatusOr<int> n = MoveSoftmaxAxesLast(module);
    if (!n.ok()) return n.status();
    return *n > 0;
  }
};

}  // namespace hgc

#endif  // HGC_PASSES_SOFTMAX_LAST_AXIS_H_
