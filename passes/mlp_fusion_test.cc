#include "passes/mlp_fusion.h"

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::ExpectSameNumbers;
using pass_test::Parse;
using pass_test::RunPipeline;

constexpr char kThreeLayers[] = R"(
graph @mlp(%x: f32[32, 64], %w0: f32[64, 128] const, %b0: f32[128] const,
           %w1: f32[128, 128] const, %w2: f32[128, 8] const) -> f32[32, 8] {
  %0 = matmul(%x, %w0)
  %1 = add(%0, %b0)
  %2 = relu(%1)
  %3 = matmul(%2, %w1)
  %4 = relu(%3)
  %5 = matmul(%4, %w2)
  return %5
}
)";

TEST(MlpFusionTest, MergesAChainIntoOneGroup) {
  Module m = Parse(kThreeLayers);
  ASSERT_TRUE(RunPipeline(m, "fusion,mlp-fusion").ok());
  const Graph& g = *m.FindGraph("mlp");
  ASSERT_EQ(g.ops().size(), 1u);
  const Op& f = *g.ops().front();
  EXPECT_EQ(f.FindAttr("kind")->as_string(), "mlp");
  EXPECT_EQ(f.num_operands(), 5);
  EXPECT_EQ(m.graphs().size(), 2u);  // the merged bodies are gone
  EXPECT_EQ(m.FindGraph(f.FindAttr("body")->as_symbol())->ops().size(), 6u);
  ExpectSameNumbers(kThreeLayers, "fusion,mlp-fusion");
}

TEST(MlpFusionTest, ThresholdIsPerIntermediate) {
  // The intermediates are 32x128 floats = 16 KiB.
  Module m = Parse(kThreeLayers);
  ASSERT_TRUE(
      RunPipeline(m, "fusion,mlp-fusion{max-intermediate-bytes=16383}").ok());
  EXPECT_EQ(m.FindGraph("mlp")->ops().size(), 3u);
  Module exact = Parse(kThreeLayers);
  ASSERT_TRUE(
      RunPipeline(exact, "fusion,mlp-fusion{max-intermediate-bytes=16384}")
          .ok());
  EXPECT_EQ(exact.FindGraph("mlp")->ops().size(), 1u);
}

TEST(MlpFusionTest, SharedOrTransposedInputsStopTheMerge) {
  Module m = Parse(R"(
graph @g(%x: f32[8, 8], %w: f32[8, 8] const) -> (f32[8, 8], f32[8, 8]) {
  %0 = matmul(%x, %w)
  %1 = matmul(%0, %w)
  %2 = matmul(%0, %w) {transpose_a = true}
  return %1, %2
}
)");
  ASSERT_TRUE(RunPipeline(m, "fusion,mlp-fusion").ok());
  EXPECT_EQ(m.FindGraph("g")->ops().size(), 3u);
  Module transposed = Parse(R"(
graph @g(%x: f32[8, 8], %w: f32[8, 8] const) -> f32[8, 8] {
  %0 = matmul(%x, %w)
  %1 = matmul(%0, %w) {transpose_a = true}
  return %1
}
)");
  ASSERT_TRUE(RunPipeline(transposed, "fusion,mlp-fusion").ok());
  EXPECT_EQ(transposed.FindGraph("g")->ops().size(), 2u);
  // A weight both layers read becomes one operand.
  Module shared = Parse(R"(
graph @g(%x: f32[4, 8], %w: f32[8, 8] const) -> f32[4, 8] {
  %0 = matmul(%x, %w)
  %1 = matmul(%0, %w)
  return %1
}
)");
  ASSERT_TRUE(RunPipeline(shared, "fusion,mlp-fusion").ok());
  EXPECT_EQ(shared.FindGraph("g")->ops().front()->num_operands(), 2);
}

}  // namespace
}  // namespace hgc
