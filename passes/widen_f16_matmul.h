// widen-f16-matmul: f16 matmuls computed as f32 matmuls between casts.
//
// An f16 matmul is defined as products and sums in f32 and one rounding to
// f16 at the end (design: f16 behaves like bf16). No x86 CPU hgc targets
// has a dot product of f16 pairs into f32 (AVX512-FP16 accumulates in f16;
// AMX-FP16 is on later Xeons only), so the matmul is rewritten as exactly
// that:
//   c = matmul(a, b)   ->   c = cast(matmul(cast(a, f32), cast(b, f32)), f16)
// with the same transpose attributes. Widening f16 to f32 is exact, so the
// f32 matmul sees the same numbers and rounds its result once: the values
// computed are those of the definition, and the f32 matmul lowers to the
// AVX-512 kernels. A constant B's cast is const-only (evaluated once per
// set of constants, then prepacked); fusion takes the result's cast as a
// post-op. This is XLA's float normalization, for the one op that needs it.
//
// Only top-level graphs are rewritten (run it after attention-fusion:
// attention blocks widen their f16 operands per head themselves).
//
// Preconditions: a verified module. Guarantees: the module verifies, graph
// signatures are unchanged, every value computed is the same; each
// rewritten matmul's final cast keeps the matmul's result name.
#ifndef HGC_PASSES_WIDEN_F16_MATMUL_H_
#define HGC_PASSES_WIDEN_F16_MATMUL_H_

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

// Rewrites every f16 matmul of the top-level graphs of `module`. Returns
// the number rewritten.
absl::StatusOr<int> WidenF16Matmuls(Module& module);

class WidenF16MatmulPass : public Pass {
 public:
  absl::string_view name() const override { return "WidenF16Matmul"; }
  absl::string_view argument() const override { return "widen-f16-matmul"; }
  absl::string_view description() const override {
    return "compute f16 matmuls as f32 matmuls between casts (f16 products "
           "summed in f32, one rounding)";
  }
  absl::StatusOr<bool> Run(Module& module) override {
    absl::StatusOr<int> n = WidenF16Matmuls(module);
    if (!n.ok()) return n.status();
    return *n > 0;
  }
};

}  // namespace hgc

#endif  // HGC_PASSES_WIDEN_F16_MATMUL_H_
