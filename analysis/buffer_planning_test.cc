#include "analysis/buffer_planning.h"

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::Parse;

TEST(BufferPlanningTest, AChainNeedsTwoBuffers) {
  // f32[16, 16] is 1 KiB; a chain of 5 ops has 4 intermediates (the last is
  // returned) but never more than 2 alive at once.
  Module m = Parse(R"(
graph @g(%x: f32[16, 16]) -> f32[16, 16] {
  %a = relu(%x)
  %b = neg(%a)
  %c = exp(%b)
  %d = abs(%c)
  %e = neg(%d)
  return %e
}
)");
  BufferPlan plan = PlanBuffers(*m.graphs()[0]);
  EXPECT_EQ(plan.sum_of_intermediates, 4 * 1024);
  EXPECT_EQ(plan.arena_size, 2 * 1024);
  EXPECT_EQ(plan.offsets.size(), 4u);
  EXPECT_TRUE(ValidateBufferPlan(plan).ok());
}

TEST(BufferPlanningTest, LongLivedValuesAndAlignment) {
  // %a lives until the end; %b..%d reuse one slot beside it. f32[3] is 12
  // bytes, rounded up to 64.
  Module m = Parse(R"(
graph @g(%x: f32[3], %w: f32[3] const) -> f32[3] {
  %a = relu(%x)
  %b = neg(%x)
  %c = exp(%b)
  %d = abs(%c)
  %k = mul(%w, %w)
  %e = add(%a, %d)
  %f = add(%e, %k)
  return %f
}
)");
  const Graph& g = *m.graphs()[0];
  BufferPlan plan = PlanBuffers(g);
  // Intermediates: a, b, c, d, e (k is const-only: constant cache).
  EXPECT_EQ(plan.offsets.size(), 5u);
  EXPECT_EQ(plan.sum_of_intermediates, 5 * 64);
  EXPECT_EQ(plan.arena_size, 3 * 64);
  for (const auto& [v, off] : plan.offsets) EXPECT_EQ(off % 64, 0);
  EXPECT_TRUE(ValidateBufferPlan(plan).ok());
}

TEST(BufferPlanningTest, SmallerBuffersFillGapsBelowLargerOnes) {
  // %a and %b (1 KiB each) overlap at %b's definition, so %b goes above %a;
  // %c (512 B) overlaps only %b and fits in the gap %a left at offset 0.
  Module m = Parse(R"(
graph @g(%x: f32[2, 128]) -> f32[128] {
  %a = relu(%x)
  %b = neg(%a)
  %c = reduce_sum(%b) {axes = [0]}
  %d = neg(%c)
  return %d
}
)");
  const Graph& g = *m.graphs()[0];
  BufferPlan plan = PlanBuffers(g);
  std::vector<Op*> ops = g.OpsSnapshot();
  EXPECT_EQ(plan.offsets.at(ops[0]->result(0)), 0);
  EXPECT_EQ(plan.offsets.at(ops[1]->result(0)), 1024);
  EXPECT_EQ(plan.offsets.at(ops[2]->result(0)), 0);
  EXPECT_EQ(plan.arena_size, 2048);
  EXPECT_EQ(plan.sum_of_intermediates, 2560);
  EXPECT_TRUE(ValidateBufferPlan(plan).ok());
}

TEST(BufferPlanningTest, ValidateCatchesOverlaps) {
  Module m = Parse(R"(
graph @g(%x: f32[16]) -> f32[16] {
  %a = relu(%x)
  %b = neg(%x)
  %c = add(%a, %b)
  return %c
}
)");
  BufferPlan plan = PlanBuffers(*m.graphs()[0]);
  ASSERT_TRUE(ValidateBufferPlan(plan).ok());
  for (auto& [v, off] : plan.offsets) off = 0;
  EXPECT_EQ(ValidateBufferPlan(plan).code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace hgc
