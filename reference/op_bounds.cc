// The error-bound rules per op (reference/op_bounds.h): how far a correct
// implementation may be from the reference's value of one op, given its
// operands' values and bounds.
#include "reference/op_bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/ops/op_helpers.h"
#include "reference/error_bound.h"
#include "reference/kernels.h"
#include "support/float16.h"
#include "support/status_macros.h"

namespace hgc {
namespace reference {
namespace {

using reference::BroadcastStrides;
using reference::StridedWalker;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kF32Unit = 0x1p-24;

bool Has(const Tensor& e) { return e.raw() != nullptr; }
double At(const Tensor& e, int64_t i) { return Has(e) ? e.GetDouble(i) : 0.0; }

// e * m where an exact operand (e = 0) contributes nothing, even against an
// infinite m.
double Mul0(double e, double m) { return e == 0 ? 0.0 : e * m; }

// The smallest positive value of floating-point `dtype` (0 for integers):
// the spacing of its denormals.
double DenormMin(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 0x1p-149;
    case DType::kBF16:
      return 0x1p-133;
    case DType::kF16:
      return 0x1p-24;
    default:
      return 0;
  }
}

// The last rounding of r to `dtype` flipping: 2 u |r|, and at least one
// step of the denormals, where the spacing stops shrinking with |r| (f16
// rounds 2.98e-8 to 0 and 2.99e-8 to 5.96e-8).
double Flip(DType dtype, double r) {
  return std::max(2 * UnitRoundoff(dtype) * std::fabs(r), DenormMin(dtype));
}

absl::StatusOr<Tensor> NewBound(const Shape& shape, int64_t max_bytes) {
  return reference::NewTensor(TensorType(DType::kF32, shape), max_bytes);
}

// Stores the bound of element i of `value`: inf for a NaN bound, never
// negative; a non-finite value keeps only an infinite bound (its result is
// uncertain), anything less means it is certain (0).
void StoreBound(Tensor& e, const Tensor& value, int64_t i, double bound) {
  const double v = value.GetDouble(i);
  if (std::isnan(bound)) bound = kInf;
  if (!std::isfinite(v)) {
    bound = bound == kInf ? kInf : 0;
  } else if (!(bound > 0)) {
    bound = 0;
  }
  float f = static_cast<float>(bound);
  // Round up: a bound must not shrink in storage.
  if (static_cast<double>(f) < bound) {
    f = std::nextafter(f, std::numeric_limits<float>::infinity());
  }
  e.mutable_data<float>()[i] = f;
}

// |t| as an f32 tensor (exact for every dtype hgc has).
absl::StatusOr<Tensor> AbsF32(const Tensor& t, int64_t max_bytes) {
  HGC_ASSIGN_OR_RETURN(Tensor out, NewBound(t.shape(), max_bytes));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    out.mutable_data<float>()[i] =
        static_cast<float>(std::fabs(t.GetDouble(i)));
  }
  return out;
}

// a + b of two f32 tensors of the same shape (a bound, so rounded up).
absl::StatusOr<Tensor> SumF32(const Tensor& a, const Tensor& b,
                              int64_t max_bytes) {
  HGC_ASSIGN_OR_RETURN(Tensor out, NewBound(a.shape(), max_bytes));
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    double s = a.GetDouble(i) + b.GetDouble(i);
    float f = static_cast<float>(s);
    if (static_cast<double>(f) < s) f = std::nextafter(f, INFINITY);
    out.mutable_data<float>()[i] = f;
  }
  return out;
}

// t^2 elementwise, for an f32 tensor t >= 0 (rounded up).
absl::StatusOr<Tensor> Squared(const Tensor& t, int64_t max_bytes) {
  HGC_ASSIGN_OR_RETURN(Tensor out, NewBound(t.shape(), max_bytes));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const double v = t.GetDouble(i);
    float f = static_cast<float>(v * v);
    if (static_cast<double>(f) < v * v) f = std::nextafter(f, INFINITY);
    out.mutable_data<float>()[i] = f;
  }
  return out;
}

// How far two f32 sums of the same `count` terms, in different orders, may
// differ: each is off by about u sqrt(sum_k s_k^2) over its partial sums
// s_k, which is about u sqrt(count) (|sum| + sqrt(sum of squares)) whether
// the terms share a sign (s_k grows to the sum) or not (s_k wanders like a
// random walk); twice that for the two sums.
double SumOrder(int64_t count, double sum, double sum_of_squares) {
  return 2 * kF32Unit * std::sqrt(static_cast<double>(count)) *
         (std::fabs(sum) + std::sqrt(sum_of_squares));
}

// Runs the reference kernel `kind` on f32 bound tensors, with the op's
// attributes, giving an f32 tensor of `shape`.
absl::StatusOr<Tensor> RunF32(absl::string_view kind,
                              absl::Span<const Tensor> operands,
                              const AttrMap& attrs, const Shape& shape,
                              const InterpretOptions& options) {
  return EvaluateOp(kind, operands, attrs, TensorType(DType::kF32, shape),
                    options);
}

// `v` rounded to the floating-point `dtype` (f32 for the others).
double RoundTo(DType dtype, double v) {
  switch (dtype) {
    case DType::kBF16:
      return Bf16ToFloat(FloatToBf16(RoundToOddF32(v)));
    case DType::kF16:
      return HalfToFloat(FloatToHalf(RoundToOddF32(v)));
    default:
      return static_cast<float>(v);
  }
}

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

// The elementwise ops of one operand. f returns E of element i from
// (x, Ex, r) for a finite r; g is the op on values, for a non-finite r
// (NonFiniteBound).
template <typename F, typename G>
absl::StatusOr<Tensor> UnaryBound(const Tensor& x, const Tensor& ex,
                                  const Tensor& r, int64_t max_bytes, F f,
                                  G g) {
  if (!Has(ex)) return Tensor();
  HGC_ASSIGN_OR_RETURN(Tensor e, NewBound(r.shape(), max_bytes));
  for (int64_t i = 0; i < r.num_elements(); ++i) {
    const double xe = ex.GetDouble(i);
    const double xv = x.GetDouble(i);
    const double rv = r.GetDouble(i);
    double bound = 0;
    if (xe != 0) {
      bound = std::isfinite(rv) ? f(xv, xe, rv)
                                : NonFiniteBound(g, r.dtype(), &xv, &xe, 1, rv);
    }
    StoreBound(e, r, i, bound);
  }
  return e;
}

// max |f(x +- E) - r|, inf where f leaves its domain.
template <typename Fn>
double IntervalDelta(Fn fn, double x, double ex, double r) {
  const double up = std::fabs(fn(x + ex) - r);
  const double down = std::fabs(fn(x - ex) - r);
  if (std::isnan(up) || std::isnan(down)) return kInf;
  return std::max(up, down);
}

// Round half to even and saturate into integer `dtype` (bool: x != 0).
double ToInteger(double x, DType dtype) {
  if (dtype == DType::kBool) return x != 0 ? 1 : 0;
  if (std::isnan(x)) return 0;
  const double lo = static_cast<double>(reference::IntMin(dtype));
  const double hi = static_cast<double>(reference::IntMax(dtype));
  return std::clamp(std::nearbyint(x), lo, hi);
}

// Binary (and select's) elementwise ops with numpy broadcasting. f returns
// E of an output element from the operands' values and bounds and a finite
// r; g is the op on values, for a non-finite r (NonFiniteBound).
template <typename F, typename G>
absl::StatusOr<Tensor> BroadcastBound(absl::Span<const Tensor> xs,
                                      absl::Span<const Tensor> es,
                                      const Tensor& r, int64_t max_bytes, F f,
                                      G g) {
  bool any = false;
  for (const Tensor& e : es) any = any || Has(e);
  if (!any) return Tensor();
  HGC_ASSIGN_OR_RETURN(Tensor e, NewBound(r.shape(), max_bytes));
  StridedWalker w(r.shape());
  for (const Tensor& x : xs)
    w.AddOperand(BroadcastStrides(x.shape(), r.shape()));
  double v[3], b[3];
  for (int64_t i = 0; i < r.num_elements(); ++i, w.Next()) {
    for (size_t k = 0; k < xs.size(); ++k) {
      v[k] = xs[k].GetDouble(w.offset(k));
      b[k] = At(es[k], w.offset(k));
    }
    const double rv = r.GetDouble(i);
    StoreBound(e, r, i,
               std::isfinite(rv)
                   ? f(v, b, rv)
                   : NonFiniteBound(g, r.dtype(), v, b,
                                    static_cast<int>(xs.size()), rv));
  }
  return e;
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

// |x| + E where both are finite, else 0: what a finite term may weigh.
double FiniteMagnitude(double x, double e) {
  return std::isfinite(x) && std::isfinite(e) ? std::fabs(x) + e : 0.0;
}
bool NonFinite(double x, double) { return !std::isfinite(x); }
bool Unbounded(double, double e) { return e == kInf; }
// A finite value whose interval holds 0: its sign is not certain.
bool ReachesZero(double x, double e) {
  return std::isfinite(x) && e > 0 && std::fabs(x) <= e;
}

// Each f32 rounding of a product or a partial sum may be off by 2^-150
// besides its relative error (gradual underflow): the reference rounds
// twice per matmul term, an FMA kernel once, so two results may differ by
// 4 * 2^-150 per term in absolute terms.
constexpr double kUnderflowPerTerm = 0x1p-148;
// bf16 matmuls: the AVX512_BF16 and AMX dot products flush results below
// 2^-126 to zero and read such accumulators as zero (hgc's emulation
// kernel reads f32 denormals as zero too), so each term may lose up to
// 2^-126, and the partial sums of K blocks added into C as much again.
constexpr double kBf16FlushPerTerm = 0x1p-124;
// The bound of a zero whose sign is not certain, where nothing larger is
// owed: the smallest f32 denormal (an interval holding both zeros).
constexpr double kSignOfZero = 0x1p-149;

bool IsZero(double x, double e) { return x == 0 && e == 0; }
bool SignBit(double x, double) { return std::signbit(x); }
bool NoSignBit(double x, double) { return !std::signbit(x); }
bool MayBeNonZero(double x, double e) { return x != 0 || e > 0; }

// An f32 sum of finite terms this large may overflow in some order.
constexpr double kOverflowRisk = 0x1p127;

// Whether a non-finite sum (matmul's K, reduce_sum) is certain: it is when
// it comes from non-finite terms (`non_finite` > 0 of them) that are all
// certain (`uncertain` == 0: no unbounded operand, no inf times a factor
// that may be zero) and its finite terms weigh too little (`magnitude`)
// to overflow in any order; otherwise an order or an operand's error can
// turn inf into NaN or the other infinity, or overflow into inf.
double NonFiniteSumBound(double non_finite, double uncertain,
                         double magnitude) {
  return non_finite > 0 && uncertain == 0 && magnitude < kOverflowRisk ? 0.0
                                                                       : kInf;
}

// Sets E of the non-finite elements of matmul result r in `out` (inf or 0,
// NonFiniteSumBound) from per-element counts: each indicator matrix pair
// (matmul of 0/1 tensors) counts the terms where both hold.
absl::Status MatmulNonFiniteBound(const Op& op, absl::Span<const Tensor> xs,
                                  absl::Span<const Tensor> es, const Tensor& r,
                                  const InterpretOptions& options, float* out) {
  const int64_t n = r.num_elements();
  bool any = false;
  for (int64_t i = 0; i < n && !any; ++i) any = !std::isfinite(r.GetDouble(i));
  if (!any) return absl::OkStatus();
  const int64_t max_bytes = options.max_tensor_bytes;
  auto all = [](double, double) { return true; };
  Tensor ones[2], inf[2], unbounded[2], zero[2];
  for (int s = 0; s < 2; ++s) {
    HGC_ASSIGN_OR_RETURN(ones[s], Indicator(xs[s], es[s], max_bytes, all));
    HGC_ASSIGN_OR_RETURN(inf[s], Indicator(xs[s], es[s], max_bytes, NonFinite));
    HGC_ASSIGN_OR_RETURN(unbounded[s],
                         Indicator(xs[s], es[s], max_bytes, Unbounded));
    HGC_ASSIGN_OR_RETURN(zero[s],
                         Indicator(xs[s], es[s], max_bytes, ReachesZero));
  }
  // sum over pairs of matmul(p.first, p.second), skipping empty ones.
  auto count =
      [&](std::initializer_list<std::pair<const Tensor*, const Tensor*>> pairs)
      -> absl::StatusOr<std::vector<double>> {
    std::vector<double> c(n, 0.0);
    for (const auto& p : pairs) {
      if (!Has(*p.first) || !Has(*p.second)) continue;
      HGC_ASSIGN_OR_RETURN(Tensor t, RunF32("matmul", {*p.first, *p.second},
                                            op.attrs(), r.shape(), options));
      for (int64_t i = 0; i < n; ++i) c[i] += t.GetDouble(i);
    }
    return c;
  };
  HGC_ASSIGN_OR_RETURN(std::vector<double> non_finite,
                       count({{&inf[0], &ones[1]}, {&ones[0], &inf[1]}}));
  HGC_ASSIGN_OR_RETURN(std::vector<double> uncertain,
                       count({{&unbounded[0], &ones[1]},
                              {&ones[0], &unbounded[1]},
                              {&inf[0], &zero[1]},
                              {&zero[0], &inf[1]}}));
  Tensor mag[2];
  for (int s = 0; s < 2; ++s) {
    HGC_ASSIGN_OR_RETURN(mag[s], NewBound(xs[s].shape(), max_bytes));
    for (int64_t i = 0; i < xs[s].num_elements(); ++i) {
      mag[s].mutable_data<float>()[i] =
          static_cast<float>(FiniteMagnitude(xs[s].GetDouble(i), At(es[s], i)));
    }
  }
  HGC_ASSIGN_OR_RETURN(std::vector<double> magnitude,
                       count({{&mag[0], &mag[1]}}));
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(r.GetDouble(i))) continue;
    out[i] = static_cast<float>(
        NonFiniteSumBound(non_finite[i], uncertain[i], magnitude[i]));
  }
  return absl::OkStatus();
}

// Adds to `out` the absolute error gradual underflow allows a matmul result
// r over `k` terms: k * kUnderflowPerTerm wherever r is not 0, and where r
// is 0 unless its sign is certain. A zero is certain when every product is
// an exact zero (a factor exactly 0) of certain sign (the other factor's
// interval does not hold 0) and not all of them are -0: then every order
// of the sum, from a +0 accumulator or not, gives +0. Otherwise a product
// that underflows (-1e-40 * 1e-40 is -0 in f32, +0 + -0 = +0, while
// fma(-1e-40, 1e-40, +0) = -0), an order in which terms cancel, or an
// operand's error may flip its sign, which x / r turns into -inf vs inf.
absl::Status MatmulUnderflowBound(const Op& op, absl::Span<const Tensor> xs,
                                  absl::Span<const Tensor> es, const Tensor& r,
                                  int64_t k, const InterpretOptions& options,
                                  float* out) {
  const int64_t n = r.num_elements();
  const double per_term =
      xs[0].dtype() == DType::kBF16 ? kBf16FlushPerTerm : kUnderflowPerTerm;
  const double underflow = static_cast<double>(k) * per_term;
  bool zeros = false;
  for (int64_t i = 0; i < n; ++i) {
    const double v = r.GetDouble(i);
    if (v != 0 && std::isfinite(v)) {
      out[i] += static_cast<float>(underflow);
    } else if (v == 0) {
      zeros = true;
    }
  }
  if (!zeros || k == 0) return absl::OkStatus();
  const int64_t max_bytes = options.max_tensor_bytes;
  // Counts over the K terms of each element: sum over pairs of
  // matmul(indicator of a, indicator of b).
  using Pred = bool (*)(double, double);
  auto count = [&](std::initializer_list<std::pair<Pred, Pred>> pairs)
      -> absl::StatusOr<std::vector<double>> {
    std::vector<double> c(n, 0.0);
    for (const auto& p : pairs) {
      HGC_ASSIGN_OR_RETURN(Tensor ia,
                           Indicator(xs[0], es[0], max_bytes, p.first));
      HGC_ASSIGN_OR_RETURN(Tensor ib,
                           Indicator(xs[1], es[1], max_bytes, p.second));
      if (!Has(ia) || !Has(ib)) continue;
      HGC_ASSIGN_OR_RETURN(
          Tensor t, RunF32("matmul", {ia, ib}, op.attrs(), r.shape(), options));
      for (int64_t i = 0; i < n; ++i) c[i] += t.GetDouble(i);
    }
    return c;
  };
  // Products that may be nonzero, or exact zeros of uncertain sign.
  HGC_ASSIGN_OR_RETURN(std::vector<double> uncertain,
                       count({{MayBeNonZero, MayBeNonZero},
                              {IsZero, ReachesZero},
                              {ReachesZero, IsZero}}));
  HGC_ASSIGN_OR_RETURN(std::vector<double> negative,
                       count({{SignBit, NoSignBit}, {NoSignBit, SignBit}}));
  for (int64_t i = 0; i < n; ++i) {
    if (r.GetDouble(i) != 0) continue;
    if (uncertain[i] > 0 || negative[i] == static_cast<double>(k)) {
      // A narrow result rounds the f32 sum once more: a denormal step.
      out[i] += static_cast<float>(
          std::max({underflow, kSignOfZero, DenormMin(r.dtype())}));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> MatmulBound(const Op& op, absl::Span<const Tensor> xs,
                                   absl::Span<const Tensor> es, const Tensor& r,
                                   const InterpretOptions& options) {
  const Tensor& a = xs[0];
  const Tensor& b = xs[1];
  const bool floating = IsFloat(r.dtype());
  const int64_t ra = a.shape().size();
  const Attribute* ta = op.FindAttr("transpose_a");
  const int64_t k =
      a.shape()[(ta != nullptr && ta->as_bool()) ? ra - 2 : ra - 1];
  const int64_t max_bytes = options.max_tensor_bytes;
  if (!floating && !Has(es[0]) && !Has(es[1])) return Tensor();
  HGC_ASSIGN_OR_RETURN(Tensor abs_a, AbsF32(a, max_bytes));
  HGC_ASSIGN_OR_RETURN(Tensor abs_b, AbsF32(b, max_bytes));
  HGC_ASSIGN_OR_RETURN(Tensor sq_a, Squared(abs_a, max_bytes));
  HGC_ASSIGN_OR_RETURN(Tensor sq_b, Squared(abs_b, max_bytes));
  HGC_ASSIGN_OR_RETURN(Tensor e, NewBound(r.shape(), max_bytes));
  float* out = e.mutable_data<float>();
  const int64_t n = r.num_elements();
  if (floating) {
    // The order of the K sum, then the rounding to a narrow result.
    HGC_ASSIGN_OR_RETURN(Tensor terms, RunF32("matmul", {sq_a, sq_b},
                                              op.attrs(), r.shape(), options));
    for (int64_t i = 0; i < n; ++i) {
      out[i] += SumOrder(k, r.GetDouble(i), terms.GetDouble(i));
      // Zeros: MatmulUnderflowBound.
      if (r.dtype() != DType::kF32 && r.GetDouble(i) != 0) {
        out[i] += Flip(r.dtype(), r.GetDouble(i));
      }
    }
  }
  // Independent errors of the K terms add in quadrature:
  // sqrt(sum_k Ea^2 (b^2 + Eb^2) + a^2 Eb^2).
  if (Has(es[0]) || Has(es[1])) {
    HGC_ASSIGN_OR_RETURN(Tensor var, NewBound(r.shape(), max_bytes));
    float* v = var.mutable_data<float>();
    if (Has(es[0])) {
      HGC_ASSIGN_OR_RETURN(Tensor sq_ea, Squared(es[0], max_bytes));
      Tensor rhs = sq_b;
      if (Has(es[1])) {
        HGC_ASSIGN_OR_RETURN(Tensor sq_eb, Squared(es[1], max_bytes));
        HGC_ASSIGN_OR_RETURN(rhs, SumF32(sq_b, sq_eb, max_bytes));
      }
      HGC_ASSIGN_OR_RETURN(Tensor p, RunF32("matmul", {sq_ea, rhs}, op.attrs(),
                                            r.shape(), options));
      for (int64_t i = 0; i < n; ++i) v[i] += p.GetDouble(i);
    }
    if (Has(es[1])) {
      HGC_ASSIGN_OR_RETURN(Tensor sq_eb, Squared(es[1], max_bytes));
      HGC_ASSIGN_OR_RETURN(Tensor p, RunF32("matmul", {sq_a, sq_eb}, op.attrs(),
                                            r.shape(), options));
      for (int64_t i = 0; i < n; ++i) v[i] += p.GetDouble(i);
    }
    for (int64_t i = 0; i < n; ++i) out[i] += std::sqrt(v[i]);
  }
  if (floating) {
    HGC_RETURN_IF_ERROR(MatmulUnderflowBound(op, xs, es, r, k, options, out));
    HGC_RETURN_IF_ERROR(MatmulNonFiniteBound(op, xs, es, r, options, out));
  }
  return e;
}

// Per output element of a reduction `op` of x into r: the sum of
// f(x_i, E_i) over its terms.
template <typename F>
absl::StatusOr<Tensor> ReduceTerms(const Op& op, const Tensor& x,
                                   const Tensor& ex, const Tensor& r,
                                   const InterpretOptions& options, F f) {
  HGC_ASSIGN_OR_RETURN(Tensor t, NewBound(x.shape(), options.max_tensor_bytes));
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    t.mutable_data<float>()[i] =
        static_cast<float>(f(x.GetDouble(i), At(ex, i)));
  }
  return RunF32("reduce_sum", {t}, op.attrs(), r.shape(), options);
}

// 1 where pred holds, for ReduceTerms.
auto Count(bool (*pred)(double, double)) {
  return [pred](double x, double e) { return pred(x, e) ? 1.0 : 0.0; };
}

// Adds kSignOfZero to the zero results of reduce_sum r whose sign is not
// certain: terms that may be nonzero cancel (or underflow) to it, or all
// terms are -0 (+0 from a +0 accumulator, -0 without one). A sum of exact
// zeros of which one is +0 is +0 in every order.
absl::Status ReduceZeroBound(const Op& op, const Tensor& x, const Tensor& ex,
                             const Tensor& r, const InterpretOptions& options,
                             float* out) {
  const int64_t n = r.num_elements();
  bool zeros = false;
  for (int64_t i = 0; i < n && !zeros; ++i) zeros = r.GetDouble(i) == 0;
  if (!zeros || x.num_elements() == 0) return absl::OkStatus();
  const double terms = static_cast<double>(x.num_elements() / n);
  HGC_ASSIGN_OR_RETURN(Tensor nonzero,
                       ReduceTerms(op, x, ex, r, options, Count(MayBeNonZero)));
  HGC_ASSIGN_OR_RETURN(Tensor negative,
                       ReduceTerms(op, x, ex, r, options, Count(SignBit)));
  for (int64_t i = 0; i < n; ++i) {
    if (r.GetDouble(i) == 0 &&
        (nonzero.GetDouble(i) > 0 || negative.GetDouble(i) == terms)) {
      out[i] += static_cast<float>(std::max(kSignOfZero, DenormMin(r.dtype())));
    }
  }
  return absl::OkStatus();
}

// Sets E of the non-finite elements of reduce_sum / reduce_mean result r
// in `out`, as MatmulNonFiniteBound does, from per-output counts of the
// reduced terms.
absl::Status ReduceNonFiniteBound(const Op& op, const Tensor& x,
                                  const Tensor& ex, const Tensor& r,
                                  const InterpretOptions& options, float* out) {
  const int64_t n = r.num_elements();
  bool any = false;
  for (int64_t i = 0; i < n && !any; ++i) any = !std::isfinite(r.GetDouble(i));
  // A mean over no elements is NaN for certain.
  if (!any || x.num_elements() == 0) return absl::OkStatus();
  HGC_ASSIGN_OR_RETURN(Tensor non_finite,
                       ReduceTerms(op, x, ex, r, options, Count(NonFinite)));
  HGC_ASSIGN_OR_RETURN(Tensor uncertain,
                       ReduceTerms(op, x, ex, r, options, Count(Unbounded)));
  HGC_ASSIGN_OR_RETURN(Tensor magnitude,
                       ReduceTerms(op, x, ex, r, options, FiniteMagnitude));
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(r.GetDouble(i))) continue;
    out[i] = static_cast<float>(NonFiniteSumBound(non_finite.GetDouble(i),
                                                  uncertain.GetDouble(i),
                                                  magnitude.GetDouble(i)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> ReduceBound(const Op& op, const Tensor& x,
                                   const Tensor& ex, const Tensor& r,
                                   const InterpretOptions& options) {
  const absl::string_view kind = op.kind();
  const int64_t max_bytes = options.max_tensor_bytes;
  if (kind == "reduce_max") {
    if (!Has(ex)) return Tensor();
    return RunF32("reduce_max", {ex}, op.attrs(), r.shape(), options);
  }
  const bool floating = IsFloat(r.dtype());
  if (!floating && !Has(ex)) return Tensor();
  HGC_ASSIGN_OR_RETURN(Tensor e, NewBound(r.shape(), max_bytes));
  float* out = e.mutable_data<float>();
  const int64_t n = r.num_elements();
  if (n == 0) return e;
  if (floating) {
    const int64_t count = x.num_elements() / n;
    const double per = kind == "reduce_mean" ? static_cast<double>(count) : 1;
    HGC_ASSIGN_OR_RETURN(Tensor abs_x, AbsF32(x, max_bytes));
    HGC_ASSIGN_OR_RETURN(Tensor sq_x, Squared(abs_x, max_bytes));
    HGC_ASSIGN_OR_RETURN(Tensor terms, RunF32("reduce_sum", {sq_x}, op.attrs(),
                                              r.shape(), options));
    for (int64_t i = 0; i < n; ++i) {
      out[i] += SumOrder(count, r.GetDouble(i) * per, terms.GetDouble(i)) / per;
      // Zeros of reduce_sum: ReduceZeroBound.
      if (r.dtype() != DType::kF32 &&
          (r.GetDouble(i) != 0 || kind == "reduce_mean")) {
        out[i] += Flip(r.dtype(), r.GetDouble(i));
      }
    }
  }
  if (Has(ex)) {
    // In quadrature, as matmul's: sqrt(sum E^2) (reduce_mean: over N).
    HGC_ASSIGN_OR_RETURN(Tensor sq, Squared(ex, max_bytes));
    HGC_ASSIGN_OR_RETURN(Tensor var,
                         RunF32(kind, {sq}, op.attrs(), r.shape(), options));
    const double count = static_cast<double>(x.num_elements() / n);
    for (int64_t i = 0; i < n; ++i) {
      out[i] += kind == "reduce_mean" ? std::sqrt(var.GetDouble(i) / count)
                                      : std::sqrt(var.GetDouble(i));
    }
  }
  if (floating && kind == "reduce_sum") {
    HGC_RETURN_IF_ERROR(ReduceZeroBound(op, x, ex, r, options, out));
  }
  if (floating) {
    HGC_RETURN_IF_ERROR(ReduceNonFiniteBound(op, x, ex, r, options, out));
  }
  return e;
}

// x viewed as [outer, mid, inner] around `axis`.
struct Rows {
  int64_t outer = 1, mid = 1, inner = 1;
};
Rows RowsAt(const Shape& shape, int64_t axis) {
  Rows s;
  for (int64_t d = 0; d < axis; ++d) s.outer *= shape[d];
  s.mid = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) s.inner *= shape[d];
  return s;
}

absl::StatusOr<Tensor> SoftmaxBound(const Op& op, const Tensor& x,
                                    const Tensor& ex, const Tensor& r,
                                    int64_t max_bytes) {
  const Attribute* axis_attr = op.FindAttr("axis");
  HGC_ASSIGN_OR_RETURN(
      int64_t axis,
      NormalizeAxis("softmax", axis_attr ? axis_attr->as_int() : -1,
                    x.shape().size()));
  const Rows s = RowsAt(x.shape(), axis);
  HGC_ASSIGN_OR_RETURN(Tensor e, NewBound(r.shape(), max_bytes));
  const double n = static_cast<double>(s.mid);
  const double own = (4 + std::sqrt(n)) * kF32Unit;
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t in = 0; in < s.inner; ++in) {
      const int64_t base = o * s.mid * s.inner + in;
      double mx = -kInf, w = 0;
      bool unbounded = false;
      for (int64_t j = 0; j < s.mid; ++j) {
        const int64_t i = base + j * s.inner;
        mx = std::max(mx, x.GetDouble(i));
        w += Mul0(At(ex, i), r.GetDouble(i));
        unbounded = unbounded || At(ex, i) == kInf;
      }
      for (int64_t j = 0; j < s.mid; ++j) {
        const int64_t i = base + j * s.inner;
        const double p = r.GetDouble(i);
        double bound = 0;
        if (unbounded) {
          // An input that may be anything (inf, NaN) moves the whole row.
          bound = kInf;
        } else if (!std::isfinite(p)) {
          // NaN rows (an inf or NaN input) are NaN in any order.
          bound = 0;
        } else if (p != 0) {
          bound = p * std::expm1(At(ex, i) + w) +
                  p * (own + kF32Unit * std::fabs(x.GetDouble(i) - mx));
          if (r.dtype() != DType::kF32) bound += Flip(r.dtype(), p);
        }
        StoreBound(e, r, i, bound);
      }
    }
  }
  return e;
}

absl::StatusOr<Tensor> LayernormBound(const Op& op, absl::Span<const Tensor> xs,
                                      absl::Span<const Tensor> es,
                                      const Tensor& r, int64_t max_bytes) {
  const Tensor& x = xs[0];
  const Tensor& gamma = xs[1];
  const Attribute* axis_attr = op.FindAttr("axis");
  const Attribute* eps_attr = op.FindAttr("epsilon");
  const double epsilon = eps_attr ? eps_attr->as_number() : 1e-5;
  HGC_ASSIGN_OR_RETURN(
      int64_t axis,
      NormalizeAxis("layernorm", axis_attr ? axis_attr->as_int() : -1,
                    x.shape().size()));
  const Rows s = RowsAt(x.shape(), axis);
  const int64_t group = s.mid * s.inner;
  HGC_ASSIGN_OR_RETURN(Tensor e, NewBound(r.shape(), max_bytes));
  if (group == 0) return e;
  const double n = static_cast<double>(group);
  const double own = (4 + std::sqrt(n)) * kF32Unit;
  for (int64_t o = 0; o < s.outer; ++o) {
    const int64_t base = o * group;
    double mean = 0;
    for (int64_t j = 0; j < group; ++j) mean += x.GetDouble(base + j);
    mean /= n;
    double var = 0;
    for (int64_t j = 0; j < group; ++j) {
      const double d = x.GetDouble(base + j) - mean;
      var += d * d;
    }
    var /= n;
    const double sigma = std::sqrt(var + epsilon);
    double mean_e = 0, mix_e = 0;
    bool unbounded = false;
    for (int64_t j = 0; j < group; ++j) {
      const double xe = At(es[0], base + j);
      unbounded = unbounded || xe == kInf;
      const double xhat = (x.GetDouble(base + j) - mean) / sigma;
      mean_e += xe;
      mix_e += Mul0(xe, std::fabs(xhat));
    }
    mean_e /= n;
    mix_e /= n;
    for (int64_t j = 0; j < group; ++j) {
      const int64_t i = base + j;
      const double xhat = (x.GetDouble(i) - mean) / sigma;
      const double g = gamma.GetDouble(j);
      const double y = r.GetDouble(i);
      const double xhat_e =
          (At(es[0], i) + mean_e + Mul0(mix_e, std::fabs(xhat))) / sigma +
          own * (1 + std::fabs(xhat));
      double bound = Mul0(xhat_e, std::fabs(g)) +
                     Mul0(At(es[1], j), std::fabs(xhat)) + At(es[2], j) +
                     2 * kF32Unit * (std::fabs(xhat * g) + std::fabs(y));
      if (r.dtype() != DType::kF32) bound += Flip(r.dtype(), y);
      // An input that may be anything moves the whole group; otherwise a
      // non-finite y (an inf or NaN in the group or in gamma and beta) is
      // certain.
      if (unbounded || At(es[1], j) == kInf || At(es[2], j) == kInf) {
        bound = kInf;
      } else if (!std::isfinite(y)) {
        bound = 0;
      }
      StoreBound(e, r, i, bound);
    }
  }
  return e;
}

// The largest and smallest scale of a quantize/dequantize op (f32-rounded).
std::pair<double, double> ScaleRange(const Op& op) {
  const Attribute* a = op.FindAttr("scale");
  std::vector<double> scales;
  if (a != nullptr && a->is_number()) scales.push_back(a->as_number());
  if (a != nullptr && a->is_number_list()) scales = a->as_number_list();
  double lo = kInf, hi = 0;
  for (double sc : scales) {
    const double f = static_cast<float>(sc);
    lo = std::min(lo, f);
    hi = std::max(hi, f);
  }
  if (scales.empty()) lo = hi = 1;
  return {lo, hi};
}

}  // namespace

// `e` (an f32 tensor) with every element re-judged by StoreBound against
// `value`, or no tensor where all are 0.
Tensor FinishBound(Tensor e, const Tensor& value) {
  if (!Has(e)) return Tensor();
  bool any = false;
  for (int64_t i = 0; i < e.num_elements(); ++i) {
    StoreBound(e, value, i, e.GetDouble(i));
    any = any || e.data<float>()[i] != 0;
  }
  return any ? std::move(e) : Tensor();
}

// E of one op's result from its operands' values and bounds (fusion is
// handled by the interpreter loop).
absl::StatusOr<Tensor> OpBound(const Op& op, absl::Span<const Tensor> xs,
                               absl::Span<const Tensor> es, const Tensor& r,
                               const InterpretOptions& options) {
  const absl::string_view kind = op.kind();
  const int64_t max_bytes = options.max_tensor_bytes;
  const DType dt = r.dtype();
  if (kind == "constant" || kind == "equal" || kind == "greater" ||
      kind == "greater_equal" || kind == "less" || kind == "less_equal") {
    return Tensor();
  }
  if (kind == "relu" || kind == "neg" || kind == "abs" || kind == "clamp") {
    if (!Has(es[0])) return Tensor();
    return es[0];  // Same shape; these ops neither round nor amplify.
  }
  if (kind == "exp" || kind == "log" || kind == "sqrt" || kind == "rsqrt" ||
      kind == "tanh" || kind == "sigmoid" || kind == "gelu") {
    const Attribute* approx = op.FindAttr("approximate");
    const bool tanh_form = approx != nullptr && approx->is_string() &&
                           approx->as_string() == "tanh";
    auto fn = [kind, tanh_form](double v) -> double {
      if (kind == "exp") return std::exp(v);
      if (kind == "log") return std::log(v);
      if (kind == "sqrt") return std::sqrt(v);
      if (kind == "rsqrt") return 1.0 / std::sqrt(v);
      if (kind == "tanh") return std::tanh(v);
      if (kind == "sigmoid") return 1.0 / (1.0 + std::exp(-v));
      return Gelu(v, tanh_form);
    };
    // Compiled code evaluates these to within a few ulp, not correctly
    // rounded (codegen/llvm/vector_math.h), so even an exact input carries
    // that much into what follows (a cancellation downstream amplifies it).
    const double ulps = kind == "sqrt"      ? 0
                        : kind == "gelu"    ? 4
                        : kind == "sigmoid" ? 2
                                            : 1;
    auto fn1 = [&fn](const double* v) { return fn(v[0]); };
    const bool in_error = Has(es[0]);
    HGC_ASSIGN_OR_RETURN(Tensor e, NewBound(r.shape(), max_bytes));
    for (int64_t i = 0; i < r.num_elements(); ++i) {
      const double rv = r.GetDouble(i);
      const double xe = in_error ? es[0].GetDouble(i) : 0.0;
      const double xv = xs[0].GetDouble(i);
      double bound;
      if (!std::isfinite(rv)) {
        bound = xe == 0 ? 0.0 : NonFiniteBound(fn1, dt, &xv, &xe, 1, rv);
      } else {
        // An exact zero (gelu(0), log(1)) stays exact.
        const double own = rv == 0 && fn(xv) == 0 ? 0.0 : ulps * Flip(dt, rv);
        bound =
            xe == 0 ? own : IntervalDelta(fn, xv, xe, rv) + Flip(dt, rv) + own;
      }
      StoreBound(e, r, i, bound);
    }
    return e;
  }
  if (kind == "add" || kind == "sub") {
    const bool add = kind == "add";
    return BroadcastBound(
        xs, es, r, max_bytes,
        [&](const double*, const double* b, double rv) {
          const double s = b[0] + b[1];
          return s == 0 ? 0.0 : s + Flip(dt, rv);
        },
        [add](const double* v) { return add ? v[0] + v[1] : v[0] - v[1]; });
  }
  if (kind == "mul") {
    return BroadcastBound(
        xs, es, r, max_bytes,
        [&](const double* v, const double* b, double rv) {
          const double s = Mul0(b[0], std::fabs(v[1])) +
                           Mul0(b[1], std::fabs(v[0])) + b[0] * b[1];
          if (s == 0) {
            // 0 times a factor of uncertain sign: a zero of either sign.
            const bool sign =
                rv == 0 && (ReachesZero(v[0], b[0]) || ReachesZero(v[1], b[1]));
            return sign ? kSignOfZero : 0.0;
          }
          return s + Flip(dt, rv);
        },
        [](const double* v) { return v[0] * v[1]; });
  }
  if (kind == "div") {
    return BroadcastBound(
        xs, es, r, max_bytes,
        [&](const double* v, const double* b, double rv) {
          if (b[0] == 0 && b[1] == 0) return 0.0;
          const double den = std::fabs(v[1]) - b[1];
          if (!(den > 0)) return kInf;
          return (b[0] + Mul0(b[1], std::fabs(rv))) / den + Flip(dt, rv);
        },
        [](const double* v) { return v[0] / v[1]; });
  }
  if (kind == "max" || kind == "min") {
    const bool is_max = kind == "max";
    return BroadcastBound(
        xs, es, r, max_bytes,
        [](const double*, const double* b, double) {
          return std::max(b[0], b[1]);
        },
        [is_max](const double* v) {
          if (std::isnan(v[0]) || std::isnan(v[1])) return v[0] + v[1];
          return is_max ? std::max(v[0], v[1]) : std::min(v[0], v[1]);
        });
  }
  if (kind == "select") {
    return BroadcastBound(
        xs, es, r, max_bytes,
        [](const double* v, const double* b, double) {
          return v[0] != 0 ? b[1] : b[2];
        },
        [](const double* v) { return v[0] != 0 ? v[1] : v[2]; });
  }
  auto identity = [](const double* v) { return v[0]; };
  if (kind == "cast") {
    const DType from = xs[0].dtype();
    if (dt == DType::kBool) return Tensor();
    if (IsFloat(dt) || !IsFloat(from)) {
      return UnaryBound(
          xs[0], es[0], r, max_bytes,
          [&](double, double xe, double rv) {
            return xe + (IsFloat(dt) ? Flip(dt, rv) : 0.0);
          },
          identity);
    }
    return UnaryBound(
        xs[0], es[0], r, max_bytes,
        [&](double x, double xe, double rv) {
          return IntervalDelta([dt](double v) { return ToInteger(v, dt); }, x,
                               xe, rv);
        },
        identity);
  }
  // Integer results: always finite.
  if (kind == "quantize") {
    const double smallest = ScaleRange(op).first;
    return UnaryBound(
        xs[0], es[0], r, max_bytes,
        [&](double, double xe, double) { return std::ceil(xe / smallest) + 1; },
        identity);
  }
  if (kind == "dequantize") {
    const double largest = ScaleRange(op).second;
    return UnaryBound(
        xs[0], es[0], r, max_bytes,
        [&](double, double xe, double rv) {
          return xe * largest + Flip(dt, rv);
        },
        identity);
  }
  if (kind == "matmul") {
    if (xs[0].dtype() != DType::kBF16) {
      return MatmulBound(op, xs, es, r, options);
    }
    // The operands as a bf16 matmul reads them: denormals are zeros.
    Tensor flushed[2];
    for (int s = 0; s < 2; ++s) {
      HGC_ASSIGN_OR_RETURN(flushed[s],
                           reference::NewTensor(xs[s].type(), max_bytes));
      const uint16_t* from = xs[s].data<uint16_t>();
      uint16_t* to = flushed[s].mutable_data<uint16_t>();
      for (int64_t i = 0; i < xs[s].num_elements(); ++i) {
        to[i] = FloatToBf16(Bf16ToFloatDaz(from[i]));
      }
    }
    return MatmulBound(op, flushed, es, r, options);
  }
  if (kind == "reduce_sum" || kind == "reduce_mean" || kind == "reduce_max") {
    return ReduceBound(op, xs[0], es[0], r, options);
  }
  if (kind == "softmax") return SoftmaxBound(op, xs[0], es[0], r, max_bytes);
  if (kind == "layernorm") return LayernormBound(op, xs, es, r, max_bytes);
  if (kind == "reshape" || kind == "transpose") {
    if (!Has(es[0])) return Tensor();
    return RunF32(kind, {es[0]}, op.attrs(), r.shape(), options);
  }
  return absl::UnimplementedError(
      absl::StrCat("no error-bound rule for op '", kind, "'"));
}

}  // namespace reference
}  // namespace hgc
