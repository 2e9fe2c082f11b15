// The error-bound rules of the elementwise ops (reference/op_bounds.h):
// math functions, the broadcast binary ops and select, cast, quantize and
// dequantize.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/op_kind.h"
#include "runtime/portable/kernels.h"
#include "reference/op_bounds_internal.h"
#include "support/status_macros.h"

namespace hgc {
namespace reference {
namespace op_bounds_internal {

using portable::BroadcastStrides;
using portable::Gelu;
using portable::RefRsqrt;
using portable::RefSigmoid;
using portable::StridedWalker;

namespace {

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
  const double lo = static_cast<double>(portable::IntMin(dtype));
  const double hi = static_cast<double>(portable::IntMax(dtype));
  return std::clamp(std::nearbyint(x), lo, hi);
}

// Binary (and select's) elementwise ops with numpy broadcasting. f returns
// E of an output element from the operands' values and bounds and a finite
// r; g is the op on values, for a non-finite r (NonFiniteBound). Exact
// operands give an exact result unless `inexact_when_exact` (an op that
// compiled code does not round correctly).
template <typename F, typename G>
absl::StatusOr<Tensor> BroadcastBound(absl::Span<const Tensor> xs,
                                      absl::Span<const Tensor> es,
                                      const Tensor& r, int64_t max_bytes, F f,
                                      G g, bool inexact_when_exact = false) {
  bool any = inexact_when_exact;
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

// How many f32 ulps compiled pow (libm's powf, codegen/llvm/
// elemental_emitter.cc) may be from the reference's correctly rounded
// value; elemental_emitter_test measures it on a sweep.
constexpr double kPowUlps = 1;

// E of pow's result r from a in [v0 - b0, v0 + b0] and b in
// [v1 - b1, v1 + b1]. For a > 0, a^b = exp(b ln a) with b ln a bilinear
// in (b, ln a): its extremes over a box are at the corners. An exact
// integer exponent makes a^n monotone on each side of 0, so a's ends and 0
// bound it for any a. Elsewhere (an inexact a reaching a <= 0 with a
// non-integer or inexact exponent) the result may be NaN: unbounded.
double PowBound(DType dt, const double* v, const double* b, double rv) {
  const double own = kPowUlps * Flip(dt, rv);
  if (b[0] == 0 && b[1] == 0) return own;
  const bool integer_exponent = b[1] == 0 && std::nearbyint(v[1]) == v[1];
  const double a_lo = v[0] - b[0], a_hi = v[0] + b[0];
  if (!(a_lo > 0) && !integer_exponent) return kInf;
  double delta = 0;
  for (double a : {a_lo, a_hi}) {
    for (double e : {v[1] - b[1], v[1] + b[1]}) {
      delta = std::max(delta, std::fabs(std::pow(a, e) - rv));
    }
  }
  if (a_lo < 0 && a_hi > 0) {
    delta = std::max(delta, std::fabs(std::pow(0.0, v[1]) - rv));
  }
  if (std::isnan(delta)) return kInf;
  return delta + Flip(dt, rv) + own;
}

}  // namespace

namespace {

// How many f32 ulps compiled code may be from f (ir/op_kinds.def's ulps
// column; gelu's emitter composes erf or tanh with a few operations).
double EmitterUlps(UnaryKind kind) {
  switch (kind) {
#define HGC_MATH_OP_KIND(e, name, reference, emitter, ulps, ...) \
  case UnaryKind::e:                                             \
    return ulps;
#include "ir/op_kinds.def"
    case UnaryKind::kGelu:
      return 4;
    case UnaryKind::kRelu:  // exact
    case UnaryKind::kNeg:
    case UnaryKind::kAbs:
    case UnaryKind::kClamp:
      return 0;
  }
  return 0;
}

}  // namespace

absl::StatusOr<Tensor> MathFunctionBound(const Op& op, const Tensor& x,
                                         const Tensor& ex, const Tensor& r,
                                         int64_t max_bytes) {
  const UnaryKind kind = *AsUnary(op.kind_id());
  const DType dt = r.dtype();
  const Attribute* approx = op.FindAttr("approximate");
  const bool tanh_form =
      approx != nullptr && approx->is_string() && approx->as_string() == "tanh";
  auto fn = [kind, tanh_form](double v) -> double {
    switch (kind) {
#define HGC_MATH_OP_KIND(e, name, reference, ...) \
  case UnaryKind::e:                              \
    return reference(v);
#include "ir/op_kinds.def"
      case UnaryKind::kGelu:
        return Gelu(v, tanh_form);
      case UnaryKind::kRelu:  // exact: OpBound passes their bound through
      case UnaryKind::kNeg:
      case UnaryKind::kAbs:
      case UnaryKind::kClamp:
        break;
    }
    return std::numeric_limits<double>::quiet_NaN();
  };
  // Compiled code evaluates these to within a few ulp, not correctly
  // rounded (codegen/llvm/vector_math.h), so even an exact input carries
  // that much into what follows (a cancellation downstream amplifies it).
  const double ulps = EmitterUlps(kind);
  auto fn1 = [&fn](const double* v) { return fn(v[0]); };
  const bool in_error = Has(ex);
  HGC_ASSIGN_OR_RETURN(Tensor e, NewBound(r.shape(), max_bytes));
  for (int64_t i = 0; i < r.num_elements(); ++i) {
    const double rv = r.GetDouble(i);
    const double xe = in_error ? ex.GetDouble(i) : 0.0;
    const double xv = x.GetDouble(i);
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

absl::StatusOr<Tensor> BroadcastOpBound(const Op& op,
                                        absl::Span<const Tensor> xs,
                                        absl::Span<const Tensor> es,
                                        const Tensor& r, int64_t max_bytes) {
  const OpKind kind = op.kind_id();
  const DType dt = r.dtype();
  if (kind == OpKind::kSelect) {
    return BroadcastBound(
        xs, es, r, max_bytes,
        [](const double* v, const double* b, double) {
          const int pick = v[0] != 0 ? 1 : 2, other = 3 - pick;
          if (!(b[0] > 0)) return b[pick];
          // The condition may flip: either operand, within its own bound.
          return std::max(b[pick],
                          std::fabs(v[other] - v[pick]) + b[other]);
        },
        [](const double* v) { return v[0] != 0 ? v[1] : v[2]; });
  }
  if (IsComparison(kind)) {
    // The operands' intervals reach each other: either answer is right.
    auto flips = [](const double* v, const double* b) {
      const double reach = b[0] + b[1];
      return reach > 0 && std::fabs(v[0] - v[1]) <= reach ? 1.0 : 0.0;
    };
    return BroadcastBound(
        xs, es, r, max_bytes,
        [flips](const double* v, const double* b, double) {
          return flips(v, b);
        },
        [](const double* v) { return v[0]; });
  }
  const std::optional<BinaryKind> binary = AsBinary(kind);
  if (!binary.has_value()) {
    return absl::InternalError(
        absl::StrCat("op '", op.kind(), "' is not a broadcast elementwise op"));
  }
  switch (*binary) {
    case BinaryKind::kAdd:
    case BinaryKind::kSub: {
      const bool add = *binary == BinaryKind::kAdd;
      return BroadcastBound(
          xs, es, r, max_bytes,
          [&](const double*, const double* b, double rv) {
            const double s = b[0] + b[1];
            return s == 0 ? 0.0 : s + Flip(dt, rv);
          },
          [add](const double* v) { return add ? v[0] + v[1] : v[0] - v[1]; });
    }
    case BinaryKind::kMul:
      return BroadcastBound(
          xs, es, r, max_bytes,
          [&](const double* v, const double* b, double rv) {
            const double s = Mul0(b[0], std::fabs(v[1])) +
                             Mul0(b[1], std::fabs(v[0])) + b[0] * b[1];
            if (s == 0) {
              // 0 times a factor of uncertain sign: a zero of either sign.
              const bool sign = rv == 0 && (ReachesZero(v[0], b[0]) ||
                                            ReachesZero(v[1], b[1]));
              return sign ? kSignOfZero : 0.0;
            }
            return s + Flip(dt, rv);
          },
          [](const double* v) { return v[0] * v[1]; });
    case BinaryKind::kDiv:
      return BroadcastBound(
          xs, es, r, max_bytes,
          [&](const double* v, const double* b, double rv) {
            if (b[0] == 0 && b[1] == 0) return 0.0;
            const double den = std::fabs(v[1]) - b[1];
            if (!(den > 0)) return kInf;
            return (b[0] + Mul0(b[1], std::fabs(rv))) / den + Flip(dt, rv);
          },
          [](const double* v) { return v[0] / v[1]; });
    case BinaryKind::kMax:
    case BinaryKind::kMin: {
      const bool is_max = *binary == BinaryKind::kMax;
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
    case BinaryKind::kPow:
      return BroadcastBound(
          xs, es, r, max_bytes,
          [dt](const double* v, const double* b, double rv) {
            return PowBound(dt, v, b, rv);
          },
          [](const double* v) { return std::pow(v[0], v[1]); },
          /*inexact_when_exact=*/true);
  }
  return absl::InternalError("unreachable");
}

absl::StatusOr<Tensor> CastBound(const Tensor& x, const Tensor& ex,
                                 const Tensor& r, int64_t max_bytes) {
  const DType dt = r.dtype();
  auto identity = [](const double* v) { return v[0]; };
  const DType from = x.dtype();
  if (dt == DType::kBool) {
    // x != 0 may flip where x's interval holds 0 (and x is not exactly 0
    // with no error at all).
    return UnaryBound(
        x, ex, r, max_bytes,
        [](double xv, double xe, double) {
          return xe > 0 && std::fabs(xv) <= xe ? 1.0 : 0.0;
        },
        identity);
  }
  if (IsFloat(dt) || !IsFloat(from)) {
    return UnaryBound(
        x, ex, r, max_bytes,
        [&](double, double xe, double rv) {
          return xe + (IsFloat(dt) ? Flip(dt, rv) : 0.0);
        },
        identity);
  }
  return UnaryBound(
      x, ex, r, max_bytes,
      [&](double xv, double xe, double rv) {
        // A NaN with a bound (inf: it may be any value) casts to anything;
        // NaN +- E would only give ToInteger's 0 again.
        if (std::isnan(xv)) return kInf;
        return IntervalDelta([dt](double v) { return ToInteger(v, dt); }, xv,
                             xe, rv);
      },
      identity);
}

absl::StatusOr<Tensor> QuantizeBound(const Op& op, const Tensor& x,
                                     const Tensor& ex, const Tensor& r,
                                     int64_t max_bytes) {
  const DType dt = r.dtype();
  auto identity = [](const double* v) { return v[0]; };
  if (op.kind_id() == OpKind::kQuantize) {
    // Integer results: always finite.
    const double smallest = ScaleRange(op).first;
    return UnaryBound(
        x, ex, r, max_bytes,
        [&](double, double xe, double) { return std::ceil(xe / smallest) + 1; },
        identity);
  }
  const double largest = ScaleRange(op).second;
  return UnaryBound(
      x, ex, r, max_bytes,
      [&](double, double xe, double rv) { return xe * largest + Flip(dt, rv); },
      identity);
}

}  // namespace op_bounds_internal
}  // namespace reference
}  // namespace hgc
