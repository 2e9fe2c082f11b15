// recognize-softmax: a softmax written out op by op as one softmax op.
//
// Exporters that decompose softmax (JAX and StableHLO, PyTorch's
// decompositions, hand-written "stable softmax" code) give
//   %m = reduce_max(%x) {axes = [a], keep_dims = true}
//   %d = sub(%x, %m)
//   %e = exp(%d)
//   %s = reduce_sum(%e) {axes = [a], keep_dims = true}
//   %y = div(%e, %s)
// which this pass rewrites as %y = softmax(%x) {axis = a}, so that
// attention-fusion and fusion see the softmax they know. Either reduction
// may also drop the axis (keep_dims = false, as ONNX before opset 18
// exports ReduceMax / ReduceSum with keepdims = 0) when what sub or div
// reads has the kept shape after all: the reduction reshaped back to it
// (ONNX's Unsqueeze), or the reduction itself when only dims of 1 come
// before the axis (broadcasting pads its shape with leading 1s). The ops
// it reads stay for their other users (dce removes the rest).
//
// Only f32 chains are rewritten: there the written-out form and the op
// differ by where f32 rounds (the op rounds once), which the reduction
// tolerance of the check already covers (the design lets reductions,
// softmax's sum included, differ in order); a bf16 or f16 chain rounds
// every exp to 8 or 11 bits, which the op would not reproduce.
//
// Preconditions: a verified module. Guarantees: the module verifies, graph
// signatures are unchanged, the softmax keeps the division's result name.
#ifndef HGC_PASSES_RECOGNIZE_SOFTMAX_H_
#define HGC_PASSES_RECOGNIZE_SOFTMAX_H_

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

// Rewrites every written-out f32 softmax in `module`'s graphs; returns the
// number rewritten.
absl::StatusOr<int> RecognizeSoftmaxes(Module& module);

class RecognizeSoftmaxPass : public Pass {
 public:
  absl::string_view name() const override { return "RecognizeSoftmax"; }
  absl::string_view argument() const override { return "recognize-softmax"; }
  absl::string_view description() const override {
    return "rewrite exp(x - max(x)) / sum(exp(x - max(x))) as a softmax op";
  }
  absl::StatusOr<bool> Run(Module& module) override {
    absl::StatusOr<int> n = RecognizeSoftmaxes(module);
    if (!n.ok()) return n.status();
    return *n > 0;
  }
};

}  // namespace hgc

#endif  // HGC_PASSES_RECOGNIZE_SOFTMAX_H_
