// Whole graphs through the portable kernels (EvaluateGraph), and its error
// handling.
#include "runtime/portable/evaluate.h"

#include <cmath>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/op_registry.h"
#include "runtime/portable/test_util.h"

namespace hgc {
namespace portable {
namespace {

using namespace testing_util;  // NOLINT

TensorType F32Type(Shape shape) { return TensorType(DType::kF32, shape); }

TEST(EvaluateGraphTest, Mlp) {
  Module module;
  Graph* g = module.AddGraph("mlp");
  Value* x = g->AddParam("x", F32Type({2, 3}));
  Value* w = g->AddParam("w", F32Type({3, 2}), /*is_const=*/true);
  Value* b = g->AddParam("b", F32Type({2}), /*is_const=*/true);
  Builder builder(g);
  Value* mm = *builder.Matmul(x, w);
  Value* biased = *builder.Binary("add", mm, b);
  Value* relu = *builder.Unary("relu", biased);
  g->SetResults({relu});
  // x w = [[4, -1], [-4, 1]]; + 0.5 = [[4.5, -0.5], [-3.5, 1.5]]; relu.
  absl::StatusOr<std::vector<Tensor>> out =
      EvaluateGraph(*g, {F32({2, 3}, {1, 2, 3, -1, -2, -3}),
                     F32({3, 2}, {1, 0, 0, 1, 1, -1}), F32({2}, {0.5, 0.5})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].type(), F32Type({2, 2}));
  ExpectValues((*out)[0], {4.5, 0, 0, 1.5});
}

TEST(EvaluateGraphTest, AttentionBlock) {
  Module module;
  Graph* g = module.AddGraph("mha");
  Value* q = g->AddParam("q", F32Type({1, 2, 2}));
  Value* k = g->AddParam("k", F32Type({1, 2, 2}));
  Value* v = g->AddParam("v", F32Type({1, 2, 2}));
  Builder builder(g);
  Value* s = *builder.Matmul(q, k, false, /*transpose_b=*/true);
  Value* c = *builder.Splat(0.5, F32Type({}));
  Value* t = *builder.Binary("mul", s, c);
  Value* p = *builder.Create("softmax", {t}, {{"axis", I(-1)}});
  Value* o = *builder.Matmul(p, v);
  g->SetResults({o});
  // q k^T = I; * 0.5; softmax rows [e^.5, 1] / (e^.5 + 1) = [p, 1 - p].
  absl::StatusOr<std::vector<Tensor>> out =
      EvaluateGraph(*g, {F32({1, 2, 2}, {1, 0, 0, 1}), F32({1, 2, 2}, {1, 0, 0, 1}),
                     F32({1, 2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectValues((*out)[0],
               {1.7550813375962906, 2.755081337596291, 2.2449186624037094,
                3.244918662403709},
               1e-6);
}

TEST(EvaluateGraphTest, Int8Pipeline) {
  // dequantize -> matmul (f32) -> quantize, and the same with an int8 matmul
  // plus dequantize of the s32 result.
  Module module;
  Graph* g = module.AddGraph("q");
  Value* a = g->AddParam("a", TensorType(DType::kU8, {1, 2}));
  Value* w = g->AddParam("w", TensorType(DType::kS8, {2, 1}), true);
  Builder builder(g);
  Value* acc = *builder.Matmul(a, w);
  Value* y = *builder.Create("dequantize", {acc}, {{"scale", F(0.5)}});
  Value* q = *builder.Create("quantize", {y},
                             {{"scale", F(2)},
                              {"zero_point", I(3)},
                              {"to", Attribute::Type(DType::kS8)}});
  g->SetResults({acc, y, q});
  // 10 * 3 + 20 * -1 = 10; * 0.5 = 5; 5 / 2 = 2.5 -> 2, + 3 = 5.
  absl::StatusOr<std::vector<Tensor>> out = EvaluateGraph(
      *g, {T(DType::kU8, {1, 2}, {10, 20}), T(DType::kS8, {2, 1}, {3, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].type(), TensorType(DType::kS32, {1, 1}));
  ExpectValues((*out)[0], {10});
  ExpectValues((*out)[1], {5});
  ExpectValues((*out)[2], {5});
}

TEST(EvaluateGraphTest, ValuesUsedTwiceAndReturnedParams) {
  Module module;
  Graph* g = module.AddGraph("g");
  Value* x = g->AddParam("x", F32Type({2}));
  Builder builder(g);
  Value* sq = *builder.Binary("mul", x, x);
  Value* sum = *builder.Binary("add", sq, sq);
  Value* again = *builder.Binary("add", sum, sq);  // sq used after `sum`
  g->SetResults({again, x, sq});
  absl::StatusOr<std::vector<Tensor>> out = EvaluateGraph(*g, {F32({2}, {2, -3})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectValues((*out)[0], {12, 27});
  ExpectValues((*out)[1], {2, -3});
  ExpectValues((*out)[2], {4, 9});
}

TEST(EvaluateGraphTest, WrongInputCount) {
  Module module;
  Graph* g = module.AddGraph("g");
  Value* x = g->AddParam("x", F32Type({2}));
  g->SetResults({x});
  absl::StatusOr<std::vector<Tensor>> out = EvaluateGraph(*g, {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EvaluateGraphTest, WrongInputTypeNamesTheParameter) {
  Module module;
  Graph* g = module.AddGraph("g");
  g->AddParam("x", F32Type({2}));
  Value* y = g->AddParam("weights", F32Type({2}));
  g->SetResults({y});
  absl::StatusOr<std::vector<Tensor>> out =
      EvaluateGraph(*g, {F32({2}, {1, 2}), F32({3}, {1, 2, 3})});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("%weights"), std::string::npos)
      << out.status();
  EXPECT_NE(out.status().message().find("f32[3]"), std::string::npos);
  // Same shape, wrong dtype.
  out = EvaluateGraph(*g, {F32({2}, {1, 2}), T(DType::kBF16, {2}, {1, 2})});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("%weights"), std::string::npos);
  // A default-constructed tensor has no data.
  out = EvaluateGraph(*g, {F32({2}, {1, 2}), Tensor()});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EvaluateGraphTest, HugeTensorsAreResourceExhausted) {
  Module module;
  Graph* g = module.AddGraph("g");
  Value* col = g->AddParam("col", F32Type({1024, 1}));
  Value* row = g->AddParam("row", F32Type({1, 1024}));
  Builder builder(g);
  Value* outer = *builder.Binary("add", col, row);  // f32[1024, 1024]: 4 MiB
  g->SetResults({outer});
  std::vector<double> ones(1024, 1);
  Options options;
  options.max_tensor_bytes = 1 << 20;
  absl::StatusOr<std::vector<Tensor>> out =
      EvaluateGraph(*g, {F32({1024, 1}, ones), F32({1, 1024}, ones)}, options);
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted)
      << out.status();
  options.max_tensor_bytes = 4 << 20;
  out = EvaluateGraph(*g, {F32({1024, 1}, ones), F32({1, 1024}, ones)}, options);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].GetDouble(1024 * 1024 - 1), 2);
}

TEST(EvaluateGraphTest, HugeConstantUnderDefaultCap) {
  // 2^40 f32 elements (4 TiB) is a valid type but must not be allocated.
  Module module;
  Graph* g = module.AddGraph("g");
  Builder builder(g);
  Value* c = *builder.Splat(1.0, F32Type({1 << 20, 1 << 20}));
  g->SetResults({c});
  absl::StatusOr<std::vector<Tensor>> out = EvaluateGraph(*g, {});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(EvaluateGraphTest, ScratchIsCappedToo) {
  // A bf16 matmul needs an f32 copy of B (2x its bytes): over the cap even
  // though every tensor fits.
  TensorType bt(DType::kBF16, {512, 512});  // 512 KiB; f32 copy 1 MiB
  Tensor a = T(DType::kBF16, {1, 512}, std::vector<double>(512, 1));
  Tensor b = *Tensor::Create(bt);
  Options options;
  options.max_tensor_bytes = 600 << 10;
  absl::StatusOr<Tensor> r =
      EvaluateOp("matmul", {a, b}, {}, std::nullopt, options);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(EvaluateGraphTest, UnverifiedGraphsGiveErrorsNotCrashes) {
  Module module;
  Graph* g = module.AddGraph("g");
  Value* x = g->AddParam("x", F32Type({3}));
  // matmul of rank-1 operands, added without the builder's checks.
  Op* bad = g->AddOp("matmul", {x, x}, {}, {F32Type({3})});
  bad->result(0)->set_name("bad");
  g->SetResults({bad->result(0)});
  absl::StatusOr<std::vector<Tensor>> out =
      EvaluateGraph(*g, {F32({3}, {1, 2, 3})});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("%bad = matmul"), std::string::npos)
      << out.status();

  Module m2;
  Graph* g2 = m2.AddGraph("g");
  Value* y = g2->AddParam("y", F32Type({3}));
  Op* unknown = g2->AddOp("frobnicate", {y}, {}, {F32Type({3})});
  g2->SetResults({unknown->result(0)});
  out = EvaluateGraph(*g2, {F32({3}, {1, 2, 3})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);

  // A result type that disagrees with inference.
  Module m3;
  Graph* g3 = m3.AddGraph("g");
  Value* z = g3->AddParam("z", F32Type({3}));
  Op* wrong = g3->AddOp("add", {z, z}, {}, {F32Type({4})});
  g3->SetResults({wrong->result(0)});
  out = EvaluateGraph(*g3, {F32({3}, {1, 2, 3})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);

  // A bad attribute value (verifier would reject it).
  Module m4;
  Graph* g4 = m4.AddGraph("g");
  Value* w = g4->AddParam("w", F32Type({2, 2}));
  Op* bad_axis = g4->AddOp("softmax", {w}, {{"axis", I(5)}}, {F32Type({2, 2})});
  g4->SetResults({bad_axis->result(0)});
  out = EvaluateGraph(*g4, {F32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EvaluateGraphTest, UseOfValueFromAnotherGraph) {
  Module module;
  Graph* g1 = module.AddGraph("a");
  Value* foreign = g1->AddParam("p", F32Type({2}));
  Graph* g2 = module.AddGraph("b");
  Value* x = g2->AddParam("x", F32Type({2}));
  Op* op = g2->AddOp("add", {x, foreign}, {}, {F32Type({2})});
  g2->SetResults({op->result(0)});
  absl::StatusOr<std::vector<Tensor>> out = EvaluateGraph(*g2, {F32({2}, {1, 2})});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EvaluateOpTest, ChecksOperandsAgainstTheOp) {
  Module module;
  Graph* g = module.AddGraph("g");
  Value* x = g->AddParam("x", F32Type({2}));
  Builder builder(g);
  Value* r = *builder.Unary("exp", x);
  const Op& op = *r->defining_op();
  absl::StatusOr<Tensor> ok = EvaluateOp(op, {F32({2}, {0, 1})});
  ASSERT_TRUE(ok.ok()) << ok.status();
  ExpectValues(*ok, {1, 2.718281828459045}, 1e-6);
  EXPECT_EQ(EvaluateOp(op, {F32({3}, {0, 1, 2})}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EvaluateOp(op, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Integer operands for a float-only op are refused by inference.
  EXPECT_EQ(EvaluateOp("exp", {T(DType::kS32, {1}, {1})}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// A module whose entry graph calls @body = relu(a + b) through `fusion`.
Graph* BuildFusionModule(Module& module, const std::string& body_name) {
  Graph* g = module.AddGraph("main");
  Value* x = g->AddParam("x", F32Type({2}));
  Value* y = g->AddParam("y", F32Type({2}));
  AttrMap attrs = {{"body", Attribute::Symbol(body_name)},
                   {"kind", Attribute::String("elementwise")}};
  Value* f = *Builder(g).Create("fusion", {x, y}, attrs, {F32Type({2})});
  g->SetResults({f});
  g->SetDeclaredResultTypes({f->type()});
  return g;
}

TEST(EvaluateGraphTest, FusionRunsItsBody) {
  Module module;
  Graph* g = BuildFusionModule(module, "body");
  Graph* body = module.AddGraph("body");
  Value* a = body->AddParam("a", F32Type({2}));
  Value* b = body->AddParam("b", F32Type({2}));
  Builder builder(body);
  Value* r = *builder.Unary("relu", *builder.Binary("add", a, b));
  body->SetResults({r});
  body->SetDeclaredResultTypes({r->type()});
  absl::StatusOr<std::vector<Tensor>> out =
      EvaluateGraph(*g, {F32({2}, {1, -3}), F32({2}, {0.5, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectValues((*out)[0], {1.5, 0});
  // The module may move (StatusOr<Module> does): the body is still found.
  Module moved = std::move(module);
  out = EvaluateGraph(*moved.graphs()[0], {F32({2}, {1, 2}), F32({2}, {1, 1})});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectValues((*out)[0], {2, 3});
}

TEST(EvaluateGraphTest, FusionErrors) {
  {
    // The body is missing.
    Module module;
    Graph* g = BuildFusionModule(module, "nowhere");
    absl::StatusOr<std::vector<Tensor>> out =
        EvaluateGraph(*g, {F32({2}, {1, 2}), F32({2}, {1, 2})});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("@nowhere"), std::string::npos);
  }
  {
    // A body that calls itself ends with an error, not a stack overflow.
    Module module;
    BuildFusionModule(module, "main");
    absl::StatusOr<std::vector<Tensor>> out = EvaluateGraph(
        *module.graphs()[0], {F32({2}, {1, 2}), F32({2}, {1, 2})});
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("nest more than"),
              std::string::npos);
  }
  // Without an op there is no module to find the body in.
  EXPECT_EQ(EvaluateOp("fusion", {F32({2}, {1, 2})},
                       {{"body", Attribute::Symbol("b")},
                        {"kind", Attribute::String("elementwise")}},
                       F32Type({2}))
                .status()
                .code(),
            absl::StatusCode::kUnimplemented);
}

TEST(EvaluateOpTest, EveryRegisteredOpHasAKernel) {
  for (const std::string& name : OpRegistry::Get().Names()) {
    EXPECT_TRUE(HasKernel(name))
        << "op '" << name << "' has no portable kernel";
  }
  EXPECT_FALSE(HasKernel("frobnicate"));
}

}  // namespace
}  // namespace portable
}  // namespace hgc
