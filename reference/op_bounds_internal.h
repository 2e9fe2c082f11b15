// Internal to the error-bound rules per op (reference/op_bounds.h): the
// bound arithmetic they share and one rule per op family. Not part of any
// API: only the files below include this header.
//
//   bound_arithmetic.cc      the shared arithmetic declared here: rounding
//                            flips, storing bounds, f32 bound tensors, the
//                            order of f32 sums, reference kernels on bounds
//   elementwise_bounds.cc    the elementwise ops: math functions, the
//                            broadcast binary ops and select, cast,
//                            quantize and dequantize
//   reduction_bounds.cc      the sums: matmul and reduce_*, with their
//                            underflow, zero-sign and non-finite parts
//   normalization_bounds.cc  softmax and layernorm
//   op_bounds.cc             OpBound (op kind -> rule) and FinishBound
#ifndef HGC_REFERENCE_OP_BOUNDS_INTERNAL_H_
#define HGC_REFERENCE_OP_BOUNDS_INTERNAL_H_

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "ir/tensor_type.h"
#include "reference/reference_interpreter.h"
#include "support/status_macros.h"

namespace hgc {
namespace reference {
namespace op_bounds_internal {

// ---------------------------------------------------------------------------
// Bound arithmetic (bound_arithmetic.cc). A bound tensor is f32 of the
// result's shape; an empty tensor (no data) means every element is exact.

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kF32Unit = 0x1p-24;

inline bool Has(const Tensor& e) { return e.raw() != nullptr; }
inline double At(const Tensor& e, int64_t i) {
  return Has(e) ? e.GetDouble(i) : 0.0;
}

// e * m where an exact operand (e = 0) contributes nothing, even against an
// infinite m.
inline double Mul0(double e, double m) { return e == 0 ? 0.0 : e * m; }

// The smallest positive value of floating-point `dtype` (0 for integers):
// the spacing of its denormals.
double DenormMin(DType dtype);

// The last rounding of r to `dtype` flipping: 2 u |r|, and at least one
// step of the denormals, where the spacing stops shrinking with |r| (f16
// rounds 2.98e-8 to 0 and 2.99e-8 to 5.96e-8).
double Flip(DType dtype, double r);

absl::StatusOr<Tensor> NewBound(const Shape& shape, int64_t max_bytes);

// Stores the bound of element i of `value`: inf for a NaN bound, never
// negative; a non-finite value keeps only an infinite bound (its result is
// uncertain), anything less means it is certain (0).
void StoreBound(Tensor& e, const Tensor& value, int64_t i, double bound);

// |t| as an f32 tensor (exact for every dtype hgc has).
absl::StatusOr<Tensor> AbsF32(const Tensor& t, int64_t max_bytes);

// a + b of two f32 tensors of the same shape (a bound, so rounded up).
absl::StatusOr<Tensor> SumF32(const Tensor& a, const Tensor& b,
                              int64_t max_bytes);

// t^2 elementwise, for an f32 tensor t >= 0 (rounded up).
absl::StatusOr<Tensor> Squared(const Tensor& t, int64_t max_bytes);

// How far two f32 sums of the same `count` terms, in different orders, may
// differ: each is off by about u sqrt(sum_k s_k^2) over its partial sums
// s_k, which is about u sqrt(count) (|sum| + sqrt(sum of squares)) whether
// the terms share a sign (s_k grows to the sum) or not (s_k wanders like a
// random walk); twice that for the two sums.
double SumOrder(int64_t count, double sum, double sum_of_squares);

// Runs the reference kernel `kind` on f32 bound tensors, with the op's
// attributes, giving an f32 tensor of `shape`.
absl::StatusOr<Tensor> RunF32(absl::string_view kind,
                              absl::Span<const Tensor> operands,
                              const AttrMap& attrs, const Shape& shape,
                              const InterpretOptions& options);

// `v` rounded to the floating-point `dtype` (f32 for the others).
double RoundTo(DType dtype, double v);

// E of a non-finite result r = g(x_0 .. x_{n-1}) of an elementwise op whose
// operands lie in [x_k - E_k, x_k + E_k]: 0 (r is certain) when g at every
// corner of those intervals, rounded to `dtype`, gives r again (the same
// infinity, or NaN), and inf (anything may come out) when one corner does
// not or an operand is unbounded. A non-finite operand has E = 0 or inf, so
// its corners are itself. For the monotone pieces elementwise ops are made
// of, the corners are where r can change: a pole or the edge of a domain
// inside an interval (x / (0 +- E), log(0 +- E)) makes two corners
// differ, or one of them differ from r.
template <typename G>
double NonFiniteBound(G g, DType dtype, const double* v, const double* b, int n,
                      double r) {
  double corner[3];
  for (int mask = 0; mask < (1 << n); ++mask) {
    bool repeat = false;
    for (int k = 0; k < n; ++k) {
      if (b[k] == kInf) return kInf;
      const bool high = (mask >> k) & 1;
      if (high && b[k] == 0) repeat = true;
      corner[k] = high ? v[k] + b[k] : v[k] - b[k];
    }
    if (repeat) continue;
    const double c = RoundTo(dtype, g(corner));
    if (!(c == r || (std::isnan(c) && std::isnan(r)))) return kInf;
  }
  return 0;
}

// An f32 tensor of x's shape holding 1 where pred(x_i, E_i) holds and 0
// elsewhere, or no tensor (no data) where it holds nowhere.
template <typename P>
absl::StatusOr<Tensor> Indicator(const Tensor& x, const Tensor& ex,
                                 int64_t max_bytes, P pred) {
  HGC_ASSIGN_OR_RETURN(Tensor t, NewBound(x.shape(), max_bytes));
  bool any = false;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const bool hit = pred(x.GetDouble(i), At(ex, i));
    t.mutable_data<float>()[i] = hit ? 1.0f : 0.0f;
    any = any || hit;
  }
  return any ? std::move(t) : Tensor();
}

// ---------------------------------------------------------------------------
// What a value x with bound e may be, for Indicator and the rules.

// |x| + E where both are finite, else 0: what a finite term may weigh.
inline double FiniteMagnitude(double x, double e) {
  return std::isfinite(x) && std::isfinite(e) ? std::fabs(x) + e : 0.0;
}
inline bool NonFinite(double x, double) { return !std::isfinite(x); }
inline bool Unbounded(double, double e) { return e == kInf; }
// A finite value whose interval holds 0: its sign is not certain.
inline bool ReachesZero(double x, double e) {
  return std::isfinite(x) && e > 0 && std::fabs(x) <= e;
}
inline bool IsZero(double x, double e) { return x == 0 && e == 0; }
inline bool SignBit(double x, double) { return std::signbit(x); }
inline bool NoSignBit(double x, double) { return !std::signbit(x); }
inline bool MayBeNonZero(double x, double e) { return x != 0 || e > 0; }

// The bound of a zero whose sign is not certain, where nothing larger is
// owed: the smallest f32 denormal (an interval holding both zeros).
constexpr double kSignOfZero = 0x1p-149;

// ---------------------------------------------------------------------------
// The rules per op family: E of `op`'s result r from its operands' values
// xs and bounds es (an empty tensor: exact), as OpBound returns it.

// elementwise_bounds.cc.
// exp, log, sqrt, rsqrt, tanh, sigmoid and gelu.
absl::StatusOr<Tensor> MathFunctionBound(const Op& op, const Tensor& x,
                                         const Tensor& ex, const Tensor& r,
                                         int64_t max_bytes);
// add, sub, mul, div, max, min, pow, select and the comparisons, with numpy
// broadcasting. A bool result's E is 1 where it may come out either way
// (its operands' intervals reach each other: a comparison of values equal
// within rounding), 0 where it is exact; select with such a condition may
// give either operand.
absl::StatusOr<Tensor> BroadcastOpBound(const Op& op,
                                        absl::Span<const Tensor> xs,
                                        absl::Span<const Tensor> es,
                                        const Tensor& r, int64_t max_bytes);
// A cast to bool may flip where x's interval holds both 0 and not 0.
absl::StatusOr<Tensor> CastBound(const Tensor& x, const Tensor& ex,
                                 const Tensor& r, int64_t max_bytes);
// quantize and dequantize.
absl::StatusOr<Tensor> QuantizeBound(const Op& op, const Tensor& x,
                                     const Tensor& ex, const Tensor& r,
                                     int64_t max_bytes);

// reduction_bounds.cc.
absl::StatusOr<Tensor> MatmulBound(const Op& op, absl::Span<const Tensor> xs,
                                   absl::Span<const Tensor> es, const Tensor& r,
                                   const InterpretOptions& options);
// reduce_sum, reduce_mean and reduce_max.
absl::StatusOr<Tensor> ReduceBound(const Op& op, const Tensor& x,
                                   const Tensor& ex, const Tensor& r,
                                   const InterpretOptions& options);

// normalization_bounds.cc.
absl::StatusOr<Tensor> SoftmaxBound(const Op& op, const Tensor& x,
                                    const Tensor& ex, const Tensor& r,
                                    int64_t max_bytes);
absl::StatusOr<Tensor> LayernormBound(const Op& op, absl::Span<const Tensor> xs,
                                      absl::Span<const Tensor> es,
                                      const Tensor& r, int64_t max_bytes);

}  // namespace op_bounds_internal
}  // namespace reference
}  // namespace hgc

#endif  // HGC_REFERENCE_OP_BOUNDS_INTERNAL_H_
