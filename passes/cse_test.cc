#include "passes/cse.h"

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

TEST(CseTest, DefaultAttributesCountAsAbsent) {
  Module m = pass_test::Parse(R"(
graph @g(%x: f32[4, 4]) -> (f32[4, 4], f32[4, 4], f32[4, 4]) {
  %a = matmul(%x, %x)
  %b = matmul(%x, %x) {transpose_a = false}
  %c = matmul(%x, %x) {transpose_a = true}
  return %a, %b, %c
}
)");
  EXPECT_EQ(EliminateCommonSubexpressions(*m.graphs()[0]), 1);
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(g.results()[0], g.results()[1]);
  EXPECT_NE(g.results()[0], g.results()[2]);
}

TEST(CseTest, MergesTransitivelyInOneSweep) {
  Module m = pass_test::Parse(R"(
graph @g(%x: f32[4]) -> (f32[4], f32[4]) {
  %c1 = constant() {value = 2.0} : f32[]
  %c2 = constant() {value = 2.0} : f32[]
  %a = mul(%x, %c1)
  %b = mul(%x, %c2)
  %e = exp(%a)
  %f = exp(%b)
  return %e, %f
}
)");
  EXPECT_EQ(EliminateCommonSubexpressions(*m.graphs()[0]), 3);
  EXPECT_EQ(m.graphs()[0]->ops().size(), 3u);
}

TEST(CseTest, DifferentTypesOrOperandOrderStayApart) {
  Module m = pass_test::Parse(R"(
graph @g(%x: f32[4], %y: f32[4]) -> (f32[4], f32[4], f32[], bf16[]) {
  %a = sub(%x, %y)
  %b = sub(%y, %x)
  %c = constant() {value = 1.0} : f32[]
  %d = constant() {value = 1.0} : bf16[]
  return %a, %b, %c, %d
}
)");
  EXPECT_EQ(EliminateCommonSubexpressions(*m.graphs()[0]), 0);
}

}  // namespace
}  // namespace hgc
