#include "analysis/strided_view.h"

#include <vector>

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace strided_view {
namespace {

using Dims = std::vector<int64_t>;

class StridedViewTest : public ::testing::Test {
 protected:
  StridedViewTest()
      : module_(pass_test::Parse(R"(
graph @g(%x: f32[2, 3, 4, 5]) -> f32[2, 3, 4, 5] {
  return %x
}
)")),
        x_(module_.graphs().front()->param(0)) {}

  Module module_;
  const Value* x_;
};

TEST_F(StridedViewTest, ContiguousIsRowMajor) {
  const View v = Contiguous(x_);
  EXPECT_EQ(v.param, x_);
  EXPECT_EQ(v.offset, 0);
  EXPECT_EQ(v.shape, (Dims{2, 3, 4, 5}));
  EXPECT_EQ(v.strides, (Dims{60, 20, 5, 1}));
}

TEST_F(StridedViewTest, ReshapeMergesAndSplitsRowMajorDims) {
  std::optional<View> merged = Reshape(Contiguous(x_), {6, 20});
  ASSERT_TRUE(merged.has_value());
  EXPECT_EQ(merged->strides, (Dims{20, 1}));
  std::optional<View> split = Reshape(*merged, {2, 3, 2, 10});
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->strides, (Dims{60, 20, 10, 1}));
  // Dims of size 1 anywhere take any stride.
  std::optional<View> ones = Reshape(Contiguous(x_), {1, 6, 1, 20, 1});
  ASSERT_TRUE(ones.has_value());
  EXPECT_EQ(ones->strides[1], 20);
  EXPECT_EQ(ones->strides[3], 1);
}

TEST_F(StridedViewTest, ReshapeRefusesWhatStridesCannotExpress) {
  // The last two dims swapped (a transpose): merging them needs a copy.
  View t = Contiguous(x_);
  t.shape = {2, 3, 5, 4};
  t.strides = {60, 20, 1, 5};
  EXPECT_FALSE(Reshape(t, {2, 3, 20}).has_value());
  // Splitting one of them is still a view.
  std::optional<View> split = Reshape(t, {2, 3, 5, 2, 2});
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->strides, (Dims{60, 20, 1, 10, 5}));
}

TEST(MergeDimsTest, OneStrideOrNone) {
  EXPECT_EQ(MergeDims({2, 3, 4}, {12, 4, 1}, 0, 3), 1);
  EXPECT_EQ(MergeDims({2, 3, 4}, {12, 4, 1}, 0, 2), 4);
  // Broadcast dims merge to stride 0; dims of 1 are skipped.
  EXPECT_EQ(MergeDims({2, 1, 3}, {0, 7, 0}, 0, 3), 0);
  EXPECT_EQ(MergeDims({2, 1, 3}, {3, 99, 1}, 0, 3), 1);
  // A gap between the dims: no single stride.
  EXPECT_FALSE(MergeDims({2, 3}, {8, 1}, 0, 2).has_value());
}

}  // namespace
}  // namespace strided_view
}  // namespace hgc
