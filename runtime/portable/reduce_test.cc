// reduce_*, softmax and layernorm of the portable kernels against
// hand-computed values.
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "runtime/portable/test_util.h"
#include "runtime/portable/evaluate.h"

namespace hgc {
namespace portable {
namespace {

using namespace testing_util;  // NOLINT

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor X23() { return F32({2, 3}, {1, 2, 3, 4, 5, 6}); }

TEST(ReduceTest, SumOverAxes) {
  Tensor r = Eval("reduce_sum", {X23()}, {{"axes", Ints({1})}});
  EXPECT_EQ(r.shape(), (Shape{2}));
  ExpectValues(r, {6, 15});
  ExpectValues(Eval("reduce_sum", {X23()}, {{"axes", Ints({0})}}), {5, 7, 9});
}

TEST(ReduceTest, NegativeAxisWithKeepDims) {
  Tensor r = Eval("reduce_sum", {X23()},
                  {{"axes", Ints({-1})}, {"keep_dims", B(true)}});
  EXPECT_EQ(r.shape(), (Shape{2, 1}));
  ExpectValues(r, {6, 15});
  Tensor m = Eval("reduce_max", {X23()},
                  {{"axes", Ints({-2})}, {"keep_dims", B(true)}});
  EXPECT_EQ(m.shape(), (Shape{1, 3}));
  ExpectValues(m, {4, 5, 6});
}

TEST(ReduceTest, AbsentAxesReducesAllEmptyListNone) {
  Tensor all = Eval("reduce_sum", {X23()});
  EXPECT_EQ(all.shape(), (Shape{}));
  ExpectValues(all, {21});
  Tensor kept = Eval("reduce_sum", {X23()}, {{"keep_dims", B(true)}});
  EXPECT_EQ(kept.shape(), (Shape{1, 1}));
  ExpectValues(kept, {21});
  Tensor none = Eval("reduce_sum", {X23()}, {{"axes", Ints({})}});
  EXPECT_EQ(none.shape(), (Shape{2, 3}));
  ExpectValues(none, {1, 2, 3, 4, 5, 6});
  ExpectValues(Eval("reduce_mean", {X23()}, {{"axes", Ints({0, 1})}}), {3.5});
}

TEST(ReduceTest, NonAdjacentAxes) {
  // x[i, j, k] = 4i + 2j + k; reducing axes 0 and 2 leaves j:
  // j=0: 0+1+4+5 = 10, j=1: 2+3+6+7 = 18.
  Tensor x = F32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  ExpectValues(Eval("reduce_sum", {x}, {{"axes", Ints({0, -1})}}), {10, 18});
  ExpectValues(Eval("reduce_max", {x}, {{"axes", Ints({2, 0})}}), {5, 7});
  ExpectValues(Eval("reduce_mean", {x}, {{"axes", Ints({0, 2})}}),
               {2.5, 4.5});
}

TEST(ReduceTest, MeanAndMax) {
  ExpectValues(Eval("reduce_mean", {X23()}, {{"axes", Ints({0})}}),
               {2.5, 3.5, 4.5});
  ExpectValues(Eval("reduce_max", {F32({2, 3}, {1, -5, 3, 7, 2, -1})},
                    {{"axes", Ints({-1})}}),
               {3, 7});
  ExpectValues(Eval("reduce_max", {F32({3}, {1, kNaN, 3})}), {kNaN});
  ExpectValues(Eval("reduce_max", {F32({3}, {-kInf, -kInf, -kInf})}), {-kInf});
}

TEST(ReduceTest, EmptyDimensions) {
  Tensor f = F32({2, 0}, {});
  ExpectValues(Eval("reduce_max", {f}, {{"axes", Ints({1})}}), {-kInf, -kInf});
  ExpectValues(Eval("reduce_sum", {f}, {{"axes", Ints({1})}}), {0, 0});
  ExpectValues(Eval("reduce_mean", {f}, {{"axes", Ints({1})}}), {kNaN, kNaN});
  ExpectValues(Eval("reduce_max", {T(DType::kS8, {2, 0}, {})},
                    {{"axes", Ints({1})}}),
               {-128, -128});
  ExpectValues(Eval("reduce_max", {T(DType::kU8, {1, 0}, {})},
                    {{"axes", Ints({1})}}),
               {0});
  ExpectValues(Eval("reduce_max", {T(DType::kS32, {0}, {})}), {-2147483648.0});
  // Reducing a non-empty axis of an empty tensor gives an empty result.
  EXPECT_EQ(Eval("reduce_sum", {f}, {{"axes", Ints({0})}}).shape(),
            (Shape{0}));
}

TEST(ReduceTest, IntegerSumWrapsMaxExact) {
  ExpectValues(Eval("reduce_sum", {T(DType::kS8, {3}, {100, 100, 100})}), {44});
  ExpectValues(Eval("reduce_sum", {T(DType::kU8, {2}, {200, 100})}), {44});
  ExpectValues(Eval("reduce_sum", {T(DType::kS32, {2}, {2147483647, 1})}),
               {-2147483648.0});
  ExpectValues(Eval("reduce_max", {T(DType::kU8, {2, 2}, {200, 100, 3, 255})},
                    {{"axes", Ints({1})}}),
               {200, 255});
  ExpectValues(Eval("reduce_max", {T(DType::kS8, {3}, {-128, -7, -100})}),
               {-7});
}

TEST(ReduceTest, Bf16SumAccumulatesWide) {
  // 1 + 3 * 2^-8: a tie in bf16 that rounds to 1.015625; per-step bf16
  // accumulation would stay at 1.
  ExpectValues(Eval("reduce_sum",
                    {T(DType::kBF16, {4}, {1, 0.00390625, 0.00390625,
                                           0.00390625})}),
               {1.015625});
}

TEST(SoftmaxTest, LastAxisByDefault) {
  Tensor r = Eval("softmax", {F32({2, 3}, {1, 2, 3, 0, 0, 0})});
  ExpectValues(r,
               {0.09003057317038046, 0.24472847105479767, 0.6652409557748219,
                1.0 / 3, 1.0 / 3, 1.0 / 3},
               1e-7);
  ExpectValues(Eval("softmax", {F32({2, 3}, {1, 2, 3, 0, 0, 0})},
                    {{"axis", I(-1)}}),
               Values(r));
  ExpectValues(Eval("softmax", {F32({2, 3}, {1, 2, 3, 0, 0, 0})},
                    {{"axis", I(1)}}),
               Values(r));
}

TEST(SoftmaxTest, OtherAxes) {
  // Axis 0 of [2, 2]: column 0 is {0, ln 3} -> {1/4, 3/4}; column 1 equal.
  ExpectValues(Eval("softmax", {F32({2, 2}, {0, 1, std::log(3.0), 1})},
                    {{"axis", I(0)}}),
               {0.25, 0.5, 0.75, 0.5}, 1e-7);
  // Axis -2 of [1, 2, 2] is the same axis.
  ExpectValues(Eval("softmax", {F32({1, 2, 2}, {0, 1, std::log(3.0), 1})},
                    {{"axis", I(-2)}}),
               {0.25, 0.5, 0.75, 0.5}, 1e-7);
}

TEST(SoftmaxTest, StableAndSpecialRows) {
  ExpectValues(Eval("softmax", {F32({2}, {1000, 1000})}), {0.5, 0.5});
  ExpectValues(Eval("softmax", {F32({3}, {-1000, 0, -kInf})}), {0, 1, 0});
  // A fully masked row (all -inf) is NaN, as is a row holding a NaN.
  ExpectValues(Eval("softmax", {F32({2, 2}, {-kInf, -kInf, 0, 0})}),
               {kNaN, kNaN, 0.5, 0.5});
  ExpectValues(Eval("softmax", {F32({2}, {kNaN, 0})}), {kNaN, kNaN});
}

TEST(SoftmaxTest, Bf16) {
  // softmax([1, 2, 3]) = [0.0900306, 0.2447285, 0.6652410]; bf16 spacing is
  // 2^-11, 2^-10 and 2^-8 there: 184.38 -> 184, 250.60 -> 251, 170.30 -> 170.
  Tensor r = Eval("softmax", {T(DType::kBF16, {3}, {1, 2, 3})});
  EXPECT_EQ(r.dtype(), DType::kBF16);
  ExpectValues(r, {184.0 / 2048, 251.0 / 1024, 170.0 / 256});
}

TEST(LayernormTest, LastAxisWithGammaBeta) {
  // Row 0: mean 2.5, biased variance 1.25; row 1 is constant -> beta.
  Tensor x = F32({2, 4}, {1, 2, 3, 4, 2, 2, 2, 2});
  Tensor gamma = F32({4}, {1, 2, 1, 2});
  Tensor beta = F32({4}, {0, 0, 1, 1});
  const double n0 = -1.3416354199689269, n1 = -0.447211806656309;
  Tensor r = Eval("layernorm", {x, gamma, beta});
  ExpectValues(r, {n0, 2 * n1, -n1 + 1, -2 * n0 + 1, 0, 0, 1, 1}, 1e-6);
  ExpectValues(Eval("layernorm", {x, gamma, beta}, {{"axis", I(1)}}),
               Values(r));
}

TEST(LayernormTest, EpsilonAndMultipleAxes) {
  // axis -2 of [2, 2, 2]: each group of 4 is normalized together.
  Tensor x = F32({2, 2, 2}, {1, 2, 3, 4, 5, 5, 5, 5});
  Tensor ones = F32({2, 2}, {1, 1, 1, 1});
  Tensor zeros = F32({2, 2}, {0, 0, 0, 0});
  // epsilon 0.75: std = sqrt(1.25 + 0.75) = sqrt(2).
  const double s = std::sqrt(2.0);
  Tensor r = Eval("layernorm", {x, ones, zeros},
                  {{"axis", I(-2)}, {"epsilon", F(0.75)}});
  ExpectValues(r, {-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s, 0, 0, 0, 0}, 1e-7);
  ExpectValues(Eval("layernorm", {x, ones, zeros},
                    {{"axis", I(1)}, {"epsilon", F(0.75)}}),
               Values(r));
}

}  // namespace
}  // namespace portable
}  // namespace hgc
