// Elementwise ops of the portable kernels against hand-computed values.
#include <cmath>
#include <limits>

#include "gtest/gtest.h"
#include "runtime/portable/test_util.h"
#include "runtime/portable/evaluate.h"
#include "support/float16.h"

namespace hgc {
namespace portable {
namespace {

using namespace testing_util;  // NOLINT

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(UnaryTest, ReluNegAbsOnFloats) {
  Tensor x = F32({4}, {-2, -0.5, 0, 3});
  ExpectValues(Eval("relu", {x}), {0, 0, 0, 3});
  ExpectValues(Eval("neg", {x}), {2, 0.5, 0, -3});
  ExpectValues(Eval("abs", {x}), {2, 0.5, 0, 3});
  EXPECT_EQ(Eval("relu", {x}).type(), x.type());
}

TEST(UnaryTest, ReluPropagatesNaN) {
  ExpectValues(Eval("relu", {F32({3}, {kNaN, -kInf, kInf})}), {kNaN, 0, kInf});
}

TEST(UnaryTest, TranscendentalsOnF32) {
  Tensor x = F32({4}, {-2, -0.5, 0, 3});
  ExpectValues(
      Eval("sigmoid", {x}),
      {0.11920292202211755, 0.3775406687981454, 0.5, 0.9525741268224334}, 1e-7);
  ExpectValues(
      Eval("tanh", {x}),
      {-0.9640275800758169, -0.46211715726000974, 0, 0.9950547536867305}, 1e-7);
  ExpectValues(Eval("exp", {x}),
               {0.1353352832366127, 0.6065306597126334, 1, 20.085536923187668},
               2e-6);
  // Saturating ends of sigmoid do not produce NaN.
  ExpectValues(Eval("sigmoid", {F32({2}, {-1000, 1000})}), {0, 1});
}

TEST(UnaryTest, LogSqrtRsqrt) {
  Tensor x = F32({5}, {0.25, 1, 4, 0, -1});
  ExpectValues(Eval("log", {x}),
               {-1.3862943611198906, 0, 1.3862943611198906, -kInf, kNaN}, 1e-7);
  ExpectValues(Eval("sqrt", {x}), {0.5, 1, 2, 0, kNaN});
  ExpectValues(Eval("rsqrt", {x}), {2, 1, 0.5, kInf, kNaN});
}

TEST(UnaryTest, IntegerNegAbsWrap) {
  // abs(-128) and neg(-128) wrap to -128 in s8.
  Tensor s8 = T(DType::kS8, {4}, {-128, -5, 0, 127});
  ExpectValues(Eval("neg", {s8}), {-128, 5, 0, -127});
  ExpectValues(Eval("abs", {s8}), {-128, 5, 0, 127});
  ExpectValues(Eval("relu", {s8}), {0, 0, 0, 127});
  // u8 negation is modulo 256.
  Tensor u8 = T(DType::kU8, {3}, {0, 1, 255});
  ExpectValues(Eval("neg", {u8}), {0, 255, 1});
  ExpectValues(Eval("abs", {u8}), {0, 1, 255});
  Tensor s32 = T(DType::kS32, {2}, {-2147483648.0, 7});
  ExpectValues(Eval("neg", {s32}), {-2147483648.0, -7});
  ExpectValues(Eval("abs", {s32}), {-2147483648.0, 7});
}

TEST(UnaryTest, Bf16AndF16RoundOnceAtTheEnd) {
  // e = 2.71828...; bf16 spacing in [2, 4) is 2^-6: nearest is 2.71875.
  Tensor b = Eval("exp", {T(DType::kBF16, {1}, {1})});
  EXPECT_EQ(b.dtype(), DType::kBF16);
  ExpectValues(b, {2.71875});
  // f16 spacing in [2, 4) is 2^-9: 2.71828 -> 1392/512 = 2.71875 as well;
  // use sqrt(2) = 1.41421356 (spacing 2^-10): 1448/1024 = 1.4140625.
  ExpectValues(Eval("sqrt", {T(DType::kF16, {1}, {2})}), {1.4140625});
}

TEST(BinaryTest, SameShape) {
  Tensor a = F32({2, 2}, {1, 2, 3, 4});
  Tensor b = F32({2, 2}, {10, 20, 30, 40});
  ExpectValues(Eval("add", {a, b}), {11, 22, 33, 44});
  ExpectValues(Eval("sub", {a, b}), {-9, -18, -27, -36});
  ExpectValues(Eval("mul", {a, b}), {10, 40, 90, 160});
  ExpectValues(Eval("div", {b, a}), {10, 10, 10, 10});
  ExpectValues(Eval("max", {a, F32({2, 2}, {0, 5, 3, -1})}), {1, 5, 3, 4});
  ExpectValues(Eval("min", {a, F32({2, 2}, {0, 5, 3, -1})}), {0, 2, 3, -1});
}

TEST(BinaryTest, BroadcastScalarRowAndColumn) {
  Tensor a = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectValues(Eval("add", {a, F32({}, {10})}), {11, 12, 13, 14, 15, 16});
  ExpectValues(Eval("add", {F32({}, {10}), a}), {11, 12, 13, 14, 15, 16});
  ExpectValues(Eval("add", {a, F32({3}, {10, 20, 30})}),
               {11, 22, 33, 14, 25, 36});
  ExpectValues(Eval("mul", {a, F32({2, 1}, {2, 3})}), {2, 4, 6, 12, 15, 18});
  // [3, 1] - [1, 2] -> [3, 2].
  Tensor r = Eval("sub", {F32({3, 1}, {1, 2, 3}), F32({1, 2}, {10, 20})});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  ExpectValues(r, {-9, -19, -8, -18, -7, -17});
}

TEST(BinaryTest, BroadcastAcrossRanks) {
  // [2, 1, 2] + [3, 1] -> [2, 3, 2]: out[i, j, k] = a[i, 0, k] + b[j, 0].
  Tensor r =
      Eval("add", {F32({2, 1, 2}, {1, 2, 3, 4}), F32({3, 1}, {10, 20, 30})});
  EXPECT_EQ(r.shape(), (Shape{2, 3, 2}));
  ExpectValues(r, {11, 12, 21, 22, 31, 32, 13, 14, 23, 24, 33, 34});
}

TEST(BinaryTest, EmptyBroadcast) {
  Tensor r = Eval("add", {F32({0, 3}, {}), F32({3}, {1, 2, 3})});
  EXPECT_EQ(r.shape(), (Shape{0, 3}));
  EXPECT_EQ(r.num_elements(), 0);
}

TEST(BinaryTest, FloatSpecialValues) {
  ExpectValues(Eval("div", {F32({4}, {1, -1, 0, 6}), F32({4}, {0, 0, 0, 4})}),
               {kInf, -kInf, kNaN, 1.5});
  Tensor a = F32({3}, {1, kNaN, -3});
  Tensor b = F32({3}, {2, 0, -4});
  ExpectValues(Eval("max", {a, b}), {2, kNaN, -3});
  ExpectValues(Eval("min", {a, b}), {1, kNaN, -4});
  ExpectValues(Eval("min", {b, a}), {1, kNaN, -4});
}

TEST(BinaryTest, PowFollowsCPowRules) {
  // pow(x, 0) = 1 even for NaN x, pow(1, y) = 1 even for NaN y, a negative
  // base with a non-integer exponent is NaN, 0 to a negative power is inf.
  ExpectValues(Eval("pow", {F32({8}, {2, 4, -2, -8, 0, kNaN, 1, 9}),
                            F32({8}, {3, 0.5, 3, 0.5, -1, 0, kNaN, -0.5})}),
               {8, 2, -8, kNaN, kInf, 1, 1, 1.0 / 3.0}, 1e-7);
  // Broadcast, and the result rounded once from double as powf rounds.
  Tensor r = Eval("pow", {F32({2, 1}, {10, 1.5}), F32({2}, {0.1, 7})});
  ExpectValues(
      r, {static_cast<float>(std::pow(10.0, static_cast<float>(0.1))), 1e7,
          static_cast<float>(std::pow(1.5, static_cast<float>(0.1))),
          static_cast<float>(std::pow(1.5, 7.0))});
}

TEST(BinaryTest, PowRefusesIntegers) {
  EXPECT_FALSE(
      EvaluateOp("pow", {T(DType::kS32, {1}, {2}), T(DType::kS32, {1}, {3})})
          .ok());
}

TEST(BinaryTest, IntegerArithmeticWraps) {
  ExpectValues(Eval("add", {T(DType::kS8, {3}, {127, -128, 100}),
                            T(DType::kS8, {3}, {1, -1, 100})}),
               {-128, 127, -56});
  ExpectValues(
      Eval("sub", {T(DType::kU8, {2}, {0, 5}), T(DType::kU8, {2}, {1, 10})}),
      {255, 251});
  ExpectValues(
      Eval("mul", {T(DType::kU8, {2}, {16, 200}), T(DType::kU8, {2}, {16, 2})}),
      {0, 144});
  ExpectValues(Eval("mul", {T(DType::kS8, {2}, {-128, 64}),
                            T(DType::kS8, {2}, {-1, 2})}),
               {-128, -128});
  ExpectValues(
      Eval("add", {T(DType::kS32, {1}, {2147483647}), T(DType::kS32, {}, {1})}),
      {-2147483648.0});
  ExpectValues(Eval("mul", {T(DType::kS32, {2}, {65536, 46341}),
                            T(DType::kS32, {2}, {65536, 46341})}),
               {0, -2147479015});
  ExpectValues(Eval("max", {T(DType::kS8, {2}, {-128, 5}),
                            T(DType::kS8, {2}, {127, -5})}),
               {127, 5});
  ExpectValues(
      Eval("min", {T(DType::kU8, {2}, {200, 5}), T(DType::kU8, {}, {100})}),
      {100, 5});
}

TEST(BinaryTest, Bf16AddTiesToEven) {
  // bf16 spacing in [1, 2) is 2^-7. 1 + 2^-8 is a tie between 1 (even) and
  // 1 + 2^-7 (odd) -> 1; 1 + 3 * 2^-8 is a tie between 1 + 2^-7 (odd) and
  // 1 + 2^-6 (even) -> 1 + 2^-6.
  Tensor a = T(DType::kBF16, {2}, {1, 1.0078125});
  Tensor b = T(DType::kBF16, {}, {0.00390625});
  Tensor r = Eval("add", {a, b});
  EXPECT_EQ(r.dtype(), DType::kBF16);
  ExpectValues(r, {1.0, 1.015625});
  EXPECT_EQ(Bits(r), (std::vector<uint16_t>{0x3F80, 0x3F82}));
}

TEST(BinaryTest, F16AddTiesToEven) {
  // f16 spacing in [1, 2) is 2^-10; 2^-11 is a tie.
  Tensor a = T(DType::kF16, {2}, {1, 1.0009765625});
  Tensor b = T(DType::kF16, {}, {0.00048828125});
  ExpectValues(Eval("add", {a, b}), {1.0, 1.001953125});
  // 60000 + 10000 overflows f16 (max 65504) to inf.
  ExpectValues(
      Eval("add", {T(DType::kF16, {1}, {60000}), T(DType::kF16, {1}, {10000})}),
      {kInf});
}

TEST(CompareTest, FloatComparisonsWithBroadcastAndNaN) {
  Tensor a = F32({4}, {1, 2, 3, kNaN});
  Tensor b = F32({}, {2});
  Tensor eq = Eval("equal", {a, b});
  EXPECT_EQ(eq.type(), TensorType(DType::kBool, {4}));
  ExpectValues(eq, {0, 1, 0, 0});
  ExpectValues(Eval("greater", {a, b}), {0, 0, 1, 0});
  ExpectValues(Eval("greater_equal", {a, b}), {0, 1, 1, 0});
  ExpectValues(Eval("less", {a, b}), {1, 0, 0, 0});
  ExpectValues(Eval("less_equal", {a, b}), {1, 1, 0, 0});
  ExpectValues(Eval("equal", {F32({1}, {kNaN}), F32({1}, {kNaN})}), {0});
}

TEST(CompareTest, IntegerAndBool) {
  // u8 200 > 100 must not be read as signed.
  ExpectValues(Eval("greater", {T(DType::kU8, {2}, {200, 5}),
                                T(DType::kU8, {2}, {100, 5})}),
               {1, 0});
  ExpectValues(Eval("less", {T(DType::kS8, {2, 2}, {-128, 0, 5, 127}),
                             T(DType::kS8, {2}, {0, 127})}),
               {1, 1, 0, 0});
  ExpectValues(Eval("equal", {T(DType::kBool, {3}, {1, 0, 1}),
                              T(DType::kBool, {1}, {1})}),
               {1, 0, 1});
}

TEST(SelectTest, ThreeWayBroadcast) {
  // cond [2, 1], a [1, 3], b [] -> [2, 3].
  Tensor r = Eval("select", {T(DType::kBool, {2, 1}, {1, 0}),
                             F32({1, 3}, {1, 2, 3}), F32({}, {-1})});
  EXPECT_EQ(r.type(), TensorType(DType::kF32, {2, 3}));
  ExpectValues(r, {1, 2, 3, -1, -1, -1});
  // cond [3], a [2, 1], b [2, 3]: out[i, j] = cond[j] ? a[i] : b[i, j].
  Tensor r2 = Eval("select", {T(DType::kBool, {3}, {1, 0, 1}),
                              T(DType::kS8, {2, 1}, {10, 20}),
                              T(DType::kS8, {2, 3}, {-1, -2, -3, -4, -5, -6})});
  EXPECT_EQ(r2.type(), TensorType(DType::kS8, {2, 3}));
  ExpectValues(r2, {10, -2, 10, 20, -5, 20});
}

TEST(SelectTest, CopiesBitsExactly) {
  Tensor a = Bits16(DType::kBF16, {2}, {0x7FC1, 0x0001});  // NaN, subnormal
  Tensor b = Bits16(DType::kBF16, {2}, {0x3F80, 0x3F80});
  Tensor r = Eval("select", {T(DType::kBool, {2}, {1, 1}), a, b});
  EXPECT_EQ(Bits(r), (std::vector<uint16_t>{0x7FC1, 0x0001}));
}

TEST(GeluTest, ErfAndTanhForms) {
  Tensor x = F32({5}, {-3, -1, 0, 1, 2});
  ExpectValues(Eval("gelu", {x}),
               {-0.00404969409489031, -0.15865525393145707, 0,
                0.8413447460685429, 1.9544997361036416},
               1e-7);
  ExpectValues(Eval("gelu", {x}, {{"approximate", S("none")}}),
               {-0.00404969409489031, -0.15865525393145707, 0,
                0.8413447460685429, 1.9544997361036416},
               1e-7);
  ExpectValues(Eval("gelu", {x}, {{"approximate", S("tanh")}}),
               {-0.0036373920817729943, -0.15880800939172324, 0,
                0.8411919906082768, 1.954597694087775},
               1e-7);
}

// Far in the negative tail gelu is tiny but a normal f32, not 0: no
// cancellation in 1 + erf / 1 + tanh.
TEST(GeluTest, NegativeTailIsNotZero) {
  Tensor x = F32({1}, {-10});
  Tensor erf = Eval("gelu", {x});
  EXPECT_NEAR(erf.GetDouble(0) / -7.619853024160593e-23, 1.0, 1e-6);
  Tensor tanh = Eval("gelu", {x}, {{"approximate", S("tanh")}});
  EXPECT_NEAR(tanh.GetDouble(0) / -1.2040923482098023e-37, 1.0, 1e-6);
}

TEST(ClampTest, OneBoundAndBoth) {
  Tensor x = F32({4}, {-1, 0.5, 2, kNaN});
  ExpectValues(Eval("clamp", {x}, {{"min", F(0)}}), {0, 0.5, 2, kNaN});
  ExpectValues(Eval("clamp", {x}, {{"max", I(1)}}), {-1, 0.5, 1, kNaN});
  ExpectValues(Eval("clamp", {x}, {{"min", F(-0.5)}, {"max", F(1)}}),
               {-0.5, 0.5, 1, kNaN});
  ExpectValues(Eval("clamp", {x}), {-1, 0.5, 2, kNaN});
}

TEST(ClampTest, IntegerBoundsRoundInwardAndSaturate) {
  Tensor s8 = T(DType::kS8, {5}, {-128, -3, 0, 4, 127});
  ExpectValues(Eval("clamp", {s8}, {{"min", F(-2.5)}, {"max", F(3.7)}}),
               {-2, -2, 0, 3, 3});
  Tensor u8 = T(DType::kU8, {2}, {0, 255});
  ExpectValues(Eval("clamp", {u8}, {{"min", F(-5)}, {"max", F(1000)}}),
               {0, 255});
  ExpectValues(Eval("clamp", {u8}, {{"min", F(10)}}), {10, 255});
}

TEST(CastTest, F32ToBf16RoundsToNearestEven) {
  Tensor x =
      F32({5}, {1.00390625, 1.01171875, 1.00390625 + 0x1p-20, kNaN, -kInf});
  Tensor r = Eval("cast", {x}, {{"to", Attribute::Type(DType::kBF16)}});
  EXPECT_EQ(r.type(), TensorType(DType::kBF16, {5}));
  ExpectValues(r, {1.0, 1.015625, 1.0078125, kNaN, -kInf});
}

TEST(CastTest, F32ToF16) {
  Tensor x = F32({5}, {1 + 0x1p-11, 1 + 3 * 0x1p-11, 70000, 1e-8, 3e-8});
  Tensor r = Eval("cast", {x}, {{"to", Attribute::Type(DType::kF16)}});
  ExpectValues(r, {1.0, 1.001953125, kInf, 0, 0x1p-24});
}

TEST(CastTest, FloatToIntRoundsHalfToEvenAndSaturates) {
  Tensor x =
      F32({10}, {0.5, 1.5, 2.5, -0.5, -1.5, 200, -200, kNaN, kInf, -kInf});
  ExpectValues(Eval("cast", {x}, {{"to", Attribute::Type(DType::kS8)}}),
               {0, 2, 2, 0, -2, 127, -128, 0, 127, -128});
  ExpectValues(Eval("cast", {F32({4}, {-1, 255.5, 254.5, 3.7})},
                    {{"to", Attribute::Type(DType::kU8)}}),
               {0, 255, 254, 4});
  ExpectValues(Eval("cast", {F32({3}, {2147483647.0, -3e9, 1e10})},
                    {{"to", Attribute::Type(DType::kS32)}}),
               {2147483647, -2147483648.0, 2147483647});
}

TEST(CastTest, BoolRules) {
  ExpectValues(Eval("cast", {F32({5}, {0, -0.0, 0.1, kNaN, -kInf})},
                    {{"to", Attribute::Type(DType::kBool)}}),
               {0, 0, 1, 1, 1});
  ExpectValues(Eval("cast", {T(DType::kBool, {2}, {1, 0})},
                    {{"to", Attribute::Type(DType::kF32)}}),
               {1, 0});
  ExpectValues(Eval("cast", {T(DType::kBool, {2}, {1, 0})},
                    {{"to", Attribute::Type(DType::kS8)}}),
               {1, 0});
  ExpectValues(Eval("cast", {T(DType::kS32, {3}, {0, -7, 256})},
                    {{"to", Attribute::Type(DType::kBool)}}),
               {0, 1, 1});
}

TEST(CastTest, IntToIntSaturates) {
  ExpectValues(Eval("cast", {T(DType::kS32, {3}, {300, -300, 5})},
                    {{"to", Attribute::Type(DType::kS8)}}),
               {127, -128, 5});
  ExpectValues(Eval("cast", {T(DType::kS8, {2}, {-1, 100})},
                    {{"to", Attribute::Type(DType::kU8)}}),
               {0, 100});
  ExpectValues(Eval("cast", {T(DType::kU8, {2}, {255, 127})},
                    {{"to", Attribute::Type(DType::kS8)}}),
               {127, 127});
}

TEST(CastTest, LowPrecisionToF32IsExact) {
  ExpectValues(Eval("cast", {Bits16(DType::kBF16, {1}, {0x3F81})},
                    {{"to", Attribute::Type(DType::kF32)}}),
               {1.0078125});
  ExpectValues(Eval("cast", {Bits16(DType::kF16, {2}, {0x3C01, 0x0001})},
                    {{"to", Attribute::Type(DType::kF32)}}),
               {1.0009765625, 0x1p-24});
}

TEST(CastTest, IntToLowPrecisionRoundsOnce) {
  // 2^24 + 2^16 + 1 -> bf16: nearest is 2^24 + 2^17. Rounding through f32
  // first would tie twice and give 2^24.
  Tensor r = Eval("cast", {T(DType::kS32, {1}, {16842753})},
                  {{"to", Attribute::Type(DType::kBF16)}});
  ExpectValues(r, {16908288});
  EXPECT_EQ(Bits(r), (std::vector<uint16_t>{0x4B81}));
  // f16: spacing 2 in [2048, 4096), 32 near 65504; 65520 rounds to inf.
  ExpectValues(Eval("cast", {T(DType::kS32, {4}, {2049, 2051, 65519, 65520})},
                    {{"to", Attribute::Type(DType::kF16)}}),
               {2048, 2052, 65504, kInf});
}

}  // namespace
}  // namespace portable
}  // namespace hgc
