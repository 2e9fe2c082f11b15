// The bound arithmetic the error-bound rules per op share
// (reference/op_bounds_internal.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/error_bound.h"
#include "runtime/portable/kernels.h"
#include "reference/op_bounds_internal.h"
#include "reference/reference_interpreter.h"
#include "support/float16.h"
#include "support/status_macros.h"

namespace hgc {
namespace reference {
namespace op_bounds_internal {

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

double Flip(DType dtype, double r) {
  return std::max(2 * UnitRoundoff(dtype) * std::fabs(r), DenormMin(dtype));
}

absl::StatusOr<Tensor> NewBound(const Shape& shape, int64_t max_bytes) {
  return portable::NewTensor(TensorType(DType::kF32, shape), max_bytes);
}

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

absl::StatusOr<Tensor> AbsF32(const Tensor& t, int64_t max_bytes) {
  HGC_ASSIGN_OR_RETURN(Tensor out, NewBound(t.shape(), max_bytes));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    out.mutable_data<float>()[i] =
        static_cast<float>(std::fabs(t.GetDouble(i)));
  }
  return out;
}

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

double SumOrder(int64_t count, double sum, double sum_of_squares) {
  return 2 * kF32Unit * std::sqrt(static_cast<double>(count)) *
         (std::fabs(sum) + std::sqrt(sum_of_squares));
}

absl::StatusOr<Tensor> RunF32(absl::string_view kind,
                              absl::Span<const Tensor> operands,
                              const AttrMap& attrs, const Shape& shape,
                              const InterpretOptions& options) {
  return EvaluateOp(kind, operands, attrs, TensorType(DType::kF32, shape),
                    options);
}

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

}  // namespace op_bounds_internal
}  // namespace reference
}  // namespace hgc
