// Test helpers for the portable kernels' tests: building tensors from
// literal values and reading them back.
#ifndef HGC_RUNTIME_PORTABLE_TEST_UTIL_H_
#define HGC_RUNTIME_PORTABLE_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "ir/tensor.h"
#include "runtime/portable/evaluate.h"
#include "support/float16.h"

namespace hgc {
namespace testing_util {

// A tensor of `dtype` and `shape` holding `values` (row-major; stored with
// Tensor::SetDouble, so pass values exactly representable in `dtype` unless
// the test is about rounding on input).
inline Tensor T(DType dtype, Shape shape, std::vector<double> values) {
  absl::StatusOr<Tensor> t = Tensor::Create(TensorType(dtype, shape));
  EXPECT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->num_elements(), static_cast<int64_t>(values.size()))
      << "wrong number of literal values";
  for (int64_t i = 0; i < t->num_elements() &&
                      i < static_cast<int64_t>(values.size());
       ++i) {
    t->SetDouble(i, values[i]);
  }
  return *t;
}

inline Tensor F32(Shape shape, std::vector<double> values) {
  return T(DType::kF32, std::move(shape), std::move(values));
}

// A bf16 / f16 tensor from raw bit patterns.
inline Tensor Bits16(DType dtype, Shape shape, std::vector<uint16_t> bits) {
  absl::StatusOr<Tensor> t = Tensor::Create(TensorType(dtype, shape));
  EXPECT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->num_elements(), static_cast<int64_t>(bits.size()));
  for (size_t i = 0; i < bits.size(); ++i) {
    t->mutable_data<uint16_t>()[i] = bits[i];
  }
  return *t;
}

// Element values as doubles.
inline std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.GetDouble(i));
  return v;
}

inline std::vector<uint16_t> Bits(const Tensor& t) {
  std::vector<uint16_t> v(t.data<uint16_t>(),
                          t.data<uint16_t>() + t.num_elements());
  return v;
}

// Expects `t` to hold `expected` (NaN matches NaN), within `tol`.
inline void ExpectValues(const Tensor& t, const std::vector<double>& expected,
                         double tol = 0) {
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(expected.size()))
      << t.type().ToString();
  for (size_t i = 0; i < expected.size(); ++i) {
    double v = t.GetDouble(i);
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(v)) << "element " << i << " = " << v;
    } else if (tol == 0 || std::isinf(expected[i])) {
      EXPECT_EQ(v, expected[i]) << "element " << i;
    } else {
      EXPECT_NEAR(v, expected[i], tol) << "element " << i;
    }
  }
}

// Evaluates `kind` and fails the test (returning an empty tensor) on error.
inline Tensor Eval(absl::string_view kind, std::vector<Tensor> operands,
                   const AttrMap& attrs = {},
                   std::optional<TensorType> result_type = std::nullopt) {
  absl::StatusOr<Tensor> r =
      portable::EvaluateOp(kind, operands, attrs, result_type);
  EXPECT_TRUE(r.ok()) << kind << ": " << r.status();
  return r.ok() ? *r : Tensor();
}

inline Attribute I(int64_t v) { return Attribute::Int(v); }
inline Attribute F(double v) { return Attribute::Float(v); }
inline Attribute B(bool v) { return Attribute::Bool(v); }
inline Attribute S(std::string v) { return Attribute::String(std::move(v)); }
inline Attribute Ints(std::vector<int64_t> v) { return Attribute::IntList(v); }
inline Attribute Floats(std::vector<double> v) {
  return Attribute::FloatList(v);
}

}  // namespace testing_util
}  // namespace hgc

#endif  // HGC_RUNTIME_PORTABLE_TEST_UTIL_H_
