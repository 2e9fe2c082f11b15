// attention-k-scale: which K scales move onto the scores, that the values
// stay within tolerance, and that the block then fuses with the scale in
// its score ops; the golden file is testdata/attention/sdpa_export.graph.
#include "passes/attention_k_scale.h"

#include <string>

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::CountOps;
using pass_test::ExpectSameNumbers;
using pass_test::Parse;
using pass_test::RunPipeline;

// torch's SDPA decomposition: sqrt(scale) on Q and on Kᵀ.
constexpr char kSdpa[] = R"(
graph @sdpa(%q: f32[2, 3, 9, 8], %k: f32[2, 3, 11, 8], %v: f32[2, 3, 11, 8],
            %mask: f32[2, 1, 1, 11]) -> f32[2, 3, 9, 8] {
  %c = constant() {value = 0.5946035575} : f32[]
  %qs = mul(%q, %c)
  %kt = transpose(%k) {perm = [0, 1, 3, 2]}
  %kts = mul(%c, %kt)
  %s = matmul(%qs, %kts)
  %m = add(%s, %mask)
  %p = softmax(%m) {axis = -1}
  %o = matmul(%p, %v)
  return %o
}
)";

// The op defining the scores matmul's B operand, after the pipeline.
std::string KOperandKind(const std::string& text, const std::string& pipeline) {
  Module m = Parse(text);
  absl::Status s = RunPipeline(m, pipeline);
  EXPECT_TRUE(s.ok()) << s;
  for (const auto& op : m.graphs()[0]->ops()) {
    if (op->kind() == "matmul") {
      const Op* def = op->operand(1)->defining_op();
      return def == nullptr ? "param" : def->kind();
    }
  }
  return "none";
}

TEST(AttentionKScaleTest, MovesTheScaleOfTransposedK) {
  EXPECT_EQ(KOperandKind(kSdpa, "attention-k-scale,dce"), "transpose");
  Module m = Parse(kSdpa);
  ASSERT_TRUE(RunPipeline(m, "attention-k-scale,dce").ok());
  const Graph& g = *m.graphs()[0];
  // The Q scale stays; K's moves after the matmul, whose result keeps its
  // name on the new mul.
  EXPECT_EQ(CountOps(g, "mul"), 2);
  const Value* s = nullptr;
  for (const auto& op : g.ops()) {
    if (op->kind() == "add") s = op->operand(0);
  }
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->defining_op()->kind(), "mul");
  EXPECT_EQ(s->name(), "s");
  ExpectSameNumbers(kSdpa, "attention-k-scale,dce");
}

TEST(AttentionKScaleTest, MovesTheScaleOfKUnderTransposeB) {
  const std::string text = R"(
graph @g(%q: f32[1, 2, 5, 16], %k: f32[1, 2, 7, 16], %v: f32[1, 2, 7, 16])
    -> f32[1, 2, 5, 16] {
  %c = constant() {value = -0.25} : f32[1, 1, 1, 1]
  %ks = mul(%k, %c)
  %s = matmul(%q, %ks) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
}
)";
  EXPECT_EQ(KOperandKind(text, "attention-k-scale,dce"), "param");
  ExpectSameNumbers(text, "attention-k-scale,dce");
}

TEST(AttentionKScaleTest, LeavesWhatMayNotMove) {
  // One case per rule: a scale above 1, a runtime scale, a tensor scale,
  // a scaled K read twice, a bf16 K, and scores that are not softmax's
  // (a reduce reads them).
  const char* kCases[] = {
      R"(graph @g(%q: f32[1, 1, 4, 8], %k: f32[1, 1, 4, 8]) -> f32[1, 1, 4, 4] {
  %c = constant() {value = 2.0} : f32[]
  %ks = mul(%k, %c)
  %s = matmul(%q, %ks) {transpose_b = true}
  %p = softmax(%s)
  return %p
})",
      R"(graph @g(%q: f32[1, 1, 4, 8], %k: f32[1, 1, 4, 8], %c: f32[]) -> f32[1, 1, 4, 4] {
  %ks = mul(%k, %c)
  %s = matmul(%q, %ks) {transpose_b = true}
  %p = softmax(%s)
  return %p
})",
      R"(graph @g(%q: f32[1, 1, 4, 8], %k: f32[1, 1, 4, 8]) -> f32[1, 1, 4, 4] {
  %c = constant() {value = [0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25]} : f32[8]
  %ks = mul(%k, %c)
  %s = matmul(%q, %ks) {transpose_b = true}
  %p = softmax(%s)
  return %p
})",
      R"(graph @g(%q: f32[1, 1, 4, 8], %k: f32[1, 1, 4, 8]) -> (f32[1, 1, 4, 4], f32[1, 1, 4, 8]) {
  %c = constant() {value = 0.5} : f32[]
  %ks = mul(%k, %c)
  %s = matmul(%q, %ks) {transpose_b = true}
  %p = softmax(%s)
  return %p, %ks
})",
      R"(graph @g(%q: bf16[1, 1, 4, 8], %k: bf16[1, 1, 4, 8]) -> bf16[1, 1, 4, 4] {
  %c = constant() {value = 0.5} : bf16[]
  %ks = mul(%k, %c)
  %s = matmul(%q, %ks) {transpose_b = true}
  %p = softmax(%s)
  return %p
})",
      R"(graph @g(%q: f32[1, 1, 4, 8], %k: f32[1, 1, 4, 8]) -> f32[1, 1, 4] {
  %c = constant() {value = 0.5} : f32[]
  %ks = mul(%k, %c)
  %s = matmul(%q, %ks) {transpose_b = true}
  %r = reduce_max(%s) {axes = [3]}
  return %r
})",
  };
  for (const char* text : kCases) {
    EXPECT_EQ(KOperandKind(text, "attention-k-scale"), "mul") << text;
  }
}

TEST(AttentionKScaleTest, TheBlockFusesWithTheScaleAsAScoreOp) {
  Module m = Parse(kSdpa);
  ASSERT_TRUE(RunPipeline(m, "O2").ok());
  const Graph& g = *m.graphs()[0];
  // One attention group and nothing else: no separate pass over Kᵀ.
  EXPECT_EQ(CountOps(g, "fusion"), 1);
  EXPECT_EQ(CountOps(g, "mul"), 0);
}

}  // namespace
}  // namespace hgc
