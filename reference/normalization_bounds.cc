// The error-bound rules of softmax and layernorm (reference/op_bounds.h):
// the statistics of a row, then each element against them.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ir/ops/op_helpers.h"
#include "runtime/portable/kernels.h"
#include "reference/op_bounds_internal.h"
#include "support/status_macros.h"

namespace hgc {
namespace reference {
namespace op_bounds_internal {

using portable::Split;
using portable::SplitAt;

// Below this, exp(x - max) is 0 in f32 (2^-150 = e^-103.97...): a p of 0
// there is exact.
constexpr double kExpUnderflow = -104.0;

absl::StatusOr<Tensor> SoftmaxBound(const Op& op, const Tensor& x,
                                    const Tensor& ex, const Tensor& r,
                                    int64_t max_bytes) {
  const Attribute* axis_attr = op.FindAttr("axis");
  HGC_ASSIGN_OR_RETURN(
      int64_t axis,
      NormalizeAxis("softmax", axis_attr ? axis_attr->as_int() : -1,
                    x.shape().size()));
  const Split s = SplitAt(x.shape(), axis);
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
        } else if (x.GetDouble(i) - mx + At(ex, i) + w >= kExpUnderflow) {
          // A positive p rounded to 0: exp(x - max) is still a denormal,
          // so another order (or a deferred division by the sum, as fused
          // attention does) can keep a tiny p, and p times an infinite V
          // is then an infinity rather than NaN.
          bound = kSignOfZero;
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
  const Split s = SplitAt(x.shape(), axis);
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

}  // namespace op_bounds_internal
}  // namespace reference
}  // namespace hgc
