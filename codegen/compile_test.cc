// Compile on builder-made graphs, checked against the reference interpreter
// at 1 and 2 threads: MLP layers (native matmul/mlp lowering with fused
// post-ops and odd sizes for the masked tails), elementwise groups with
// broadcasting, attention (per-call packing of K^T), fallback steps, and
// the executable's plumbing (results that are parameters, returned twice).
#include "codegen/compile.h"

#include <cstring>
#include <string>
#include <vector>

#include "codegen/lower_matmul.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/clone.h"
#include "ir/graph.h"
#include "passes/pipelines.h"
#include "passes/register_all_passes.h"
#include "reference/reference_interpreter.h"
#include "support/status_macros.h"
#include "tensor_util/random_fill.h"
#include "tensor_util/tensor_compare.h"

namespace hgc {
namespace {

TensorType F32(Shape s) { return TensorType(DType::kF32, std::move(s)); }

// The O2 passes on a copy of `m`, then Compile.
absl::StatusOr<std::unique_ptr<Executable>> CompileO2(
    const Module& m, const Graph& g, const CompileOptions& options) {
  Module optimized = CloneModule(m);
  HGC_RETURN_IF_ERROR(RunPipeline("O2", GlobalPassRegistry(), optimized));
  return Compile(optimized, g, options);
}

// Compiles `g`, runs it on seeded inputs and compares with Interpret.
void ExpectMatchesInterpreter(const Module& m, const Graph& g, int threads,
                              CompileStats* stats_out = nullptr) {
  SCOPED_TRACE(testing::Message() << "threads=" << threads);
  CompileOptions options;
  options.num_threads = threads;
  CompileStats stats;
  options.stats = &stats;
  absl::StatusOr<std::unique_ptr<Executable>> exe = CompileO2(m, g, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<Tensor> inputs;
  for (int i = 0; i < g.num_params(); ++i) {
    inputs.push_back(*RandomTensor(g.param(i)->type(), 7, i));
  }
  ASSERT_TRUE((*exe)->SetConstants(inputs).ok());
  absl::StatusOr<std::vector<Tensor>> out = (*exe)->Execute(inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<Tensor> expected = *Interpret(g, inputs);
  ASSERT_EQ(out->size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    CompareResult r = *CompareTensors((*out)[i], expected[i]);
    EXPECT_TRUE(r.ok()) << r.Summary();
  }
  // A second run reuses everything and gives the same numbers.
  absl::StatusOr<std::vector<Tensor>> again = (*exe)->Execute(inputs);
  ASSERT_TRUE(again.ok());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(CompareTensors((*again)[i], expected[i])->ok());
  }
  if (stats_out) *stats_out = stats;
}

// x[batch, k] -> (matmul + bias + act)* over `widths`, const weights.
void BuildMlp(Module& m, int64_t batch, std::vector<int64_t> widths,
              const std::string& act) {
  Graph* g = m.AddGraph("mlp");
  Value* x = g->AddParam("x", F32({batch, widths[0]}));
  Builder b(g);
  for (size_t l = 0; l + 1 < widths.size(); ++l) {
    Value* w = g->AddParam("w" + std::to_string(l),
                           F32({widths[l], widths[l + 1]}), true);
    Value* bias =
        g->AddParam("b" + std::to_string(l), F32({widths[l + 1]}), true);
    x = *b.Matmul(x, w);
    x = *b.Binary("add", x, bias);
    x = *b.Unary(act, x);
  }
  g->SetResults({x});
  g->SetDeclaredResultTypes({x->type()});
}

TEST(CompileTest, MlpOddSizesIsNativeAndMatches) {
  Module m;
  BuildMlp(m, 17, {13, 65, 33, 1}, "relu");
  for (int threads : {1, 2}) {
    CompileStats stats;
    ExpectMatchesInterpreter(m, *m.graphs()[0], threads, &stats);
    EXPECT_EQ(stats.fallback_steps, 0);
    EXPECT_GE(stats.native_steps, 1);
    EXPECT_GE(stats.init_steps, 3);  // one weight pack per layer
  }
}

TEST(CompileTest, MlpRowGroupsWithUnevenLastGroup) {
  // 270 rows: five M tiles (the last 14 rows); on four threads the groups
  // are 2, 2 and 1 tiles, on three 2, 2, 1, on one a single group of 5.
  Module m;
  BuildMlp(m, 270, {300, 130, 70}, "relu");
  EXPECT_EQ(codegen::ChooseTiles(1, 270, 130, 300, 4).group, 2);
  EXPECT_EQ(codegen::ChooseTiles(1, 270, 130, 300, 1).group, 5);
  for (int threads : {1, 3, 4}) {
    CompileStats stats;
    ExpectMatchesInterpreter(m, *m.graphs()[0], threads, &stats);
    EXPECT_EQ(stats.fallback_steps, 0);
  }
}

TEST(CompileTest, MlpWithoutBarriersWhenEveryThreadKeepsItsRows) {
  // 256 rows, four 64-row tiles: with 2 and 4 threads every layer hands
  // each thread the same rows, so the layers run without barriers.
  Module m;
  BuildMlp(m, 256, {100, 64, 48, 20}, "relu");
  EXPECT_EQ(codegen::ChooseTiles(1, 256, 64, 100, 2).group, 2);
  for (int threads : {2, 4}) {
    CompileStats stats;
    ExpectMatchesInterpreter(m, *m.graphs()[0], threads, &stats);
    EXPECT_EQ(stats.fallback_steps, 0);
  }
}

TEST(CompileTest, MlpActivations) {
  for (const char* act : {"sigmoid", "tanh", "gelu"}) {
    SCOPED_TRACE(act);
    Module m;
    BuildMlp(m, 32, {13, 512, 256}, act);
    ExpectMatchesInterpreter(m, *m.graphs()[0], 2);
  }
}

TEST(CompileTest, ElementwiseWithBroadcast) {
  Module m;
  Graph* g = m.AddGraph("ew");
  Value* x = g->AddParam("x", F32({3, 5, 37}));
  Value* y = g->AddParam("y", F32({5, 1}));
  Value* z = g->AddParam("z", F32({37}));
  Builder b(g);
  Value* v = *b.Binary("mul", x, y);
  v = *b.Binary("sub", v, z);
  v = *b.Unary("exp", v);
  g->SetResults({v});
  g->SetDeclaredResultTypes({v->type()});
  for (int threads : {1, 2}) {
    CompileStats stats;
    ExpectMatchesInterpreter(m, *g, threads, &stats);
    EXPECT_EQ(stats.fallback_steps, 0);
  }
}

TEST(CompileTest, LongOneDimensionalElementwiseIsSplit) {
  Module m;
  Graph* g = m.AddGraph("flat");
  Value* x = g->AddParam("x", F32({1001}));
  Value* y = g->AddParam("y", TensorType(DType::kF32, Shape()));
  Builder b(g);
  Value* v = *b.Binary("add", x, y);
  v = *b.Unary("tanh", v);
  g->SetResults({v});
  g->SetDeclaredResultTypes({v->type()});
  for (int threads : {1, 2, 3}) ExpectMatchesInterpreter(m, *g, threads);
}

TEST(CompileTest, AttentionWithTransposedK) {
  Module m;
  Graph* g = m.AddGraph("mha");
  Value* q = g->AddParam("q", F32({2, 3, 17, 16}));
  Value* k = g->AddParam("k", F32({2, 3, 17, 16}));
  Value* v = g->AddParam("v", F32({2, 3, 17, 16}));
  Value* mask = g->AddParam("mask", F32({2, 1, 1, 17}));
  Builder b(g);
  Value* s = *b.Matmul(q, k, false, true);
  Value* c = *b.Splat(0.25, TensorType(DType::kF32, Shape()));
  s = *b.Binary("mul", s, c);
  s = *b.Binary("add", s, mask);
  Value* p = *b.Create("softmax", {s});
  Value* o = *b.Matmul(p, v);
  g->SetResults({o});
  g->SetDeclaredResultTypes({o->type()});
  for (int threads : {1, 2}) ExpectMatchesInterpreter(m, *g, threads);
}

TEST(CompileTest, BatchedAndTransposedConstWeights) {
  // Blocked packing of B (N = 70: one 64-wide panel and a 6-wide tail),
  // from a transposed const weight and from a batched const weight.
  Module m;
  Graph* g = m.AddGraph("batched");
  Value* x = g->AddParam("x", F32({3, 19, 33}));
  Value* wt = g->AddParam("wt", F32({70, 33}), true);
  Value* wb = g->AddParam("wb", F32({3, 70, 70}), true);
  Builder b(g);
  Value* y = *b.Matmul(x, wt, false, true);
  y = *b.Unary("relu", y);
  y = *b.Matmul(y, wb);
  g->SetResults({y});
  g->SetDeclaredResultTypes({y->type()});
  for (int threads : {1, 2}) {
    CompileStats stats;
    ExpectMatchesInterpreter(m, *g, threads, &stats);
    EXPECT_EQ(stats.fallback_steps, 0);
  }
}

TEST(CompileTest, RowwiseGroupsAreNative) {
  Module m;
  Graph* g = m.AddGraph("rows");
  Value* x = g->AddParam("x", F32({5, 33}));
  Value* gamma = g->AddParam("g", F32({33}), true);
  Value* beta = g->AddParam("b", F32({33}), true);
  Builder b(g);
  Value* e = *b.Unary("tanh", x);
  Value* s = *b.Create("softmax", {e});
  Value* n = *b.Create("layernorm", {x, gamma, beta});
  Value* r =
      *b.Create("reduce_mean", {x}, {{"axes", Attribute::IntList({-1})}});
  g->SetResults({s, n, r});
  g->SetDeclaredResultTypes({s->type(), n->type(), r->type()});
  for (int threads : {1, 2}) {
    CompileStats stats;
    ExpectMatchesInterpreter(m, *g, threads, &stats);
    EXPECT_EQ(stats.fallback_steps, 0);
  }
}

TEST(CompileTest, ResultsThatAreParamsOrRepeated) {
  Module m;
  Graph* g = m.AddGraph("plumbing");
  Value* x = g->AddParam("x", F32({4, 4}));
  Value* w = g->AddParam("w", F32({4, 4}), true);
  Builder b(g);
  Value* t =
      *b.Create("transpose", {x}, {{"perm", Attribute::IntList({1, 0})}});
  Value* r = *b.Unary("relu", t);
  g->SetResults({r, x, r, w});
  g->SetDeclaredResultTypes({r->type(), x->type(), r->type(), w->type()});
  for (int threads : {1, 2}) ExpectMatchesInterpreter(m, *g, threads);
}

TEST(CompileTest, TileHeuristicGivesEveryThreadWork) {
  // DLRM MLP-1 first layer at batch 32: 8 tiles of 32 x 64.
  codegen::TileSizes t = codegen::ChooseTiles(1, 32, 512, 13, 2);
  EXPECT_EQ(t.mb, 32);
  EXPECT_EQ(t.nb, 64);
  EXPECT_EQ(t.group, 1);
  // A single 64 x 64 tile is split along M for 4 threads.
  t = codegen::ChooseTiles(1, 64, 64, 64, 4);
  EXPECT_LE(t.mb, 16);
  // MLP-2 at batch 512, K = 1024, two threads: one row group per thread,
  // 256 rows = 1 MiB of A.
  t = codegen::ChooseTiles(1, 512, 1024, 1024, 2);
  EXPECT_EQ(t.group, 4);
  // Long K shrinks the group to what fits half an L2.
  t = codegen::ChooseTiles(1, 512, 1024, 4096, 2);
  EXPECT_EQ(t.group, 1);
}

TEST(CompileTest, StepsCompiledOnSeveralThreadsGiveTheSameResults) {
  // Matmul, elementwise and row-wise steps, spread over one to three
  // compile threads' modules.
  Module m;
  BuildMlp(m, 9, {20, 33, 17}, "gelu");
  Graph* g = m.graphs()[0].get();
  Builder b(g);
  Value* s = *b.Create("softmax", {g->results()[0]});
  Value* e = *b.Unary("exp", g->param(0));
  g->SetResults({s, e});
  g->SetDeclaredResultTypes({s->type(), e->type()});
  std::vector<Tensor> inputs;
  for (int i = 0; i < g->num_params(); ++i) {
    inputs.push_back(*RandomTensor(g->param(i)->type(), 3, i));
  }
  std::vector<std::vector<Tensor>> outputs;
  for (int compile_threads : {1, 2, 3}) {
    SCOPED_TRACE(testing::Message() << "compile_threads=" << compile_threads);
    CompileOptions options;
    options.num_threads = 2;
    options.compile_threads = compile_threads;
    CompileStats stats;
    options.stats = &stats;
    absl::StatusOr<std::unique_ptr<Executable>> exe = CompileO2(m, *g, options);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_GE(stats.native_steps, 3);
    EXPECT_EQ(stats.fallback_steps, 0);
    EXPECT_EQ(stats.llvm_modules, compile_threads);
    ASSERT_TRUE((*exe)->SetConstants(inputs).ok());
    absl::StatusOr<std::vector<Tensor>> out = (*exe)->Execute(inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    outputs.push_back(*std::move(out));
  }
  std::vector<Tensor> expected = *Interpret(*g, inputs);
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(CompareTensors(outputs[0][i], expected[i])->ok());
    for (size_t run = 1; run < outputs.size(); ++run) {
      ASSERT_EQ(outputs[run][i].size_in_bytes(), outputs[0][i].size_in_bytes());
      EXPECT_EQ(std::memcmp(outputs[run][i].raw(), outputs[0][i].raw(),
                            outputs[0][i].size_in_bytes()),
                0)
          << "output " << i << " differs with " << run + 1
          << " compile threads";
    }
  }
}

TEST(CompileTest, KChunksStayInL1) {
  EXPECT_EQ(codegen::ChooseKChunk(13), 13);  // one chunk
  EXPECT_EQ(codegen::ChooseKChunk(128), 128);
  EXPECT_EQ(codegen::ChooseKChunk(1024), 128);  // a divisor
  EXPECT_EQ(codegen::ChooseKChunk(300), 100);
  EXPECT_EQ(codegen::ChooseKChunk(479), 120);     // prime: 3 x 120 + 119
  EXPECT_EQ(codegen::ChooseKChunk(2 * 131), 88);  // 2 x 88 + 86
}

}  // namespace
}  // namespace hgc
