#include "support/float16.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace hgc {
namespace {

TEST(Bf16Test, RoundsToNearestEven) {
  // 1 + 2^-8 is exactly halfway between bf16 1.0 and 1.0078125: ties to even.
  EXPECT_EQ(RoundToBf16(1.0f + 1.0f / 256), 1.0f);
  // 1 + 3*2^-8 is halfway between 1.0078125 (odd) and 1.015625 (even).
  EXPECT_EQ(RoundToBf16(1.0f + 3.0f / 256), 1.015625f);
  EXPECT_EQ(RoundToBf16(1.0f + 1.0f / 256 + 1.0f / 4096), 1.0078125f);
  EXPECT_EQ(FloatToBf16(-2.0f), 0xC000);
  EXPECT_TRUE(std::isnan(RoundToBf16(std::nanf(""))));
  EXPECT_TRUE(std::isinf(RoundToBf16(std::numeric_limits<float>::infinity())));
}

TEST(Bf16Test, RoundToOddAvoidsDoubleRounding) {
  // 2^24 + 2^16 + 1 rounds to f32 2^24 + 2^16, a bf16 tie that goes to even
  // 2^24; rounded directly it lies above the tie and gives 2^24 + 2^17.
  double v = 16777216.0 + 65536.0 + 1.0;
  EXPECT_EQ(RoundToBf16(static_cast<float>(v)), 16777216.0f);
  EXPECT_EQ(RoundToBf16(RoundToOddF32(v)), 16777216.0f + 131072.0f);
  EXPECT_EQ(RoundToOddF32(1.5), 1.5f);
}

TEST(Bf16Test, DazReadsDenormalsAsSignedZeros) {
  EXPECT_EQ(FloatBits(Bf16ToFloatDaz(0x0001)), 0u);           // 2^-133
  EXPECT_EQ(FloatBits(Bf16ToFloatDaz(0x807F)), 0x80000000u);  // -denormal
  EXPECT_EQ(Bf16ToFloatDaz(0x0080), 0x1p-126f);               // smallest normal
  EXPECT_EQ(Bf16ToFloatDaz(0x3F80), 1.0f);
  EXPECT_TRUE(std::isinf(Bf16ToFloatDaz(0x7F80)));
  EXPECT_TRUE(std::isnan(Bf16ToFloatDaz(0x7FC0)));
  EXPECT_EQ(FloatBits(Bf16ToFloatDaz(0x8000)), 0x80000000u);
}

TEST(HalfTest, ExactValuesRoundTrip) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 0.5f, 6.103515625e-05f,
                  5.9604644775390625e-08f}) {
    EXPECT_EQ(RoundToHalf(f), f) << f;
  }
  EXPECT_EQ(FloatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(FloatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(5.9604644775390625e-08f), 0x0001);
}

TEST(HalfTest, RoundsOverflowsAndUnderflows) {
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);  // rounds up to infinity
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(1e-9f), 0x0000);
  // Halfway between 0 and the smallest subnormal: ties to even (0).
  EXPECT_EQ(FloatToHalf(2.98023223876953125e-08f), 0x0000);
  // Just above it rounds to the smallest subnormal.
  EXPECT_EQ(FloatToHalf(3.0e-08f), 0x0001);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
  EXPECT_EQ(FloatToHalf(1.0f + 1.0f / 2048), 0x3C00);
  EXPECT_EQ(FloatToHalf(1.0f + 3.0f / 2048), 0x3C02);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::nanf("")))));
  EXPECT_EQ(HalfToFloat(0x7C00), std::numeric_limits<float>::infinity());
}

TEST(HalfTest, AllHalfValuesRoundTripThroughFloat) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToHalf(f), h) << h;
  }
}

}  // namespace
}  // namespace hgc
