// Accurate f32 math functions emitted as straight-line LLVM IR.
//
// Each Emit* takes an f32 value, scalar or <N x float>, and returns the
// function applied lane-wise, in the same shape. The IR is fma / mul / add /
// div / compare / select / integer bit operations only: no libm calls, no
// branches, no scalarization, so a <16 x float> input lowers to a straight
// run of zmm instructions (vfmadd, vrndscaleps, vscalef-free exponent bit
// arithmetic, vblendmps; EmitExpNonPositive may use vscalefps and
// EmitExpOfDifference vreduceps too; exp rounds its reduction's n by a
// shift inside an fma instead). Scalar inputs serve loop tails.
//
// Accuracy, measured by vector_math_test against the double-precision C++
// functions rounded to f32 (ulp = distance in representable floats):
//   exp      <= 1 ulp (e^(x - m) by vreduceps: see EmitExpOfDifference);
//            overflow to +inf above 88.72, gradual underflow down
//            to the smallest denormal, 0 below -103.97
//   log      <= 1 ulp, denormal inputs included; log(0) = -inf,
//            log(x < 0) = NaN, log(+inf) = +inf
//   tanh     <= 1 ulp (odd polynomial below |x| = 0.625, 1 - 2/(e^2|x|+1)
//            above); tanh(-0) = -0
//   erf      <= 1 ulp (odd polynomial below |x| = 0.875, 1 - erfc above)
//   sigmoid  <= 2 ulp, including the denormal tail for x < -87
//   gelu     erf form <= 4 ulp everywhere (checked exhaustively: 4 ulp at a
//            few x < 0, <= 3 for x >= 0, <= 2 above 0.5; the negative tail
//            is x/2 * erfc(-x/sqrt 2) with x^2 split exactly, not a
//            cancelling 1 + erf, down to the denormals); tanh form <= 3 ulp
//            for x >= -3 and within 2.5 ulp times the function's condition
//            number below
//   sqrt     correctly rounded (llvm.sqrt); rsqrt = 1 / sqrt(x), <= 1 ulp
// NaN inputs give NaN. gelu(-inf) is NaN, as in the reference interpreter
// (-inf * 0); gelu(+inf) = +inf. The exact bounds per function are in
// vector_math_test.cc.
#ifndef HGC_CODEGEN_LLVM_VECTOR_MATH_H_
#define HGC_CODEGEN_LLVM_VECTOR_MATH_H_

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Value.h"

namespace hgc {
namespace codegen {

// e^x. Range reduction x = n ln2 + r with n = roundeven(x log2 e) (rounded
// by adding and subtracting 1.5 * 2^23 around the product, in an fma) and a
// two-constant (Cody-Waite) ln2, a degree-7 polynomial for e^r, and the
// scale 2^n applied as two exponent-field multiplies so results that land
// in the denormal range are rounded once.
llvm::Value* EmitExp(llvm::IRBuilder<>& b, llvm::Value* x);

// How EmitExpNonPositive applies 2^n to a <16 x float>: the polynomial
// computes e^r 2^-64 (its coefficients scaled, exactly), and one multiply
// by 2^(n + 64), built in the exponent field from the bits that rounded n,
// rounds a denormal result once (any target), or one AVX-512 vscalefps, which
// rounds a denormal result once as well and lets a NaN through by itself (about
// a third fewer instructions; the IR then needs a target with AVX-512F).
enum class ExpScaling { kPortable, kAvx512Scalef };

// e^x for x <= 0 (softmax's exp(x - max)): EmitExp without its overflow
// clamp and with a degree-6 polynomial, which is enough there (<= 1 ulp,
// denormal results included, 0 below -103.97 and for -inf, NaN for NaN).
// Positive x are outside its domain. Both scalings give the same results;
// kAvx512Scalef applies to <16 x float> only (other shapes use the portable
// form).
llvm::Value* EmitExpNonPositive(llvm::IRBuilder<>& b, llvm::Value* x,
                                ExpScaling scaling = ExpScaling::kPortable);

// EmitExpNonPositive's portable form in two halves, so that a loop can
// run one vector's range reduction beside the previous vector's polynomial:
// each half is a chain of about 25 cycles of dependent operations, and the
// whole chain is too long for the out-of-order window to overlap several
// vectors of it. EmitExpFinish(b, EmitExpReduce(b, x)) is
// EmitExpNonPositive(b, x, ExpScaling::kPortable).
struct ExpReduction {
  llvm::Value* r = nullptr;        // x - n ln2 (x clamped at -104)
  llvm::Value* shifted = nullptr;  // 1.5 * 2^23 + n: n in its low bits
};
ExpReduction EmitExpReduce(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* EmitExpFinish(llvm::IRBuilder<>& b, const ExpReduction& red);

// e^(x - m) for x <= m (softmax's exp(s - max)), m broadcast or per lane.
// With kAvx512Scalef on <16 x float> it is 2^t for t = (x - m) log2 e:
// vreduceps splits t into floor(t) and f = t - floor(t) exactly, a
// degree-6 polynomial gives 2^f, and vscalefps applies 2^floor(t) (one
// rounding, denormal results included): 10 instructions where
// EmitExpNonPositive(x - m) takes 13. Rounding t (and log2 e) costs
// accuracy in proportion to |x - m|: the result is within
// 2 + 1.25 |x - m| ulp of e^(x - m) (measured in vector_math_test), and
// never further from it than half an ulp of the row's largest weight,
// e^0 = 1, which is what softmax's sum and quotient see. x = -inf gives 0; m =
// -inf (a fully masked row) or a NaN gives NaN, as e^(x - m) does. Needs
// AVX-512 DQ (vreduceps) with the scaling; other shapes and kPortable compute
// EmitExpNonPositive(x - m).
llvm::Value* EmitExpOfDifference(llvm::IRBuilder<>& b, llvm::Value* x,
                                 llvm::Value* m, ExpScaling scaling);

// Natural logarithm: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
// log1p(m - 1) by a degree-11 polynomial and e ln2 in two parts.
llvm::Value* EmitLog(llvm::IRBuilder<>& b, llvm::Value* x);

// Hyperbolic tangent.
llvm::Value* EmitTanh(llvm::IRBuilder<>& b, llvm::Value* x);

// The error function.
llvm::Value* EmitErf(llvm::IRBuilder<>& b, llvm::Value* x);

// 1 / (1 + e^-x), evaluated as e^-|x| / (1 + e^-|x|) for negative x so the
// result keeps its relative accuracy down to the denormals.
llvm::Value* EmitSigmoid(llvm::IRBuilder<>& b, llvm::Value* x);

// x * Phi(x) = x/2 * (1 + erf(x / sqrt 2)) (gelu with approximate="none"),
// one formula for every x: x - tail for x >= 0 and -tail below, with
// tail = |x|/2 erfc(|x| / sqrt 2) = |x|/2 e^(-x^2/2) t Q(t), t = 4/(4 + |x|),
// Q a degree-9 polynomial: one division, no branches computed twice.
llvm::Value* EmitGeluErf(llvm::IRBuilder<>& b, llvm::Value* x);

// x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (approximate="tanh"),
// evaluated as x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)) with the
// argument carried in double-f32 precision.
llvm::Value* EmitGeluTanh(llvm::IRBuilder<>& b, llvm::Value* x);

// sqrt(x) (llvm.sqrt; vsqrtps).
llvm::Value* EmitSqrt(llvm::IRBuilder<>& b, llvm::Value* x);

// 1 / sqrt(x), as a correctly rounded sqrt followed by a division (not the
// 14-bit vrsqrt14ps estimate).
llvm::Value* EmitRsqrt(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LLVM_VECTOR_MATH_H_
