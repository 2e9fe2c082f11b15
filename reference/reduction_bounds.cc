// The error-bound rules of the sums (reference/op_bounds.h): matmul and
// reduce_sum / reduce_mean / reduce_max, with the order of their f32 sums,
// gradual underflow, the sign of their zeros and their non-finite results.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "runtime/portable/kernels.h"
#include "reference/op_bounds_internal.h"
#include "support/float16.h"
#include "support/status_macros.h"

namespace hgc {
namespace reference {
namespace op_bounds_internal {
namespace {

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

// MatmulBound of `xs` as the matmul kernels read them.
absl::StatusOr<Tensor> MatmulBoundForOperands(const Op& op,
                                              absl::Span<const Tensor> xs,
                                              absl::Span<const Tensor> es,
                                              const Tensor& r,
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

}  // namespace

absl::StatusOr<Tensor> MatmulBound(const Op& op, absl::Span<const Tensor> xs,
                                   absl::Span<const Tensor> es, const Tensor& r,
                                   const InterpretOptions& options) {
  if (xs[0].dtype() != DType::kBF16) {
    return MatmulBoundForOperands(op, xs, es, r, options);
  }
  const int64_t max_bytes = options.max_tensor_bytes;
  // The operands as a bf16 matmul reads them: denormals are zeros.
  Tensor flushed[2];
  for (int s = 0; s < 2; ++s) {
    HGC_ASSIGN_OR_RETURN(flushed[s],
                         portable::NewTensor(xs[s].type(), max_bytes));
    const uint16_t* from = xs[s].data<uint16_t>();
    uint16_t* to = flushed[s].mutable_data<uint16_t>();
    for (int64_t i = 0; i < xs[s].num_elements(); ++i) {
      to[i] = FloatToBf16(Bf16ToFloatDaz(from[i]));
    }
  }
  return MatmulBoundForOperands(op, flushed, es, r, options);
}

absl::StatusOr<Tensor> ReduceBound(const Op& op, const Tensor& x,
                                   const Tensor& ex, const Tensor& r,
                                   const InterpretOptions& options) {
  const absl::string_view kind = op.kind();
  const bool is_mean = op.kind_id() == OpKind::kReduceMean;
  const int64_t max_bytes = options.max_tensor_bytes;
  if (op.kind_id() == OpKind::kReduceMax) {
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
    const double per = is_mean ? static_cast<double>(count) : 1;
    HGC_ASSIGN_OR_RETURN(Tensor abs_x, AbsF32(x, max_bytes));
    HGC_ASSIGN_OR_RETURN(Tensor sq_x, Squared(abs_x, max_bytes));
    HGC_ASSIGN_OR_RETURN(Tensor terms, RunF32("reduce_sum", {sq_x}, op.attrs(),
                                              r.shape(), options));
    for (int64_t i = 0; i < n; ++i) {
      out[i] += SumOrder(count, r.GetDouble(i) * per, terms.GetDouble(i)) / per;
      // Zeros of reduce_sum: ReduceZeroBound.
      if (r.dtype() != DType::kF32 && (r.GetDouble(i) != 0 || is_mean)) {
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
      out[i] += is_mean ? std::sqrt(var.GetDouble(i) / count)
                        : std::sqrt(var.GetDouble(i));
    }
  }
  if (floating && op.kind_id() == OpKind::kReduceSum) {
    HGC_RETURN_IF_ERROR(ReduceZeroBound(op, x, ex, r, options, out));
  }
  if (floating) {
    HGC_RETURN_IF_ERROR(ReduceNonFiniteBound(op, x, ex, r, options, out));
  }
  return e;
}

}  // namespace op_bounds_internal
}  // namespace reference
}  // namespace hgc
