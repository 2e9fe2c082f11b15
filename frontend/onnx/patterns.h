// Lifting decomposed LayerNorm and GELU, as torch.onnx.export writes them
// before opsets 17 and 20, back into hgc's `layernorm` and `gelu` ops
// (docs/onnx.md, "Patterns"). The lifted ops round differently from the
// chains they replace, so the importer does this only when
// OnnxImportOptions::lift_patterns asks for it.
#ifndef HGC_FRONTEND_ONNX_PATTERNS_H_
#define HGC_FRONTEND_ONNX_PATTERNS_H_

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace hgc {

// What LiftPatterns rewrote.
struct LiftedPatterns {
  int layernorm = 0;
  int gelu = 0;
};

// Rewrites, in `graph`, every chain of ops that matches one of these
// exactly (operands of add and mul in either order) and whose
// intermediate values have no other user and are no graph result:
//   LayerNorm: m = reduce_mean(x) {axes = the last k axes, keep_dims};
//     d = sub(x, m); v = reduce_mean(mul(d, d)) {the same axes};
//     y = add(mul(div(d, sqrt(add(v, EPS))), gamma), beta)
//     -> layernorm(x, gamma, beta) {axis = -k, epsilon = EPS}
//     (both gamma and beta present, each of type x.shape[-k:] in x's
//     dtype; EPS a positive literal constant);
//   GELU (erf): the product of x, 0.5 and add(erf(div(x, sqrt(2))), 1)
//     (or erf(mul(x, 1/sqrt(2)))), in any grouping
//     -> gelu(x) {approximate = "none"};
//   GELU (tanh): the product of x, 0.5 and
//     add(tanh(mul(sqrt(2/pi), add(x, mul(0.044715, x * x * x)))), 1)
//     -> gelu(x) {approximate = "tanh"}.
// x is f32; constants are one-element literal `constant` ops whose values
// are within f32 rounding of those above. The replaced ops, and literal
// constants left without users, are erased.
absl::StatusOr<LiftedPatterns> LiftPatterns(Graph& graph);

}  // namespace hgc

#endif  // HGC_FRONTEND_ONNX_PATTERNS_H_
