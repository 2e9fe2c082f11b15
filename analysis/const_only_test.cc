#include "analysis/const_only.h"

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

TEST(ConstOnlyTest, FollowsConstParamsAndLiterals) {
  Module m = pass_test::Parse(R"(
graph @g(%x: f32[4, 4], %w: f32[4, 4] const, %s: f32[4] const) -> f32[4, 4] {
  %c = constant() {value = 2.0} : f32[]
  %ws = mul(%w, %c)
  %wt = transpose(%ws)
  %sc = add(%s, %c)
  %y = matmul(%x, %wt)
  %z = add(%y, %sc)
  return %z
}
)");
  const Graph& g = *m.graphs()[0];
  absl::flat_hash_set<const Op*> ops = ConstOnlyOps(g);
  std::vector<std::string> names;
  for (const auto& op : g.ops()) {
    if (ops.contains(op.get())) names.push_back(op->result(0)->name());
  }
  // The literal itself is not listed; x-dependent ops are not const-only.
  EXPECT_EQ(names, (std::vector<std::string>{"ws", "wt", "sc"}));
  ConstOnlyAnalysis analysis(g);
  EXPECT_TRUE(analysis.IsConstOnly(g.param(1)));
  EXPECT_FALSE(analysis.IsConstOnly(g.param(0)));
  EXPECT_TRUE(analysis.IsConstOnly(g.ops().front()->result(0)));
  EXPECT_FALSE(analysis.IsConstOnly(g.results()[0]));
}

TEST(ConstOnlyTest, NothingConstInAGraphWithoutConstants) {
  Module m = pass_test::Parse(R"(
graph @g(%x: f32[4]) -> f32[4] {
  %y = relu(%x)
  return %y
}
)");
  EXPECT_TRUE(ConstOnlyOps(*m.graphs()[0]).empty());
}

}  // namespace
}  // namespace hgc
