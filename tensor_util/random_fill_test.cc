#include "tensor_util/random_fill.h"

#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "support/float16.h"

namespace hgc {
namespace {

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.type() == b.type() &&
         std::memcmp(a.raw(), b.raw(), a.size_in_bytes()) == 0;
}

TEST(RandomFillTest, StreamIdsAreFnv1a) {
  // Published FNV-1a 64 test vectors.
  EXPECT_EQ(RandomStreamForName(""), 0xCBF29CE484222325ull);
  EXPECT_EQ(RandomStreamForName("a"), 0xAF63DC4C8601EC8Cull);
  EXPECT_EQ(RandomStreamForName("foobar"), 0x85944171F73967E8ull);
  EXPECT_NE(RandomStreamForIndex(0), RandomStreamForIndex(1));
}

TEST(RandomFillTest, DeterministicPerSeedAndName) {
  TensorType type(DType::kF32, {64, 3});
  Tensor a = *RandomTensor(type, 42, "x");
  Tensor b = *RandomTensor(type, 42, "x");
  EXPECT_TRUE(SameBytes(a, b));
  EXPECT_FALSE(SameBytes(a, *RandomTensor(type, 43, "x")));
  EXPECT_FALSE(SameBytes(a, *RandomTensor(type, 42, "y")));
  Tensor i0 = *RandomTensor(type, 42, int64_t{0});
  EXPECT_TRUE(SameBytes(i0, *RandomTensor(type, 42, int64_t{0})));
  EXPECT_FALSE(SameBytes(i0, *RandomTensor(type, 42, int64_t{1})));
}

TEST(RandomFillTest, PrefixStableAcrossShapes) {
  // Element i depends only on (seed, stream, i): a longer tensor extends a
  // shorter one.
  Tensor small = *RandomTensor(TensorType(DType::kS8, {10}), 7, "w");
  Tensor large = *RandomTensor(TensorType(DType::kS8, {2, 50}), 7, "w");
  EXPECT_EQ(std::memcmp(small.raw(), large.raw(), 10), 0);
}

TEST(RandomFillTest, FloatRangeAndSpread) {
  Tensor t = *RandomTensor(TensorType(DType::kF32, {100000}), 1, "x");
  double sum = 0, lo = 1, hi = -1;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double v = t.GetDouble(i);
    ASSERT_GE(v, -1.0);
    ASSERT_LT(v, 1.0);
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_LT(std::fabs(sum / t.num_elements()), 0.02);
  EXPECT_LT(lo, -0.99);
  EXPECT_GT(hi, 0.99);
}

TEST(RandomFillTest, CustomFloatRange) {
  RandomFillOptions options;
  options.float_min = 2;
  options.float_max = 3;
  Tensor t = *RandomTensor(TensorType(DType::kF32, {1000}), 5, "x", options);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    ASSERT_GE(t.GetDouble(i), 2.0);
    ASSERT_LE(t.GetDouble(i), 3.0);
  }
}

TEST(RandomFillTest, LowPrecisionIsTheRoundedF32Stream) {
  TensorType f32(DType::kF32, {1000});
  Tensor f = *RandomTensor(f32, 9, "x");
  Tensor b = *RandomTensor(TensorType(DType::kBF16, {1000}), 9, "x");
  Tensor h = *RandomTensor(TensorType(DType::kF16, {1000}), 9, "x");
  for (int64_t i = 0; i < 1000; ++i) {
    float v = f.data<float>()[i];
    ASSERT_EQ(b.data<uint16_t>()[i], FloatToBf16(v));
    ASSERT_EQ(h.data<uint16_t>()[i], FloatToHalf(v));
  }
}

TEST(RandomFillTest, IntegerAndBoolRanges) {
  Tensor s8 = *RandomTensor(TensorType(DType::kS8, {5000}), 3, "a");
  Tensor u8 = *RandomTensor(TensorType(DType::kU8, {5000}), 3, "a");
  Tensor s32 = *RandomTensor(TensorType(DType::kS32, {5000}), 3, "a");
  Tensor b = *RandomTensor(TensorType(DType::kBool, {5000}), 3, "a");
  int s8_min = 0, s8_max = 0, u8_max = 0, trues = 0;
  for (int64_t i = 0; i < 5000; ++i) {
    int v = s8.data<int8_t>()[i];
    ASSERT_GE(v, -32);
    ASSERT_LE(v, 32);
    s8_min = std::min(s8_min, v);
    s8_max = std::max(s8_max, v);
    ASSERT_LE(u8.data<uint8_t>()[i], 64);
    u8_max = std::max<int>(u8_max, u8.data<uint8_t>()[i]);
    ASSERT_GE(s32.data<int32_t>()[i], -1000);
    ASSERT_LE(s32.data<int32_t>()[i], 1000);
    ASSERT_LE(b.data<uint8_t>()[i], 1);
    trues += b.data<uint8_t>()[i];
  }
  EXPECT_EQ(s8_min, -32);
  EXPECT_EQ(s8_max, 32);
  EXPECT_EQ(u8_max, 64);
  EXPECT_GT(trues, 2200);
  EXPECT_LT(trues, 2800);
}

TEST(RandomFillTest, HugeTensorIsResourceExhausted) {
  absl::StatusOr<Tensor> t =
      RandomTensor(TensorType(DType::kF32, {int64_t{1} << 40}), 1, "x");
  EXPECT_EQ(t.status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace hgc
