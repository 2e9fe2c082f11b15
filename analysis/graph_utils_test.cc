#include "analysis/graph_utils.h"

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::Parse;

TEST(UseInfoTest, CountsOperandAndReturnSlots) {
  Module m = Parse(R"(
graph @g(%x: f32[4]) -> (f32[4], f32[4]) {
  %a = relu(%x)
  %b = add(%a, %a)
  %c = neg(%a)
  return %b, %b
}
)");
  const Graph& g = *m.graphs()[0];
  UseInfo uses(g);
  const Value* a = g.ops().front()->result(0);
  const Value* b = (*std::next(g.ops().begin()))->result(0);
  EXPECT_EQ(uses.NumUses(a), 3);
  EXPECT_EQ(uses.Users(a).size(), 2u);  // distinct ops: add, neg
  EXPECT_FALSE(uses.OnlyUsedBy(a, b->defining_op()));
  EXPECT_EQ(uses.NumUses(b), 2);
  EXPECT_TRUE(uses.IsReturned(b));
  EXPECT_TRUE(uses.IsDead(*g.ops().back()));
  EXPECT_TRUE(uses.Users(g.param(0)).size() == 1);
}

TEST(WalkBackChainTest, BacktracksToTheEndThroughSingleUseValues) {
  Module m = Parse(R"(
graph @g(%x: f32[4], %y: f32[4]) -> f32[4] {
  %e = exp(%x)
  %n = neg(%y)
  %a = add(%n, %e)
  %r = relu(%a)
  return %r
}
)");
  const Graph& g = *m.graphs()[0];
  UseInfo uses(g);
  Op* relu = g.ops().back().get();
  auto is_exp = [](const Op& op) { return op.kind() == "exp"; };
  auto any_operand = [](const Op& op) {
    std::vector<int> all;
    for (int i = 0; i < op.num_operands(); ++i) all.push_back(i);
    return all;
  };
  // add's operand 0 leads to neg and a parameter; operand 1 to exp.
  std::optional<std::vector<ChainLink>> chain = WalkBackChain(
      uses, relu->operand(0), relu, is_exp, any_operand);
  ASSERT_TRUE(chain.has_value());
  ASSERT_EQ(chain->size(), 2u);
  EXPECT_EQ((*chain)[0].op->kind(), "exp");
  EXPECT_EQ((*chain)[0].operand, -1);
  EXPECT_EQ((*chain)[1].op->kind(), "add");
  EXPECT_EQ((*chain)[1].operand, 1);
  // No chain when the walk may not take the operand, or is too short.
  auto first_only = [](const Op&) { return std::vector<int>{0}; };
  EXPECT_FALSE(WalkBackChain(uses, relu->operand(0), relu, is_exp, first_only)
                   .has_value());
  EXPECT_FALSE(WalkBackChain(uses, relu->operand(0), relu, is_exp,
                             any_operand, /*max_depth=*/1)
                   .has_value());
  // A value read twice breaks the chain.
  Module twice = Parse(R"(
graph @g(%x: f32[4]) -> (f32[4], f32[4]) {
  %e = exp(%x)
  %a = add(%e, %e)
  return %a, %e
}
)");
  const Graph& t = *twice.graphs()[0];
  UseInfo t_uses(t);
  Op* add = t.ops().back().get();
  EXPECT_FALSE(WalkBackChain(t_uses, add->operand(0), add, is_exp, any_operand)
                   .has_value());
}

TEST(ValueReplacerTest, ResolvesChainsAndRemaps) {
  Module m = Parse(R"(
graph @g(%x: f32[4]) -> f32[4] {
  %a = relu(%x)
  %b = relu(%a)
  %c = neg(%b)
  return %c
}
)");
  Graph& g = *m.graphs()[0];
  std::vector<Op*> ops = g.OpsSnapshot();
  ValueReplacer r;
  r.Replace(ops[1]->result(0), ops[0]->result(0));  // b -> a
  r.Replace(ops[0]->result(0), g.param(0));         // a -> x
  EXPECT_EQ(r.Resolve(ops[1]->result(0)), g.param(0));
  EXPECT_TRUE(r.RemapOperands(*ops[2]));
  EXPECT_EQ(ops[2]->operand(0), g.param(0));
  EXPECT_FALSE(r.RemapResults(g));
  EXPECT_EQ(EraseDeadOps(g), 2);
  EXPECT_EQ(g.ops().size(), 1u);
}

TEST(SplatValueTest, OnlyUniformNumbersRoundedToTheDType) {
  Module m = Parse(R"(
graph @g() -> (f32[2], f32[2], bf16[], bool[], f32[0]) {
  %a = constant() {value = [1.5, 1.5]} : f32[2]
  %b = constant() {value = [1.0, 2.0]} : f32[2]
  %c = constant() {value = 1.00001} : bf16[]
  %d = constant() {value = true} : bool[]
  %e = constant() {value = []} : f32[0]
  return %a, %b, %c, %d, %e
}
)");
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(SplatValue(g.results()[0]), 1.5);
  EXPECT_FALSE(SplatValue(g.results()[1]).has_value());
  EXPECT_EQ(SplatValue(g.results()[2]), 1.0);  // bf16 rounds to 1
  EXPECT_FALSE(SplatValue(g.results()[3]).has_value());
  EXPECT_FALSE(SplatValue(g.results()[4]).has_value());
  EXPECT_EQ(LiteralConstantOp(g.results()[0]), g.ops().front().get());
}

TEST(GraphUtilsTest, FindsBodiesAndTopLevelGraphsAndFreshNames) {
  Module m = Parse(R"(
graph @g(%x: f32[4], %w: f32[4] const) -> f32[4] {
  %f = fusion(%x, %w) {body = @h, kind = "elementwise"} : f32[4]
  return %f
}
graph @h(%a: f32[4], %b: f32[4] const) -> f32[4] {
  %0 = add(%a, %b)
  return %0
}
)");
  absl::flat_hash_set<const Graph*> bodies = FusionBodies(m);
  EXPECT_EQ(bodies.size(), 1u);
  EXPECT_TRUE(bodies.contains(m.FindGraph("h")));
  EXPECT_EQ(TopLevelGraphs(m), std::vector<Graph*>{m.FindGraph("g")});
  int next = 0;
  EXPECT_EQ(FreshGraphName(m, "g_fused", &next), "g_fused_0");
  m.AddGraph("g_fused_1");
  EXPECT_EQ(FreshGraphName(m, "g_fused", &next), "g_fused_2");
}

}  // namespace
}  // namespace hgc
