#include "analysis/memory_budget.h"

#include "gtest/gtest.h"
#include "passes/test_util.h"
#include "support/diagnostics.h"

namespace hgc {
namespace {

TEST(MemoryBudgetTest, CountsArenaConstantsInputsAndOutputs) {
  Module m = pass_test::Parse(R"(
graph @g(%x: f32[4, 4], %w: f32[4, 4] const) -> f32[4, 4] {
  %c = constant() {value = 2.0} : f32[]
  %ws = mul(%w, %c)
  %y = matmul(%x, %ws)
  %z = relu(%y)
  return %z
}
)");
  MemoryEstimate e = EstimateMemory(*m.graphs()[0]);
  EXPECT_EQ(e.param_bytes, 2 * 64);
  EXPECT_EQ(e.result_bytes, 64);
  EXPECT_EQ(e.constant_bytes, 4 + 64);  // %c and %ws
  EXPECT_GE(e.arena_bytes, 64);         // %y
  EXPECT_EQ(e.total(),
            e.param_bytes + e.result_bytes + e.constant_bytes + e.arena_bytes);
  EXPECT_TRUE(CheckMemoryBudget(*m.graphs()[0]).ok());
}

TEST(MemoryBudgetTest, CountsLiteralTablesInFusionBodies) {
  Module m = pass_test::Parse(R"(
graph @g(%x: f32[2, 3, 8]) -> f32[2, 3, 8] {
  %y = fusion(%x) {body = @g_fused_0, kind = "elementwise"} : f32[2, 3, 8]
  return %y
}

graph @g_fused_0(%x: f32[2, 3, 8]) -> f32[2, 3, 8] {
  %t = constant() {value = [1.0, 2.0, 3.0]} : f32[1, 3, 1]
  %s = constant() {value = 0.5} : f32[1, 3, 1]
  %a = mul(%x, %t)
  %b = add(%a, %s)
  return %b
}
)");
  MemoryEstimate e = EstimateMemory(*m.graphs()[0]);
  EXPECT_EQ(e.constant_bytes, 12);  // %t; the splat %s needs no slot
}

TEST(MemoryBudgetTest, RefusesAGraphLargerThanTheMachine) {
  // Every tensor is under the per-tensor cap; together they are 2 PiB.
  std::string text = "graph @big(%x: f32[16384, 65536]) -> (";
  std::string body, results;
  for (int i = 0; i < 512; ++i) {
    text += i ? ", f32[16384, 65536]" : "f32[16384, 65536]";
    absl::StrAppend(&body, "  %y", i, " = ", i % 2 ? "neg" : "relu", "(%x)\n");
    absl::StrAppend(&results, i ? ", " : "", "%y", i);
  }
  text += ") {\n" + body + "  return " + results + "\n}\n";
  Module m = pass_test::Parse(text);
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(EstimateMemory(g).result_bytes, int64_t{512} << 32);
  absl::Status s = CheckMemoryBudget(g);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message().rfind("@big needs 2052.0 GiB (arena 0 bytes, "
                              "constants 0 bytes, inputs 4.0 GiB, outputs "
                              "2048.0 GiB), but only ",
                              0),
            0u)
      << s;
  EXPECT_TRUE(GetLoc(s).has_value());  // at the graph's declaration
}

}  // namespace
}  // namespace hgc
