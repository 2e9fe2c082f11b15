// The reference interpreter with an error bound: alongside each value it
// computes, per element, how far a correct implementation may be from the
// reference's value. This is what `hgc --run --check`, `hgc --bench` and
// the API tests judge compiled outputs by (reference/check.h).
//
// The values are exactly Interpret()'s (reference_interpreter.h). The bound
// E(v) >= 0 of each element is a first-order estimate of
// |compiled - reference| for an implementation that follows design.md's
// numerics: IEEE elementwise arithmetic (bit-exact given the same inputs),
// summation in any order inside reductions, and one rounding per op to its
// result dtype. With u the unit roundoff of a dtype (f32 2^-24, f16 2^-11,
// bf16 2^-8; 0 for integers and bool):
//
// * Parameters and constants are exact: E = 0.
// * Every f32 sum of N terms t (matmul's K, reduce_sum/reduce_mean, the
//   statistics of softmax and layernorm) adds
//   2 u_f32 sqrt(N) (|sum t| + sqrt(sum t^2)): each of two sums in
//   different orders is off by about u sqrt(sum of squared partial sums),
//   whether the terms share a sign or cancel (a small result of large
//   terms).
// * Gradual underflow: each matmul term adds 2^-148 to the bound of a
//   nonzero result (below 2^-126 each f32 rounding of a product or a
//   partial sum may be off by 2^-150; the reference rounds two per term),
//   2^-124 in a bf16 matmul, whose dot products (vdpbf16ps, AMX) flush
//   results below 2^-126 to zero. Denormal bf16 operands of a matmul are
//   zeros for the values (runtime/portable/matmul.cc) and for the bounds alike.
// * A zero has E > 0 (the underflow term, at least 2^-149), and so may
//   come out as either zero, unless its sign is certain: a matmul or
//   reduce_sum whose terms are all exact zeros of certain sign, not all
//   -0, gives +0 in every order; terms that cancel or underflow
//   (-1e-40 * 1e-40 is -0, and +0 + -0 = +0 while fma(-1e-40, 1e-40, +0)
//   = -0) or only -0 terms do not. mul by an exact 0 keeps the other
//   factor's uncertain sign. The division by such a zero is then an
//   uncertain infinity (below).
// * Errors of the operands propagate to first order, evaluated on the
//   interval where that matters: add/sub Ea + Eb; mul Ea|b| + |a|Eb + EaEb;
//   div (Ea + |r|Eb) / (|b| - Eb) (inf where Eb >= |b|); matmul in
//   quadrature, sqrt(sum_k Ea^2 (b^2 + Eb^2) + a^2 Eb^2) (independent
//   errors of K terms; a plain sum of |terms| would grow by sqrt(K) a
//   layer); reduce_sum sqrt(sum E^2) (reduce_mean over N);
//   reduce_max, max, min, relu, clamp, neg, abs: the largest operand E;
//   exp, log, sqrt, rsqrt, tanh, sigmoid, gelu: max |f(x +- E) - r|;
//   softmax p_i expm1(E_i + sum_j p_j E_j) (a p_i that rounded to 0 from
//   x_i - max >= -104, where exp still gives a denormal, gets the smallest
//   denormal: another order keeps a tiny p_i, and a tiny p_i times an
//   infinite value is an infinity, not NaN); layernorm
//   |gamma| (E_i + mean E + |xhat_i| mean(|xhat| E)) / sigma + |xhat| Egamma
//   + Ebeta; reshape and transpose move E with the elements; select takes
//   the chosen operand's E.
// * An op rounding to dtype d adds 2 u_d |r|, and at least the smallest
//   denormal of d (a flip of its last rounding: both sides round, each by
//   up to u |r| or, among the denormals, half their step; exact zeros of
//   math functions, gelu(0) or log(1), stay exact) whenever its operands carry
//   error, and always for matmul (bf16/f16 results), softmax and layernorm,
//   whose internal sums differ by order. Softmax and layernorm also add
//   (4 + sqrt(N)) u_f32 relative to their row's scale (exp/rsqrt within a
//   few ulps, the f32 row sums).
// * Integer and bool values carry E in steps: comparisons give 0 (a bool is
//   owed exactly); a cast or quantize to an integer of an inexact float
//   gives the steps its interval [x - E, x + E] spans; dequantize scales
//   steps back. Integer add, sub, mul, neg, abs, matmul and reduce_sum
//   wrap: where [r - E, r + E] passes the dtype's range, a result one step
//   off may have wrapped to the other end, so E = inf there.
// * A non-finite value has E = 0 where it is certain (it must match
//   exactly) and E = inf where it is not. An elementwise op evaluates
//   itself at the corners of its operands' intervals: x / (0 +- E) or
//   log(0 +- E) may come out as anything, inf / (2 +- E) is inf for
//   certain. A sum (matmul, reduce_sum) is uncertain where an operand
//   with E = inf, an infinity times a factor whose interval holds 0, or
//   finite terms heavy enough to overflow in another order take part, or
//   where no non-finite term does (an overflow); softmax and layernorm
//   where an input with E = inf does. A NaN bound (inf * 0 and the like)
//   becomes inf.
// * E = inf on any value says that a correct result may be anything there;
//   the comparison (tensor_util/tensor_compare.h) accepts every value, NaN and
//   the infinities included.
//
// Cost: each matmul runs one more f32 matmul (of squares), and up to two
// more where its operands carry error; bounds are f32 tensors of the values'
// shapes, omitted (no data) where every element is 0.
#ifndef HGC_REFERENCE_ERROR_BOUND_H_
#define HGC_REFERENCE_ERROR_BOUND_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "reference/reference_interpreter.h"

namespace hgc {

struct BoundedResults {
  // Interpret()'s results, bit for bit.
  std::vector<Tensor> values;
  // One per value: an f32 tensor of the value's shape holding E, or a
  // tensor without data (raw() == nullptr) where E is 0 everywhere.
  std::vector<Tensor> bounds;
};

// Interpret(graph, inputs, options), with error bounds. Same errors.
absl::StatusOr<BoundedResults> InterpretWithErrorBounds(
    const Graph& graph, absl::Span<const Tensor> inputs,
    const InterpretOptions& options = {});

// The unit roundoff of `dtype` (0 for integers and bool).
double UnitRoundoff(DType dtype);

}  // namespace hgc

#endif  // HGC_REFERENCE_ERROR_BOUND_H_
