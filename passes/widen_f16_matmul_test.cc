// widen-f16-matmul: which matmuls are rewritten, into what, and that the
// interpreter computes the same bits before and after (f16 widens to f32
// exactly, and the f32 matmul rounds once, as the f16 one does).
#include "passes/widen_f16_matmul.h"

#include <string>

#include "analysis/graph_utils.h"
#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::CountOps;
using pass_test::ExpectBitIdentical;
using pass_test::Parse;
using pass_test::RunPipeline;

constexpr char kMlp[] = R"(
graph @g(%x: f16[5, 24], %w: f16[40, 24] const, %b: f16[40]) -> f16[5, 40] {
  %y = matmul(%x, %w) {transpose_b = true}
  %z = add(%y, %b)
  return %z
})";

TEST(WidenF16MatmulTest, RewritesAsAnF32MatmulBetweenCasts) {
  Module m = Parse(kMlp);
  ASSERT_TRUE(RunPipeline(m, "widen-f16-matmul").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(CountOps(g, "cast"), 3);
  EXPECT_EQ(CountOps(g, "matmul"), 1);
  for (const auto& op : g.ops()) {
    if (op->kind() != "matmul") continue;
    EXPECT_EQ(op->operand(0)->type().dtype, DType::kF32);
    EXPECT_EQ(op->operand(1)->type().dtype, DType::kF32);
    EXPECT_EQ(op->result()->type().dtype, DType::kF32);
    const Attribute* t = op->FindAttr("transpose_b");
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(t->as_bool());
  }
  // The final cast carries the old result's name into the add; the values
  // added are named after what they widen.
  const Op& add = *g.ops().back();
  EXPECT_EQ(add.kind(), "add");
  EXPECT_EQ(add.operand(0)->name(), "y");
  const Op* narrow = add.operand(0)->defining_op();
  EXPECT_EQ(narrow->kind(), "cast");
  EXPECT_EQ(narrow->operand(0)->name(), "f32_y");
  EXPECT_EQ(narrow->operand(0)->defining_op()->operand(0)->name(), "f32_x");
  EXPECT_EQ(narrow->operand(0)->defining_op()->operand(1)->name(), "f32_w");
}

TEST(WidenF16MatmulTest, ComputesTheSameBits) {
  for (uint64_t seed : {1, 2, 3})
    ExpectBitIdentical(kMlp, "widen-f16-matmul", seed);
  // Batched, broadcast over the batch, transposed A.
  ExpectBitIdentical(R"(
graph @g(%a: f16[3, 24, 7], %b: f16[1, 24, 9]) -> f16[3, 7, 9] {
  %y = matmul(%a, %b) {transpose_a = true}
  return %y
})",
                     "widen-f16-matmul");
}

TEST(WidenF16MatmulTest, WidensAnOperandOnce) {
  // x times three weights (Q, K, V projections): one cast of x.
  Module m = Parse(R"(
graph @g(%x: f16[6, 16], %wq: f16[16, 8], %wk: f16[16, 8], %wv: f16[16, 8])
    -> (f16[6, 8], f16[6, 8], f16[6, 8]) {
  %q = matmul(%x, %wq)
  %k = matmul(%x, %wk)
  %v = matmul(%x, %wv)
  return %q, %k, %v
})");
  ASSERT_TRUE(RunPipeline(m, "widen-f16-matmul").ok());
  int casts_of_x = 0;
  for (const auto& op : m.graphs()[0]->ops()) {
    casts_of_x += op->kind() == "cast" && op->operand(0)->name() == "x";
  }
  EXPECT_EQ(casts_of_x, 1);
  EXPECT_EQ(CountOps(*m.graphs()[0], "cast"), 1 + 3 + 3);
}

TEST(WidenF16MatmulTest, LeavesOtherMatmulsAndAttentionAlone) {
  Module m = Parse(R"(
graph @g(%a: f32[4, 8], %b: f32[8, 4], %c: bf16[4, 8], %d: bf16[8, 4])
    -> (f32[4, 4], bf16[4, 4]) {
  %x = matmul(%a, %b)
  %y = matmul(%c, %d)
  return %x, %y
})");
  absl::StatusOr<int> n = WidenF16Matmuls(m);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 0);
  // An f16 attention block, once outlined, keeps its f16 matmuls: the
  // attention lowering widens Q, K and V per head itself.
  Module att = Parse(R"(
graph @attn(%q: f16[1, 2, 9, 16], %k: f16[1, 2, 9, 16], %v: f16[1, 2, 9, 16])
    -> f16[1, 2, 9, 16] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
})");
  ASSERT_TRUE(RunPipeline(att, "attention-fusion,widen-f16-matmul").ok());
  EXPECT_EQ(CountOps(*att.graphs()[0], "cast"), 0);
  for (const Graph* body : FusionBodies(att)) {
    EXPECT_EQ(CountOps(*body, "cast"), 0);
    EXPECT_EQ(CountOps(*body, "matmul"), 2);
  }
}

}  // namespace
}  // namespace hgc
