// The primitive executor on each op family (normalization, unary, binary
// and comparison ops, f16 and integer fallbacks, softmax, reductions, shape,
// cast and quantization ops) against the reference interpreter, as
// primitive_executor_test.cc does for matmuls, fusion and the executor's
// API: seeded random inputs through both, CompareTensors' default
// tolerances, 1 and 2 OpenMP threads.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "baseline/primitive_executor.h"
#include "baseline/primitive_executor_test_util.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "reference/reference_interpreter.h"
#include "tensor_util/random_fill.h"
#include "tensor_util/tensor_compare.h"

namespace hgc {
namespace executor_test {
namespace {

using ::testing::Values;

INSTANTIATE_TEST_SUITE_P(Threads, ExecutorTest, Values(1, 2),
                         [](const auto& info) {
                           return absl::StrCat(info.param, "thread");
                         });

TEST_P(ExecutorTest, Layernorm) {
  Graph* g = module_.AddGraph("ln");
  Builder b(g);
  Value* x = g->AddParam("x", F32({4, 8, 64}));
  Value* gamma = g->AddParam("gamma", F32({64}), true);
  Value* beta = g->AddParam("beta", F32({64}), true);
  Value* gamma2 = g->AddParam("gamma2", F32({8, 64}));
  Value* beta2 = g->AddParam("beta2", F32({8, 64}));
  Value* y = Get(b.Create("layernorm", {x, gamma, beta}));
  Value* y2 = Get(b.Create("layernorm", {x, gamma2, beta2},
                           {{"axis", I(1)}, {"epsilon", Fl(1e-3)}}));
  g->SetResults({y, y2});
  auto exec = Check(*g, threads());
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(Joined(*exec), "layernorm | layernorm");
}

TEST_P(ExecutorTest, LayernormBf16) {
  Graph* g = module_.AddGraph("ln16");
  Builder b(g);
  Value* x = g->AddParam("x", BF16({16, 128}));
  Value* gamma = g->AddParam("gamma", BF16({128}), true);
  Value* beta = g->AddParam("beta", BF16({128}));
  g->SetResults({Get(b.Create("layernorm", {x, gamma, beta}))});
  auto exec = Check(*g, threads());
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(Joined(*exec), HasReferenceStep(*exec, "layernorm")
                               ? "ref:layernorm"
                               : "layernorm");
}

TEST_P(ExecutorTest, GeluBothForms) {
  Graph* g = module_.AddGraph("gelu");
  Builder b(g);
  Value* x = g->AddParam("x", F32({16, 80}));
  Value* w = g->AddParam("w", F32({80, 64}), true);
  Value* ge = Get(b.Create("gelu", {x}));
  Value* gt = Get(b.Create("gelu", {x}, {{"approximate", S("tanh")}}));
  Value* fe = Get(b.Create("gelu", {Get(b.Matmul(x, w))}));
  Value* ft = Get(
      b.Create("gelu", {Get(b.Matmul(x, w))}, {{"approximate", S("tanh")}}));
  g->SetResults({ge, gt, fe, ft});
  auto exec = Check(*g, threads(), {}, {-4.0, 4.0});
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(Joined(*exec), "gelu | gelu | matmul+gelu | matmul+gelu_tanh");
}

TEST_P(ExecutorTest, UnaryOps) {
  Graph* g = module_.AddGraph("unary");
  Builder b(g);
  Value* x = g->AddParam("x", F32({7, 33}));
  std::vector<Value*> outs;
  for (const char* k : {"relu", "sigmoid", "tanh", "exp", "neg", "abs"}) {
    outs.push_back(Get(b.Unary(k, x)));
  }
  outs.push_back(
      Get(b.Create("clamp", {x}, {{"min", Fl(-0.3)}, {"max", I(0)}})));
  outs.push_back(Get(b.Create("clamp", {x}, {{"min", Fl(0.1)}})));
  Value* pos = g->AddParam("p", F32({5, 17}));
  for (const char* k : {"log", "sqrt", "rsqrt"}) {
    outs.push_back(Get(b.Unary(k, pos)));
  }
  g->SetResults(outs);
  // The positive input: [0.5, 4) for all (x in [-2,2) also fine for the rest).
  auto exec = Check(*g, threads(), {}, {0.5, 4.0});
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(exec->num_fallbacks(), 0) << exec->Summary();
  // And on inputs of both signs for the ops defined everywhere.
  Graph* g2 = module_.AddGraph("unary2");
  Builder b2(g2);
  Value* y = g2->AddParam("y", BF16({3, 40}));
  std::vector<Value*> outs2;
  for (const char* k : {"relu", "sigmoid", "tanh", "exp", "neg", "abs"}) {
    outs2.push_back(Get(b2.Unary(k, y)));
  }
  g2->SetResults(outs2);
  ASSERT_NE(Check(*g2, threads(), {}, {-3.0, 3.0}), nullptr);
}

TEST_P(ExecutorTest, BinaryBroadcastingAndComparisons) {
  Graph* g = module_.AddGraph("binary");
  Builder b(g);
  Value* a = g->AddParam("a", F32({4, 6, 8}));
  Value* row = g->AddParam("row", F32({8}));
  Value* col = g->AddParam("col", F32({4, 1, 1}));
  Value* c = g->AddParam("c", F32({6, 1}));
  std::vector<Value*> outs = {
      Get(b.Binary("add", a, row)),  // src1 broadcast
      Get(b.Binary("mul", row, a)),  // swapped
      Get(b.Binary("sub", a, col)),
      Get(b.Binary("div", a,
                   Get(b.Binary("add", Get(b.Unary("abs", row)),
                                Get(b.Splat(1.0, F32({}))))))),
      Get(b.Binary("max", col, a)),
      Get(b.Binary("min", a, a)),
      Get(b.Binary("greater", col, a)),  // swapped to less
      Get(b.Binary("less_equal", a, row)),
      Get(b.Binary("equal", a, a)),
      Get(b.Binary("sub", row, a)),  // not swappable: reference
      Get(b.Binary("add", col, c)),  // both broadcast: reference
  };
  Value* cond = Get(b.Binary("greater_equal", a, row));
  outs.push_back(Get(b.Create("select", {cond, a, row})));
  g->SetResults(outs);
  auto exec = Check(*g, threads());
  ASSERT_NE(exec, nullptr);
  std::vector<std::string> d = exec->Describe();
  EXPECT_EQ(std::count(d.begin(), d.end(), "ref:sub"), 1) << exec->Summary();
  EXPECT_EQ(std::count(d.begin(), d.end(), "ref:add"), 1) << exec->Summary();
  EXPECT_EQ(std::count(d.begin(), d.end(), "ref:select"), 1);
  EXPECT_EQ(exec->num_fallbacks(), 3) << exec->Summary();
}

// f16: whatever oneDNN 2.6 has no primitive for on this CPU (matmul at
// least) runs on the reference kernels; the results match either way.
TEST_P(ExecutorTest, F16Graph) {
  Graph* g = module_.AddGraph("f16");
  Builder b(g);
  Value* x = g->AddParam("x", TensorType(DType::kF16, {8, 32}));
  Value* w = g->AddParam("w", TensorType(DType::kF16, {32, 16}), true);
  Value* mm = Get(b.Matmul(x, w));
  g->SetResults({mm, Get(b.Binary("add", x, x)), Get(b.Unary("tanh", x)),
                 Get(b.Create("cast", {x}, {{"to", D(DType::kF32)}}))});
  auto exec = Check(*g, threads());
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(exec->Describe()[0], "ref:matmul") << exec->Summary();
}

TEST_P(ExecutorTest, IntegerElementwiseFallsBack) {
  Graph* g = module_.AddGraph("ints");
  Builder b(g);
  Value* a = g->AddParam("a", Ty(DType::kS8, {4, 16}));
  Value* c = g->AddParam("c", Ty(DType::kS8, {16}));
  g->SetResults({Get(b.Binary("add", a, c)), Get(b.Unary("neg", a)),
                 Get(b.Binary("less", a, c))});
  auto exec = Check(*g, threads());
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(Joined(*exec), "ref:add | ref:neg | ref:less");
}

TEST_P(ExecutorTest, Softmax) {
  Graph* g = module_.AddGraph("softmax");
  Builder b(g);
  Value* x = g->AddParam("x", F32({3, 50, 7}));
  Value* y = g->AddParam("y", BF16({6, 200}));
  g->SetResults({Get(b.Create("softmax", {x}, {{"axis", I(1)}})),
                 Get(b.Create("softmax", {x}, {{"axis", I(-1)}})),
                 Get(b.Create("softmax", {y}))});
  auto exec = Check(*g, threads(), {}, {-8.0, 8.0});
  ASSERT_NE(exec, nullptr);
  // The f32 ones always have a primitive; the bf16 one may not.
  EXPECT_EQ(Joined(*exec), HasReferenceStep(*exec, "softmax")
                               ? "softmax | softmax | ref:softmax"
                               : "softmax | softmax | softmax");
}

TEST_P(ExecutorTest, Reductions) {
  Graph* g = module_.AddGraph("reduce");
  Builder b(g);
  Value* x = g->AddParam("x", F32({4, 16, 24}));
  g->SetResults({
      Get(b.Create("reduce_sum", {x}, {{"axes", Ints({1})}})),
      Get(b.Create("reduce_max", {x},
                   {{"axes", Ints({0, -1})}, {"keep_dims", B(true)}})),
      Get(b.Create("reduce_mean", {x})),  // all axes -> scalar
      Get(b.Create("reduce_sum", {x}, {{"axes", Ints({})}})),  // identity
      Get(b.Create("reduce_mean", {x},
                   {{"axes", Ints({2})}, {"keep_dims", B(true)}})),
  });
  auto exec = Check(*g, threads());
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(exec->num_fallbacks(), 0) << exec->Summary();
}

TEST_P(ExecutorTest, ShapeAndQuantOps) {
  Graph* g = module_.AddGraph("shape");
  Builder b(g);
  Value* x = g->AddParam("x", F32({2, 3, 4, 5}));
  Value* t = Get(b.Create("transpose", {x}, {{"perm", Ints({0, 2, -1, 1})}}));
  Value* r = Get(b.Create("reshape", {t}, {{"shape", Ints({8, -1})}}));
  Value* e = Get(b.Unary("exp", r));  // reads the reshape alias
  Value* rev = Get(b.Create("transpose", {x}));
  Value* c16 = Get(b.Create("cast", {x}, {{"to", D(DType::kBF16)}}));
  Value* c32 = Get(b.Create("cast", {c16}, {{"to", D(DType::kF32)}}));
  Value* big = Get(b.Binary("mul", x, Get(b.Splat(300.0, F32({})))));
  Value* cs8 = Get(b.Create("cast", {big}, {{"to", D(DType::kS8)}}));
  Value* cs32 = Get(b.Create("cast", {big}, {{"to", D(DType::kS32)}}));
  Value* cb = Get(b.Create("cast", {cs8}, {{"to", D(DType::kBool)}}));
  Value* q = Get(b.Create("quantize", {x},
                          {{"scale", Fl(0.0078125)},
                           {"zero_point", I(128)},
                           {"to", D(DType::kU8)}}));
  Value* qc = Get(b.Create("quantize", {x},
                           {{"scale", Floats({0.25, 0.5, 0.125})},
                            {"axis", I(1)},
                            {"to", D(DType::kS8)}}));
  Value* q3 = Get(
      b.Create("quantize", {x}, {{"scale", Fl(0.01)}, {"to", D(DType::kS8)}}));
  Value* dq = Get(b.Create("dequantize", {q},
                           {{"scale", Fl(0.0078125)}, {"zero_point", I(128)}}));
  Value* dqc =
      Get(b.Create("dequantize", {qc},
                   {{"scale", Floats({0.3, 0.5, 0.7})}, {"axis", I(1)}}));
  Value* dqz = Get(b.Create(
      "dequantize", {qc},
      {{"scale", Fl(0.1)}, {"zero_point", Ints({1, 2, 3})}, {"axis", I(1)}}));
  Value* ts8 =
      Get(b.Create("transpose", {cs8}, {{"perm", Ints({3, 1, 2, 0})}}));
  Value* tb = Get(b.Create("transpose", {cb}, {{"perm", Ints({1, 0, 3, 2})}}));
  g->SetResults(
      {r, e, rev, c16, c32, cs8, cs32, cb, q, qc, q3, dq, dqc, dqz, ts8, tb});
  auto exec = Check(*g, threads());
  ASSERT_NE(exec, nullptr);
  std::vector<std::string> d = exec->Describe();
  EXPECT_EQ(Joined(*exec),
            "transpose | exp | transpose | cast | cast | mul | cast | "
            "ref:cast | ref:cast | quantize | quantize | quantize | "
            "dequantize | dequantize | ref:dequantize | transpose | "
            "transpose")
      << exec->Summary();
}

// Round-half-to-even and saturation of the reorder-based casts and
// quantize, on exact ties.
TEST_P(ExecutorTest, RoundingTiesAndSaturation) {
  Graph* g = module_.AddGraph("ties");
  Builder b(g);
  Value* x = g->AddParam("x", F32({12}));
  Value* c =
      Get(b.Create("constant", {},
                   {{"value", Floats({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 126.5,
                                      127.5, -128.5, 254.5, 300, -300})}},
                   {F32({12})}));
  Value* v = Get(b.Binary("add", x, c));
  g->SetResults({
      Get(b.Create("cast", {v}, {{"to", D(DType::kS8)}})),
      Get(b.Create("cast", {v}, {{"to", D(DType::kU8)}})),
      Get(b.Create("cast", {v}, {{"to", D(DType::kBF16)}})),
      Get(b.Create(
          "quantize", {v},
          {{"scale", Fl(0.5)}, {"zero_point", I(-3)}, {"to", D(DType::kS8)}})),
      Get(b.Create(
          "quantize", {v},
          {{"scale", Fl(2.0)}, {"zero_point", I(7)}, {"to", D(DType::kU8)}})),
  });
  PrimitiveExecutor::Options o;
  o.num_threads = threads();
  auto exec = Get(PrimitiveExecutor::Create(*g, o));
  EXPECT_EQ(Joined(*exec), "add | cast | cast | cast | quantize | quantize");
  Tensor zeros = Get(Tensor::Create(F32({12})));
  std::vector<Tensor> actual = Get(exec->Run({zeros}));
  std::vector<Tensor> expected = Get(Interpret(*g, {zeros}));
  for (size_t i = 0; i < actual.size(); ++i) {
    CompareResult cmp = Get(CompareTensors(actual[i], expected[i]));
    EXPECT_TRUE(cmp.ok()) << "output " << i << ": " << cmp.Summary();
  }
}

}  // namespace
}  // namespace executor_test
}  // namespace hgc
