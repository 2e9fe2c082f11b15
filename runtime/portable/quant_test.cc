// quantize / dequantize of the portable kernels against hand-computed
// values.
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

Attribute To(DType d) { return Attribute::Type(d); }

TEST(QuantizeTest, RoundsHalfToEvenAndSaturates) {
  Tensor x = F32({12}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.49, 1000, -1000,
                        kNaN, kInf, -kInf});
  Tensor q = Eval("quantize", {x}, {{"scale", F(1)}, {"to", To(DType::kS8)}});
  EXPECT_EQ(q.type(), TensorType(DType::kS8, {12}));
  ExpectValues(q, {0, 2, 2, 0, -2, -2, 3, 127, -128, 0, 127, -128});
}

TEST(QuantizeTest, ScaleAndZeroPointToU8) {
  // x / 0.5 + 10: 0.25 -> 0.5 -> 0 -> 10; 0.75 -> 1.5 -> 2 -> 12;
  // -5 -> -10 -> 0; -6 -> -12 -> -2 -> 0 (saturated); 100 -> 210;
  // 200 -> 410 -> 255; NaN -> zero_point.
  Tensor x = F32({7}, {0.25, 0.75, -5, -6, 100, 200, kNaN});
  ExpectValues(Eval("quantize", {x},
                    {{"scale", F(0.5)}, {"zero_point", I(10)},
                     {"to", To(DType::kU8)}}),
               {10, 12, 0, 0, 210, 255, 10});
}

TEST(QuantizeTest, DividesInF32) {
  // scale 0.1 (f32 0.100000001490116). The f32 quotients 0.75f / 0.1f = 7.5
  // and 0.85f / 0.1f = 8.5 are exact ties -> 8 and 8, although the exact
  // quotients are 7.4999999 and 8.5000001 (double division would give 7 and
  // 9). 1.55f / 0.1f = 15.499999 -> 15 and 2.35f / 0.1f = 23.499998 -> 23,
  // where multiplying by the f32 reciprocal would give 15.5 -> 16 and
  // 23.5 -> 24.
  Tensor x = F32({4}, {0.75, 0.85, 1.55, 2.35});
  ExpectValues(Eval("quantize", {x}, {{"scale", F(0.1)}, {"to", To(DType::kS8)}}),
               {8, 8, 15, 23});
}

TEST(QuantizeTest, PerChannel) {
  // axis 1, scale [1, 2, 4], zero_point [0, 1, -1]:
  // col 0: 1, 4; col 1: 2/2 + 1 = 2, 5/2 = 2.5 -> 2, + 1 = 3;
  // col 2: 3/4 = 0.75 -> 1, - 1 = 0; 6/4 = 1.5 -> 2, - 1 = 1.
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  AttrMap attrs = {{"scale", Floats({1, 2, 4})},
                   {"zero_point", Ints({0, 1, -1})},
                   {"axis", I(1)},
                   {"to", To(DType::kS8)}};
  ExpectValues(Eval("quantize", {x}, attrs), {1, 2, 0, 4, 3, 1});
  attrs["axis"] = I(-1);
  ExpectValues(Eval("quantize", {x}, attrs), {1, 2, 0, 4, 3, 1});
  // axis 0, scale [1, 10]: row 1 is {0.4, 0.5, 0.6} -> {0, 0, 1}.
  ExpectValues(Eval("quantize", {x},
                    {{"scale", Floats({1, 10})},
                     {"axis", I(0)},
                     {"to", To(DType::kS8)}}),
               {1, 2, 3, 0, 0, 1});
  // Per-tensor scale with per-channel zero points.
  ExpectValues(Eval("quantize", {F32({2, 1}, {1, 1})},
                    {{"scale", F(1)},
                     {"zero_point", Ints({0, 100})},
                     {"axis", I(0)},
                     {"to", To(DType::kU8)}}),
               {1, 101});
}

TEST(DequantizeTest, PerTensor) {
  Tensor y = Eval("dequantize", {T(DType::kU8, {3}, {0, 128, 255})},
                  {{"scale", F(0.5)}, {"zero_point", I(128)}});
  EXPECT_EQ(y.type(), TensorType(DType::kF32, {3}));
  ExpectValues(y, {-64, 0, 63.5});
  ExpectValues(Eval("dequantize", {T(DType::kS8, {2}, {-128, 127})},
                    {{"scale", F(0.25)}}),
               {-32, 31.75});
  ExpectValues(Eval("dequantize",
                    {T(DType::kS32, {3}, {2000000000, -2000000000,
                                          2147483647})},
                    {{"scale", F(1)}, {"zero_point", I(-2147483648LL)}}),
               // x - zp is exact (4147483648, 147483648, 4294967295), then
               // rounds to f32 (spacing 256 above 2^31): the first two are
               // representable, 4294967295 rounds up to 2^32.
               {4147483648.0, 147483648.0, 4294967296.0});
}

TEST(DequantizeTest, MultipliesByF32Scale) {
  // 3 * f32(0.1) in f32 arithmetic.
  float expected = 3.0f * 0.1f;
  ExpectValues(Eval("dequantize", {T(DType::kS8, {1}, {3})},
                    {{"scale", F(0.1)}}),
               {static_cast<double>(expected)});
}

TEST(DequantizeTest, PerChannel) {
  // axis 1, scale [0.5, 2], zero_point [1, -1]:
  // col 0: (1-1)*0.5 = 0, (3-1)*0.5 = 1; col 1: (2+1)*2 = 6, (4+1)*2 = 10.
  ExpectValues(Eval("dequantize", {T(DType::kS8, {2, 2}, {1, 2, 3, 4})},
                    {{"scale", Floats({0.5, 2})},
                     {"zero_point", Ints({1, -1})},
                     {"axis", I(1)}}),
               {0, 6, 1, 10});
  // axis 0 of [2, 2, 1]: one scale per outer slice.
  ExpectValues(Eval("dequantize", {T(DType::kU8, {2, 2, 1}, {1, 2, 3, 4})},
                    {{"scale", Floats({1, 0.5})}, {"axis", I(0)}}),
               {1, 2, 1.5, 2});
}

TEST(QuantTest, RoundTrip) {
  // Values on the grid survive quantize -> dequantize exactly.
  Tensor x = F32({4}, {-1, -0.5, 0, 0.75});
  AttrMap q = {{"scale", F(0.25)}, {"zero_point", I(4)},
               {"to", To(DType::kU8)}};
  Tensor qx = Eval("quantize", {x}, q);
  ExpectValues(qx, {0, 2, 4, 7});
  ExpectValues(Eval("dequantize", {qx},
                    {{"scale", F(0.25)}, {"zero_point", I(4)}}),
               {-1, -0.5, 0, 0.75});
}

}  // namespace
}  // namespace portable
}  // namespace hgc
