// Tests of driver/bench.h: the FLOP count, the median, and one small
// BenchGraph run (both sides agree, timings are positive).
#include "driver/bench.h"

#include <vector>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/graph.h"

namespace hgc {
namespace {

TEST(BenchTest, Median) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3}), 3);
  EXPECT_EQ(Median({5, 1, 3}), 3);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
}

TEST(BenchTest, MatmulFlopsCountsTwoMNKIncludingBatchAndTranspose) {
  Module module;
  Graph* g = module.AddGraph("g");
  Builder b(g);
  Value* a = g->AddParam("a", TensorType(DType::kF32, {3, 8, 5}));   // [B, K, M]
  Value* w = g->AddParam("w", TensorType(DType::kF32, {3, 8, 7}));   // [B, K, N]
  Value* m = *b.Matmul(a, w, /*transpose_a=*/true);  // [3, 5, 7], K = 8
  Value* r = *b.Unary("relu", m);                    // not counted
  g->SetResults({r});
  EXPECT_EQ(MatmulFlops(*g), 2.0 * 3 * 5 * 7 * 8);
}

TEST(BenchTest, BenchGraphAgreesWithBaseline) {
  Module module;
  Graph* g = module.AddGraph("mlp");
  Builder b(g);
  Value* x = g->AddParam("x", TensorType(DType::kF32, {8, 16}));
  Value* w = g->AddParam("w", TensorType(DType::kF32, {16, 32}), true);
  Value* bias = g->AddParam("b", TensorType(DType::kF32, {32}), true);
  Value* y = *b.Unary("relu", *b.Binary("add", *b.Matmul(x, w), bias));
  g->SetResults({y});
  g->SetDeclaredResultTypes({y->type()});

  BenchConfig config;
  config.iters = 4;
  config.warmup = 1;
  absl::StatusOr<BenchResult> r = BenchGraph(module, *g, config);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->agree);
  ASSERT_EQ(r->check_lines.size(), 1u);
  EXPECT_EQ(r->iters, 4);
  EXPECT_EQ(r->flops, 2.0 * 8 * 16 * 32);
  EXPECT_GT(r->hgc_ms, 0);
  EXPECT_GT(r->baseline_ms, 0);
  EXPECT_GT(r->speedup(), 0);
  EXPECT_GT(r->compile_ms, 0);
}

}  // namespace
}  // namespace hgc
