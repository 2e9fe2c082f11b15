#include "ir/tensor_type.h"

#include "gtest/gtest.h"

namespace hgc {
namespace {

TEST(TensorTypeTest, PrintsCanonically) {
  EXPECT_EQ(TensorType(DType::kF32, {128, 512}).ToString(), "f32[128, 512]");
  EXPECT_EQ(TensorType(DType::kBF16).ToString(), "bf16[]");
  EXPECT_EQ(TensorType(DType::kBool, {0, 3}).ToString(), "bool[0, 3]");
}

TEST(TensorTypeTest, CountsElementsAndBytes) {
  TensorType t(DType::kF16, {2, 3, 4});
  EXPECT_EQ(t.NumElements(), 24);
  EXPECT_EQ(t.SizeInBytes(), 48);
  EXPECT_EQ(TensorType(DType::kS32).NumElements(), 1);
}

TEST(CheckedNumElementsTest, RejectsOverflowAndNegativeDims) {
  EXPECT_EQ(*CheckedNumElements({1 << 20, 1 << 20, 1 << 20}), int64_t{1} << 60);
  EXPECT_FALSE(CheckedNumElements({1 << 20, 1 << 20, 1 << 21}).ok());
  // The product wraps to a small number in 64 bits; must still be rejected.
  EXPECT_FALSE(CheckedNumElements({int64_t{1} << 32, int64_t{1} << 32, 3}).ok());
  EXPECT_FALSE(CheckedNumElements({4, -1}).ok());
  // A zero dimension makes any product valid.
  EXPECT_EQ(*CheckedNumElements({0, int64_t{1} << 62, int64_t{1} << 62}), 0);
}

}  // namespace
}  // namespace hgc
