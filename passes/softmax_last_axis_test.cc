// softmax-last-axis: which softmaxes are rewritten, into what, and that the
// interpreter computes the same bits before and after.
#include "passes/softmax_last_axis.h"

#include <string>

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::CountOps;
using pass_test::ExpectBitIdentical;
using pass_test::Parse;
using pass_test::RunPipeline;

constexpr char kChannels[] = R"(
graph @g(%x: f32[2, 5, 3, 4]) -> f32[2, 5, 3, 4] {
  %y = softmax(%x) {axis = 1}
  %z = neg(%y)
  return %z
})";

TEST(SoftmaxLastAxisTest, MovesTheAxisLastBetweenTransposes) {
  Module m = Parse(kChannels);
  ASSERT_TRUE(RunPipeline(m, "softmax-last-axis").ok());
  const Graph& g = *m.graphs()[0];
  ASSERT_EQ(CountOps(g, "transpose"), 2);
  auto it = g.ops().begin();
  const Op& in = **it++;
  const Op& softmax = **it++;
  const Op& out = **it++;
  EXPECT_EQ(in.FindAttr("perm")->as_int_list(),
            (std::vector<int64_t>{0, 2, 3, 1}));
  EXPECT_EQ(softmax.FindAttr("axis")->as_int(), -1);
  EXPECT_EQ(softmax.result()->type().shape, (Shape{2, 3, 4, 5}));
  EXPECT_EQ(out.FindAttr("perm")->as_int_list(),
            (std::vector<int64_t>{0, 3, 1, 2}));
  EXPECT_EQ(out.result()->name(), "y");
}

TEST(SoftmaxLastAxisTest, ComputesTheSameBits) {
  for (uint64_t seed : {1, 2}) {
    ExpectBitIdentical(kChannels, "softmax-last-axis", seed);
  }
  ExpectBitIdentical(R"(
graph @g(%x: bf16[7, 3]) -> bf16[7, 3] {
  %y = softmax(%x) {axis = -2}
  return %y
})",
                     "softmax-last-axis");
}

TEST(SoftmaxLastAxisTest, LeavesLastAxisSoftmaxesAlone) {
  Module m = Parse(R"(
graph @g(%x: f32[4, 6], %s: f32[9]) -> (f32[4, 6], f32[4, 6], f32[9]) {
  %a = softmax(%x)
  %b = softmax(%x) {axis = 1}
  %c = softmax(%s) {axis = 0}
  return %a, %b, %c
})");
  absl::StatusOr<int> n = MoveSoftmaxAxesLast(m);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 0);
}

}  // namespace
}  // namespace hgc
