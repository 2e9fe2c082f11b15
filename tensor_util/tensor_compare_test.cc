#include "tensor_util/tensor_compare.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace hgc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor Make(DType dtype, Shape shape, const std::vector<double>& values) {
  Tensor t = *Tensor::Create(TensorType(dtype, shape));
  for (size_t i = 0; i < values.size(); ++i) t.SetDouble(i, values[i]);
  return t;
}

TEST(TensorCompareTest, DefaultTolerances) {
  EXPECT_EQ(DefaultTolerance(DType::kF32).atol, 1e-4);
  EXPECT_EQ(DefaultTolerance(DType::kF32).rtol, 1e-4);
  EXPECT_EQ(DefaultTolerance(DType::kBF16).atol, 1e-2);
  EXPECT_EQ(DefaultTolerance(DType::kF16).rtol, 1e-3);
  for (DType d : {DType::kS32, DType::kBool}) {
    EXPECT_EQ(DefaultTolerance(d).atol, 0);
    EXPECT_EQ(DefaultTolerance(d).rtol, 0);
  }
  for (DType d : {DType::kS8, DType::kU8}) {
    EXPECT_EQ(DefaultTolerance(d).atol, 1);
    EXPECT_EQ(DefaultTolerance(d).rtol, 0);
  }
}

TEST(TensorCompareTest, IdenticalPasses) {
  Tensor a = Make(DType::kF32, {2, 2}, {1, -2, 0, 1e30});
  CompareResult r = *CompareTensors(a, a);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.num_elements, 4);
  EXPECT_EQ(r.num_mismatches, 0);
  EXPECT_EQ(r.max_abs_error, 0);
  EXPECT_EQ(r.max_rel_error, 0);
  EXPECT_EQ(r.first_mismatch, -1);
  EXPECT_EQ(r.Summary(),
            "PASS f32[2, 2]: max_abs_err=0 max_rel_err=0 mismatches=0/4 "
            "(atol=0.0001, rtol=0.0001)");
}

TEST(TensorCompareTest, InfiniteTolerancesAcceptEqualValues) {
  // rtol * |0| with rtol = inf is NaN: equal zeros must still match.
  Tensor a = Make(DType::kF32, {4}, {0, -0.0, 1, -3});
  Tensor b = Make(DType::kF32, {4}, {0, 0, 2, 1e30});
  CompareResult r = *CompareTensors(a, a, Tolerance{0, kInf});
  EXPECT_TRUE(r.ok()) << r.Summary();
  r = *CompareTensors(a, a, Tolerance{kInf, kInf});
  EXPECT_TRUE(r.ok()) << r.Summary();
  r = *CompareTensors(b, a, Tolerance{0, kInf});  // only the zeros are exact
  EXPECT_TRUE(r.ok()) << r.Summary();
  r = *CompareTensors(b, a, Tolerance{kInf, 0});
  EXPECT_TRUE(r.ok()) << r.Summary();
  Tensor c = Make(DType::kF32, {4}, {1e-30, 0, 1, -3});
  r = *CompareTensors(c, a, Tolerance{0, kInf});  // nonzero where 0 is owed
  EXPECT_EQ(r.num_mismatches, 1);
}

TEST(TensorCompareTest, F32ToleranceBoundary) {
  // |a - e| <= 1e-4 + 1e-4 * 1: 1.00015 matches, 1.0003 does not.
  Tensor expected = Make(DType::kF32, {2, 2}, {1, 1, 2, 0});
  Tensor actual = Make(DType::kF32, {2, 2}, {1.00015, 1.0003, 2, 0});
  CompareResult r = *CompareTensors(actual, expected);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.num_mismatches, 1);
  EXPECT_EQ(r.first_mismatch, 1);
  EXPECT_NEAR(r.max_abs_error, 3e-4, 1e-7);
  EXPECT_NEAR(r.max_rel_error, 3e-4, 1e-7);
  EXPECT_NEAR(r.first_actual, 1.0003, 1e-7);
  EXPECT_EQ(r.first_expected, 1);
  std::string s = r.Summary();
  EXPECT_EQ(s.rfind("FAIL f32[2, 2]: ", 0), 0u) << s;
  EXPECT_NE(s.find("mismatches=1/4"), std::string::npos) << s;
  EXPECT_NE(s.find("first mismatch at [0, 1]: actual=1.00030005 expected=1"),
            std::string::npos)
      << s;
}

TEST(TensorCompareTest, ExpectedZeroUsesAbsoluteErrorOnly) {
  Tensor expected = Make(DType::kF32, {2}, {0, 0});
  CompareResult r =
      *CompareTensors(Make(DType::kF32, {2}, {5e-5, -2e-5}), expected);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.max_rel_error, 0);
  EXPECT_NEAR(r.max_abs_error, 5e-5, 1e-9);
  r = *CompareTensors(Make(DType::kF32, {2}, {2e-4, 0}), expected);
  EXPECT_EQ(r.num_mismatches, 1);
}

TEST(TensorCompareTest, NaNAndInfinities) {
  Tensor expected = Make(DType::kF32, {4}, {kNaN, kInf, -kInf, 1});
  EXPECT_TRUE(CompareTensors(Make(DType::kF32, {4}, {kNaN, kInf, -kInf, 1}),
                             expected)
                  ->ok());
  CompareResult r = *CompareTensors(
      Make(DType::kF32, {4}, {1, -kInf, -kInf, kNaN}), expected);
  EXPECT_EQ(r.num_mismatches, 3);  // NaN vs 1, -inf vs inf, 1 vs NaN
  EXPECT_EQ(r.first_mismatch, 0);
  EXPECT_EQ(r.max_abs_error, kInf);
  EXPECT_EQ(r.max_rel_error, kInf);
  // inf vs the largest finite value is a mismatch too.
  r = *CompareTensors(Make(DType::kF32, {1}, {3.4e38}),
                      Make(DType::kF32, {1}, {kInf}));
  EXPECT_EQ(r.num_mismatches, 1);
}

TEST(TensorCompareTest, InfiniteBoundAcceptsAnythingFiniteBoundNot) {
  Tensor expected = Make(DType::kF32, {4}, {kInf, -kInf, kNaN, 1});
  Tensor actual = Make(DType::kF32, {4}, {-kInf, -17.3, 2, kNaN});
  Tensor bound = Make(DType::kF32, {4}, {kInf, kInf, kInf, kInf});
  CompareResult r = *CompareTensors(actual, expected, std::nullopt, &bound);
  EXPECT_TRUE(r.ok()) << r.Summary();
  // The largest finite bound still leaves infinities and NaN exact.
  Tensor large = Make(DType::kF32, {4}, {3.4e38, 3.4e38, 3.4e38, 3.4e38});
  r = *CompareTensors(actual, expected, std::nullopt, &large);
  EXPECT_EQ(r.num_mismatches, 4) << r.Summary();
  // A bool is exact where its bound is 0 and either way where it is 1 (a
  // comparison of values equal within rounding).
  Tensor t = Make(DType::kBool, {1}, {1});
  Tensor f = Make(DType::kBool, {1}, {0});
  Tensor zero = Make(DType::kF32, {1}, {0});
  Tensor one = Make(DType::kF32, {1}, {1});
  EXPECT_FALSE(CompareTensors(f, t, std::nullopt, &zero)->ok());
  EXPECT_TRUE(CompareTensors(f, t, std::nullopt, &one)->ok());
}

TEST(TensorCompareTest, WideIntegersAreExactUnlessOverridden) {
  Tensor expected = Make(DType::kS32, {3}, {1, 2, -128});
  Tensor actual = Make(DType::kS32, {3}, {1, 3, -128});
  CompareResult r = *CompareTensors(actual, expected);
  EXPECT_EQ(r.num_mismatches, 1);
  EXPECT_EQ(r.max_abs_error, 1);
  EXPECT_DOUBLE_EQ(r.max_rel_error, 0.5);
  EXPECT_TRUE(CompareTensors(actual, expected, Tolerance{1, 0})->ok());
  Tensor bools = Make(DType::kBool, {2}, {1, 0});
  EXPECT_EQ(CompareTensors(Make(DType::kBool, {2}, {1, 1}), bools)
                ->num_mismatches,
            1);
}

TEST(TensorCompareTest, LowPrecisionDefaults) {
  // One bf16 ulp at 1 (2^-7) is within 1e-2 + 1.6e-2; four ulps are not.
  Tensor one = Make(DType::kBF16, {1}, {1});
  EXPECT_TRUE(CompareTensors(Make(DType::kBF16, {1}, {1.0078125}), one)->ok());
  EXPECT_FALSE(CompareTensors(Make(DType::kBF16, {1}, {1.03125}), one)->ok());
  // Where atol no longer matters, two ulps pass and three do not (ulp 2 at
  // 256).
  Tensor big = Make(DType::kBF16, {1}, {256});
  EXPECT_TRUE(CompareTensors(Make(DType::kBF16, {1}, {260}), big)->ok());
  EXPECT_FALSE(CompareTensors(Make(DType::kBF16, {1}, {262}), big)->ok());
  // f16: 1 ulp at 1 (2^-10) passes, 4 ulps (0.0039) do not.
  Tensor h = Make(DType::kF16, {1}, {1});
  EXPECT_TRUE(CompareTensors(Make(DType::kF16, {1}, {1.0009765625}), h)->ok());
  EXPECT_FALSE(CompareTensors(Make(DType::kF16, {1}, {1.00390625}), h)->ok());
}

TEST(TensorCompareTest, QuantizedDefaultsAllowOneStep) {
  Tensor q = Make(DType::kS8, {2}, {-7, 5});
  EXPECT_TRUE(CompareTensors(Make(DType::kS8, {2}, {-8, 5}), q)->ok());
  EXPECT_FALSE(CompareTensors(Make(DType::kS8, {2}, {-9, 5}), q)->ok());
  Tensor u = Make(DType::kU8, {1}, {200});
  EXPECT_TRUE(CompareTensors(Make(DType::kU8, {1}, {201}), u)->ok());
  // s32 (integer matmuls, exact in any order) stays exact.
  Tensor i = Make(DType::kS32, {1}, {1000});
  EXPECT_FALSE(CompareTensors(Make(DType::kS32, {1}, {1001}), i)->ok());
}

TEST(TensorCompareTest, TypeMismatchIsAnError) {
  Tensor a = Make(DType::kF32, {2}, {1, 2});
  EXPECT_EQ(CompareTensors(a, Make(DType::kF32, {1, 2}, {1, 2})).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CompareTensors(a, Make(DType::kBF16, {2}, {1, 2})).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CompareTensors(Tensor(), Tensor()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TensorCompareTest, EmptyTensorsPass) {
  Tensor e = Make(DType::kF32, {0, 3}, {});
  CompareResult r = *CompareTensors(e, e);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.num_elements, 0);
}

}  // namespace
}  // namespace hgc
