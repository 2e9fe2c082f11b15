// quantized-matmul: matmuls between dequantized integers computed as
// integer matmuls with the scales applied once to the result.
//
// Frameworks export int8 layers as dequantize -> f32 matmul (ONNX's QDQ
// form, PyTorch's quantized exports); design.md leaves turning that into
// int8 compute to the compiler. For
//   y = matmul(dequantize(a; sa, za), dequantize(b; sb, zb))
// with a and b u8 or s8, sa and za per tensor, sb and zb per tensor or per
// output channel (b's N axis), the exact value of each element is
//   sa * sb[n] * sum_k (a - za) (b - zb[n]),
// and the rewrite computes that sum in s32:
//   b8  = b as s8: b itself, or b - 128 when b is u8 (then zr = zb - 128,
//         else zr = zb), so that the kernels see u8 x s8 or s8 x s8
//   acc = matmul(a, b8)                                 (s32)
//       - za * colsum(b8)[n]                            (when za != 0)
//       - zr[n] * rowsum(a)[m] + K * za * zr[n]          (when zr != 0)
//   y   = dequantize(acc; scale = f32(sa) * f32(sb[n]), zero point 0)
// The s32 arithmetic wraps, and the final sum fits s32 (the rewrite
// requires K * max|a - za| * max|b - zb| < 2^31), so the integer part is
// exact; the one rounding left is the dequantize's, where the f32 matmul
// rounded every dequantized element, product and partial sum. Design.md
// allows the matmul's summation to differ from the reference's; this is
// that sum computed exactly. A constant b's b8 and column sums are
// const-only (computed once per SetConstants, then prepacked); a run-time
// b's column sums are a matmul of a row of ones with b8, and a's row sums
// a matmul of a with a column of ones (on the same kernels); fusion takes the corrections and the dequantize as the s32
// matmul's post-ops.
//
// A matmul written on the integers themselves with a u8 B (u8 x u8 or
// s8 x u8, s32 result), which no kernel computes, becomes
//   matmul(a, b - 128) + 128 * rowsum(a)
// the same s32 bits (the arithmetic wraps alike), on the u8 x s8 / s8 x s8
// kernels.
//
// An operand may also be a dequantized tensor transposed in its last two
// dims (weights stored [N, K], as Gemm's transB is exported): the integer
// matmul reads the tensor itself with its transpose flag flipped.
//
// Matmuls left alone: operands not both dequantized u8 / s8, a per-channel
// a (its scale would vary along K), per-channel b along another axis than
// N, a K past the s32 bound, a combined scale that is not a normal f32, or
// scales so large that the f32 chain's elements, products or sums could
// overflow (it then gives inf or NaN where the integer sum is finite).
// Only top-level graphs are rewritten (run it after attention-fusion).
//
// Preconditions: a verified module. Guarantees: the module verifies, graph
// signatures are unchanged, each rewritten matmul's result keeps its name
// (now the dequantize's), and the dequantize ops only it read are erased.
#ifndef HGC_PASSES_QUANTIZED_MATMUL_H_
#define HGC_PASSES_QUANTIZED_MATMUL_H_

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

// Rewrites every matmul of dequantized integers in the top-level graphs of
// `module`. Returns the number rewritten.
absl::StatusOr<int> RewriteQuantizedMatmuls(Module& module);

class QuantizedMatmulPass : public Pass {
 public:
  absl::string_view name() const override { return "QuantizedMatmul"; }
  absl::string_view argument() const override { return "quantized-matmul"; }
  absl::string_view description() const override {
    return "compute matmuls of dequantized u8 / s8 tensors as integer "
           "matmuls, scales and zero points applied to the s32 result";
  }
  absl::StatusOr<bool> Run(Module& module) override {
    absl::StatusOr<int> n = RewriteQuantizedMatmuls(module);
    if (!n.ok()) return n.status();
    return *n > 0;
  }
};

}  // namespace hgc

#endif  // HGC_PASSES_QUANTIZED_MATMUL_H_
