// recognize-softmax: which written-out softmaxes become softmax ops, which
// stay, and that the numbers agree.
#include "passes/recognize_softmax.h"

#include <string>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::CountOps;
using pass_test::ExpectSameNumbers;
using pass_test::Parse;
using pass_test::RunPipeline;

// As JAX and PyTorch's decompositions write it, over AXES, in DTYPE.
constexpr char kWrittenOut[] = R"(
graph @g(%x: DTYPE[3, 5, 7]) -> DTYPE[3, 5, 7] {
  %m = reduce_max(%x) {axes = [AXES], keep_dims = true}
  %d = sub(%x, %m)
  %e = exp(%d)
  %s = reduce_sum(%e) {axes = [AXES], keep_dims = true}
  %y = div(%e, %s)
  %z = neg(%y)
  return %z
})";

std::string WrittenOut(const std::string& dtype, const std::string& axes) {
  return absl::StrReplaceAll(kWrittenOut, {{"DTYPE", dtype}, {"AXES", axes}});
}

TEST(RecognizeSoftmaxTest, RewritesTheChainAsOneSoftmax) {
  Module m = Parse(WrittenOut("f32", "-1"));
  ASSERT_TRUE(RunPipeline(m, "recognize-softmax,dce").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(g.ops().size(), 2u);
  const Op& softmax = *g.ops().front();
  ASSERT_EQ(softmax.kind(), "softmax");
  EXPECT_EQ(softmax.operand(0)->name(), "x");
  EXPECT_EQ(softmax.FindAttr("axis")->as_int(), -1);
  EXPECT_EQ(softmax.result()->name(), "y");
}

TEST(RecognizeSoftmaxTest, KeepsAnInnerAxis) {
  Module m = Parse(WrittenOut("f32", "1"));
  ASSERT_TRUE(RunPipeline(m, "recognize-softmax,dce").ok());
  const Graph& g = *m.graphs()[0];
  ASSERT_EQ(CountOps(g, "softmax"), 1);
  EXPECT_EQ(CountOps(g, "exp"), 0);
  EXPECT_EQ(g.ops().front()->FindAttr("axis")->as_int(), 1);
}

TEST(RecognizeSoftmaxTest, AgreesWithTheWrittenOutForm) {
  for (const char* axes : {"-1", "0", "2"}) {
    ExpectSameNumbers(WrittenOut("f32", axes), "recognize-softmax,dce", 3);
  }
  // Rows that are all -inf give NaN both ways; large values do not
  // overflow either way.
  ExpectSameNumbers(R"(
graph @g(%x: f32[2, 4]) -> f32[2, 4] {
  %c = constant() {value = [-3.4e38, -3.4e38, -3.4e38, -3.4e38,
                            1e30, 1e30, 2e30, 0.0]} : f32[2, 4]
  %n = constant() {value = -3.4e38} : f32[]
  %big = mul(%c, %n)
  %w = neg(%big)
  %a = add(%x, %w)
  %m = reduce_max(%a) {axes = [1], keep_dims = true}
  %d = sub(%a, %m)
  %e = exp(%d)
  %s = reduce_sum(%e) {axes = [1], keep_dims = true}
  %y = div(%e, %s)
  return %y
})",
                    "recognize-softmax,dce");
}

TEST(RecognizeSoftmaxTest, LeavesOtherChainsAlone) {
  const std::string chains[] = {
      // bf16 rounds every exp: the op would not.
      WrittenOut("bf16", "-1"),
      // Two axes; a max not kept (reshaped back).
      WrittenOut("f32", "1, 2"),
      R"(
graph @g(%x: f32[3, 7]) -> f32[3, 7] {
  %m = reduce_max(%x) {axes = [-1]}
  %m2 = reshape(%m) {shape = [3, 1]}
  %d = sub(%x, %m2)
  %e = exp(%d)
  %s = reduce_sum(%e) {axes = [-1], keep_dims = true}
  %y = div(%e, %s)
  return %y
})",
      // The max over one axis, the sum over another.
      absl::StrReplaceAll(WrittenOut("f32", "-1"),
                          {{"%s = reduce_sum(%e) {axes = [-1]",
                            "%s = reduce_sum(%e) {axes = [1]"}}),
      // No max subtracted (it overflows where softmax does not).
      R"(
graph @g(%x: f32[3, 7]) -> f32[3, 7] {
  %e = exp(%x)
  %s = reduce_sum(%e) {axes = [-1], keep_dims = true}
  %y = div(%e, %s)
  return %y
})",
      // The max of another tensor.
      R"(
graph @g(%x: f32[3, 7], %w: f32[3, 7]) -> f32[3, 7] {
  %m = reduce_max(%w) {axes = [-1], keep_dims = true}
  %d = sub(%x, %m)
  %e = exp(%d)
  %s = reduce_sum(%e) {axes = [-1], keep_dims = true}
  %y = div(%e, %s)
  return %y
})",
      // The sum of another exp.
      R"(
graph @g(%x: f32[3, 7], %w: f32[3, 7]) -> f32[3, 7] {
  %m = reduce_max(%x) {axes = [-1], keep_dims = true}
  %d = sub(%x, %m)
  %e = exp(%d)
  %f = exp(%w)
  %s = reduce_sum(%f) {axes = [-1], keep_dims = true}
  %y = div(%e, %s)
  return %y
})",
  };
  for (const std::string& text : chains) {
    Module m = Parse(text);
    absl::StatusOr<int> n = RecognizeSoftmaxes(m);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, 0) << text;
  }
}

TEST(RecognizeSoftmaxTest, LeavesTheExpToItsOtherUsers) {
  Module m = Parse(R"(
graph @g(%x: f32[3, 7]) -> (f32[3, 7], f32[3, 7]) {
  %m = reduce_max(%x) {axes = [-1], keep_dims = true}
  %d = sub(%x, %m)
  %e = exp(%d)
  %s = reduce_sum(%e) {axes = [-1], keep_dims = true}
  %y = div(%e, %s)
  return %y, %e
})");
  ASSERT_TRUE(RunPipeline(m, "recognize-softmax,dce").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(CountOps(g, "softmax"), 1);
  EXPECT_EQ(CountOps(g, "exp"), 1);
  EXPECT_EQ(CountOps(g, "div"), 0);
}

}  // namespace
}  // namespace hgc
