// recognize-softmax: which written-out softmaxes become softmax ops, which
// stay, and that the numbers agree.
#include "passes/recognize_softmax.h"

#include <string>
#include <utility>

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
  const std::string f32 = WrittenOut("f32", "-1");
  // The f32 chain with `from` replaced by `to`, and a second input %w.
  auto changed = [&](const std::string& from, const std::string& to) {
    return absl::StrReplaceAll(
        f32, {{from, to},
              {"(%x: f32[3, 5, 7])", "(%x: f32[3, 5, 7], %w: f32[3, 5, 7])"}});
  };
  const std::string chains[] = {
      // bf16 rounds every exp: the op would not.
      WrittenOut("bf16", "-1"),
      // Two axes.
      WrittenOut("f32", "1, 2"),
      // The max over one axis, the sum over another.
      changed("%s = reduce_sum(%e) {axes = [-1]",
              "%s = reduce_sum(%e) {axes = [1]"),
      // No max subtracted (it overflows where softmax does not).
      changed("%e = exp(%d)", "%e = exp(%x)"),
      // The max of another tensor.
      changed("reduce_max(%x)", "reduce_max(%w)"),
      // The sum of another exp.
      changed("%s = reduce_sum(%e)", "%f = exp(%w)\n  %s = reduce_sum(%f)"),
  };
  for (const std::string& text : chains) {
    Module m = Parse(text);
    absl::StatusOr<int> n = RecognizeSoftmaxes(m);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, 0) << text;
  }
}

// ONNX before opset 18 with keepdims = 0: the reductions drop the axis and
// Unsqueeze (a reshape) puts it back.
constexpr char kNotKept[] = R"(
graph @g(%x: f32[3, 5, 7]) -> f32[3, 5, 7] {
  %m = reduce_max(%x) {axes = [2]}
  %mu = reshape(%m) {shape = [3, 5, 1]}
  %d = sub(%x, %mu)
  %e = exp(%d)
  %s = reduce_sum(%e) {axes = [-1]}
  %su = reshape(%s) {shape = [3, 5, -1]}
  %y = div(%e, %su)
  return %y
})";

TEST(RecognizeSoftmaxTest, TakesReductionsReshapedBackToTheKeptShape) {
  Module m = Parse(kNotKept);
  ASSERT_TRUE(RunPipeline(m, "recognize-softmax,dce").ok());
  const Graph& g = *m.graphs()[0];
  ASSERT_EQ(g.ops().size(), 1u);
  const Op& softmax = *g.ops().front();
  ASSERT_EQ(softmax.kind(), "softmax");
  EXPECT_EQ(softmax.FindAttr("axis")->as_int(), -1);
  EXPECT_EQ(softmax.result()->name(), "y");
  ExpectSameNumbers(kNotKept, "recognize-softmax,dce");
  // An inner axis, and a max kept then reshaped (to the same shape by a
  // rank-changing round trip).
  const std::string inner = R"(
graph @g(%x: f32[3, 5, 7]) -> f32[3, 5, 7] {
  %m = reduce_max(%x) {axes = [1], keep_dims = true}
  %m2 = reshape(%m) {shape = [21]}
  %mu = reshape(%m2) {shape = [3, 1, 7]}
  %d = sub(%x, %mu)
  %e = exp(%d)
  %s = reduce_sum(%e) {axes = [1]}
  %su = reshape(%s) {shape = [3, 1, 7]}
  %y = div(%e, %su)
  return %y
})";
  Module m2 = Parse(inner);
  absl::StatusOr<int> n = RecognizeSoftmaxes(m2);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 1);
  ExpectSameNumbers(inner, "recognize-softmax,dce");
}

TEST(RecognizeSoftmaxTest, TakesReductionsThatBroadcastAsKept) {
  // Over the first axis (or after leading 1s), the reduction without
  // keep_dims broadcasts as the kept one does.
  const std::string text = R"(
graph @g(%x: f32[1, 6, 4]) -> f32[1, 6, 4] {
  %m = reduce_max(%x) {axes = [1]}
  %d = sub(%x, %m)
  %e = exp(%d)
  %s = reduce_sum(%e) {axes = [1]}
  %y = div(%e, %s)
  return %y
})";
  Module m = Parse(text);
  ASSERT_TRUE(RunPipeline(m, "recognize-softmax,dce").ok());
  const Graph& g = *m.graphs()[0];
  ASSERT_EQ(g.ops().size(), 1u);
  EXPECT_EQ(g.ops().front()->FindAttr("axis")->as_int(), 1);
  ExpectSameNumbers(text, "recognize-softmax,dce");
}

TEST(RecognizeSoftmaxTest, LeavesReductionsThatBroadcastOtherwise) {
  // Over the last axis of a square matrix, the reduction without keep_dims
  // (or reshaped to [1, 4]) broadcasts along the rows instead: max(x[j, :])
  // is subtracted from column j. Not a softmax.
  const std::string square = R"(
graph @g(%x: f32[4, 4]) -> f32[4, 4] {
  %m = reduce_max(%x) {axes = [1]}
  %mu = reshape(%m) {shape = [MAX_SHAPE]}
  %d = sub(%x, %mu)
  %e = exp(%d)
  %s = reduce_sum(%e) {axes = [1]}
  %su = reshape(%s) {shape = [SUM_SHAPE]}
  %y = div(%e, %su)
  return %y
})";
  const std::pair<const char*, const char*> shapes[] = {
      {"4", "4"}, {"1, 4", "4, 1"}, {"4, 1", "1, 4"}};
  for (const auto& [max_shape, sum_shape] : shapes) {
    const std::string text = absl::StrReplaceAll(
        square, {{"MAX_SHAPE", max_shape}, {"SUM_SHAPE", sum_shape}});
    Module m = Parse(text);
    absl::StatusOr<int> n = RecognizeSoftmaxes(m);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, 0) << text;
  }
  // Both reshaped to [4, 1]: the softmax.
  Module m = Parse(absl::StrReplaceAll(
      square, {{"MAX_SHAPE", "4, 1"}, {"SUM_SHAPE", "4, 1"}}));
  absl::StatusOr<int> n = RecognizeSoftmaxes(m);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 1);
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
