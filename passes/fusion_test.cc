// Grouping rules and outlining edge cases; behaviour tests are in
// testdata/passes/fusion/.
#include "passes/fusion.h"

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::CountOps;
using pass_test::ExpectSameNumbers;
using pass_test::Parse;
using pass_test::RunPipeline;

// Kinds and sizes of the groups of the first graph.
std::vector<std::string> Groups(const std::string& text,
                                FusionOptions options = {}) {
  Module m = Parse(text);
  std::vector<std::string> out;
  for (const FusionGroup& g : FormFusionGroups(*m.graphs()[0], options)) {
    out.push_back(absl::StrCat(FusionKindName(g.kind), ":", g.ops.size()));
  }
  return out;
}

TEST(FusionRulesTest, MatmulTakesItsPostOps) {
  EXPECT_EQ(Groups(R"(
graph @g(%x: f32[4, 8], %w: f32[8, 16], %b: f32[16], %r: f32[4, 16]) -> f32[4, 16] {
  %0 = matmul(%x, %w)
  %1 = add(%0, %b)
  %2 = gelu(%1)
  %3 = add(%2, %r)
  %4 = cast(%3) {to = bf16}
  %5 = cast(%4) {to = f32}
  return %5
}
)"),
            std::vector<std::string>{"matmul:6"});
}

TEST(FusionRulesTest, SharedIntermediatesEndAGroup) {
  // %0 feeds two ops, so neither joins the matmul; they form their own.
  EXPECT_EQ(Groups(R"(
graph @g(%x: f32[4, 8], %w: f32[8, 16]) -> f32[4, 16] {
  %0 = matmul(%x, %w)
  %1 = sigmoid(%0)
  %2 = mul(%0, %1)
  return %2
}
)"),
            (std::vector<std::string>{"matmul:1", "elementwise:2"}));
}

TEST(FusionRulesTest, BroadcastGrowthEndsAGroup) {
  EXPECT_EQ(Groups(R"(
graph @g(%x: f32[4], %y: f32[3, 4]) -> f32[3, 4] {
  %0 = exp(%x)
  %1 = add(%0, %y)
  %2 = neg(%1)
  return %2
}
)"),
            (std::vector<std::string>{"elementwise:1", "elementwise:2"}));
}

TEST(FusionRulesTest, RowOpsTakeProducersAndConsumers) {
  EXPECT_EQ(Groups(R"(
graph @g(%x: f32[4, 8], %g: f32[8], %b: f32[8]) -> (f32[4, 8], f32[4]) {
  %0 = mul(%x, %x)
  %1 = reduce_mean(%0) {axes = [1]}
  %2 = sqrt(%1)
  %3 = exp(%x)
  %4 = layernorm(%3, %g, %b)
  %5 = relu(%4)
  return %5, %2
}
)"),
            (std::vector<std::string>{"reduce:3", "layernorm:3"}));
}

TEST(FusionRulesTest, ReductionsThatStandAloneGroupWithNothing) {
  // Integer reductions and reductions over leading axes are steps of their
  // own: their producers and consumers stay elementwise groups.
  EXPECT_EQ(
      Groups(R"(
graph @g(%m: bool[4, 8]) -> s32[4] {
  %0 = cast(%m) {to = s32}
  %1 = reduce_sum(%0) {axes = [1]}
  %2 = neg(%1)
  return %2
}
)"),
      (std::vector<std::string>{"elementwise:1", "reduce:1", "elementwise:1"}));
  EXPECT_EQ(
      Groups(R"(
graph @g(%h: f32[2, 5, 8], %m: f32[2, 5, 1]) -> f32[2, 8] {
  %0 = mul(%h, %m)
  %1 = reduce_sum(%0) {axes = [1]}
  %2 = exp(%1)
  return %2
}
)"),
      (std::vector<std::string>{"elementwise:1", "reduce:1", "elementwise:1"}));
  // Over trailing axes a float reduction takes both.
  EXPECT_EQ(Groups(R"(
graph @g(%h: f32[2, 5, 8]) -> f32[2] {
  %0 = exp(%h)
  %1 = reduce_sum(%0) {axes = [2, 1]}
  %2 = sqrt(%1)
  return %2
}
)"),
            (std::vector<std::string>{"reduce:3"}));
}

TEST(FusionRulesTest, ConstOnlyWorkIsNotMixedIn) {
  // cast(%w) is const-only: its own group, not pulled into the matmul.
  EXPECT_EQ(Groups(R"(
graph @g(%x: bf16[4, 8], %w: f32[8, 16] const, %s: f32[16] const) -> f32[4, 16] {
  %wb = cast(%w) {to = bf16}
  %0 = matmul(%x, %wb)
  %1 = cast(%0) {to = f32}
  %2 = mul(%1, %s)
  return %2
}
)"),
            (std::vector<std::string>{"elementwise:1", "matmul:3"}));
  // A const-only group does not swallow a per-execution consumer.
  EXPECT_EQ(Groups(R"(
graph @g(%x: f32[16], %s: f32[16] const) -> f32[16] {
  %e = exp(%s)
  %y = add(%e, %x)
  return %y
}
)"),
            (std::vector<std::string>{"elementwise:1", "elementwise:1"}));
}

TEST(FusionRulesTest, MaxOpsSplitsLongChains) {
  FusionOptions options;
  options.max_ops = 2;
  EXPECT_EQ(Groups(R"(
graph @g(%x: f32[4]) -> f32[4] {
  %0 = exp(%x)
  %1 = neg(%0)
  %2 = abs(%1)
  return %2
}
)",
                   options),
            (std::vector<std::string>{"elementwise:2", "elementwise:1"}));
}

TEST(FusionTest, OutlinesWithExternalsInFirstUseOrder) {
  Module m = Parse(R"(
graph @g(%b: f32[16] const, %x: f32[4, 8], %w: f32[8, 16] const) -> f32[4, 16] {
  %half = constant() {value = 0.5} : f32[]
  %0 = matmul(%x, %w)
  %1 = add(%0, %b)
  %2 = mul(%1, %half)
  return %2
}
)");
  ASSERT_TRUE(RunPipeline(m, "fusion").ok());
  std::string out = PrintModule(m);
  EXPECT_NE(out.find("%2 = fusion(%x, %w, %b) {body = @g_fused_0, kind = "
                     "\"matmul\"} : f32[4, 16]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("graph @g_fused_0(%x: f32[4, 8], %w: f32[8, 16] const, "
                     "%b: f32[16] const) -> f32[4, 16] {"),
            std::string::npos)
      << out;
  // The scalar constant was copied into the body; the original is gone.
  EXPECT_EQ(CountOps(*m.FindGraph("g"), "constant"), 0);
  EXPECT_EQ(CountOps(*m.FindGraph("g_fused_0"), "constant"), 1);
}

TEST(FusionTest, IsIdempotentAndKeepsNumbers) {
  const char* text = R"(
graph @g(%x: f32[4, 8], %w: f32[8, 8], %y: f32[4, 8]) -> f32[4, 8] {
  %0 = matmul(%x, %w)
  %1 = tanh(%0)
  %2 = softmax(%1)
  %3 = exp(%y)
  %4 = add(%2, %3)
  return %4
}
)";
  Module m = Parse(text);
  ASSERT_TRUE(RunPipeline(m, "fusion").ok());
  std::string once = PrintModule(m);
  ASSERT_TRUE(RunPipeline(m, "fusion").ok());
  EXPECT_EQ(PrintModule(m), once);
  ExpectSameNumbers(text, "fusion");
}

TEST(FusionTest, NeedsAModule) {
  Graph g("g");
  EXPECT_EQ(FuseGraph(g, {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace hgc
