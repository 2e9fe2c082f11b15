#include "passes/dce.h"

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

TEST(DceTest, ErasesDeadChainsAndOrphanedBodies) {
  Module m = pass_test::Parse(R"(
graph @g(%x: f32[4]) -> f32[4] {
  %dead = fusion(%x) {body = @g_body, kind = "elementwise"} : f32[4]
  %d2 = neg(%dead)
  %y = relu(%x)
  return %y
}
graph @g_body(%a: f32[4]) -> f32[4] {
  %f = fusion(%a) {body = @inner, kind = "elementwise"} : f32[4]
  return %f
}
graph @inner(%a: f32[4]) -> f32[4] {
  %0 = exp(%a)
  return %0
}
graph @unrelated(%a: f32[4]) -> f32[4] {
  %0 = exp(%a)
  %1 = exp(%a)
  return %0
}
)");
  // 2 ops of @g, 1 of @unrelated, and both bodies.
  EXPECT_EQ(EliminateDeadCode(m), 5);
  EXPECT_EQ(m.graphs().size(), 2u);
  EXPECT_EQ(m.FindGraph("inner"), nullptr);
  EXPECT_NE(m.FindGraph("unrelated"), nullptr);  // nothing called it
  EXPECT_EQ(EliminateDeadCode(m), 0);
}

TEST(DceTest, KeepsBodiesThatAreStillCalled) {
  Module m = pass_test::Parse(R"(
graph @g(%x: f32[4]) -> f32[4] {
  %a = fusion(%x) {body = @b, kind = "elementwise"} : f32[4]
  %dead = fusion(%x) {body = @b, kind = "elementwise"} : f32[4]
  return %a
}
graph @b(%a: f32[4]) -> f32[4] {
  %0 = exp(%a)
  return %0
}
)");
  EXPECT_EQ(EliminateDeadCode(m), 1);
  EXPECT_NE(m.FindGraph("b"), nullptr);
}

}  // namespace
}  // namespace hgc
