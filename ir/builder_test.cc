#include "ir/builder.h"

#include "gtest/gtest.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "support/diagnostics.h"

namespace hgc {
namespace {

TEST(BuilderTest, BuildsVerifiesAndPrintsAnMlp) {
  Module module;
  Graph* g = module.AddGraph("mlp");
  Value* x = g->AddParam("x", TensorType(DType::kF32, {128, 13}));
  Value* w = g->AddParam("w0", TensorType(DType::kF32, {13, 512}), true);
  Value* b = g->AddParam("b0", TensorType(DType::kF32, {512}), true);
  Builder builder(g);
  Value* mm = *builder.Matmul(x, w);
  Value* biased = *builder.Binary("add", mm, b);
  Value* relu = *builder.Unary("relu", biased);
  g->SetResults({relu});
  g->SetDeclaredResultTypes({relu->type()});
  ASSERT_TRUE(Verify(module).ok());
  EXPECT_EQ(PrintModule(module),
            "graph @mlp(%x: f32[128, 13], %w0: f32[13, 512] const, "
            "%b0: f32[512] const) -> f32[128, 512] {\n"
            "  %0 = matmul(%x, %w0) : f32[128, 512]\n"
            "  %1 = add(%0, %b0) : f32[128, 512]\n"
            "  %2 = relu(%1) : f32[128, 512]\n"
            "  return %2\n"
            "}\n");
}

TEST(BuilderTest, PrinterSkipsDefaultsAndAvoidsNameClashes) {
  Module module;
  Graph* g = module.AddGraph("g");
  Value* a = g->AddParam("0", TensorType(DType::kF32, {2, 2}));
  Builder builder(g);
  Value* t = *builder.Matmul(a, a, /*transpose_a=*/false, /*transpose_b=*/true);
  AttrMap attrs = {{"axis", Attribute::Int(-1)}};
  Value* s = *builder.Create("softmax", {t}, attrs);
  Value* c = *builder.Splat(0.5, TensorType(DType::kF32, {}));
  Value* m = *builder.Binary("mul", s, c);
  g->SetResults({m, t});
  g->SetDeclaredResultTypes({m->type(), t->type()});
  ASSERT_TRUE(Verify(module).ok());
  EXPECT_EQ(PrintModule(module),
            "graph @g(%0: f32[2, 2]) -> (f32[2, 2], f32[2, 2]) {\n"
            "  %1 = matmul(%0, %0) {transpose_b = true} : f32[2, 2]\n"
            "  %2 = softmax(%1) : f32[2, 2]\n"
            "  %3 = constant() {value = 0.5} : f32[]\n"
            "  %4 = mul(%2, %3) : f32[2, 2]\n"
            "  return %4, %1\n"
            "}\n");
}

TEST(BuilderTest, ErrorsCarryTheLocation) {
  Module module;
  Graph* g = module.AddGraph("g");
  Value* a = g->AddParam("a", TensorType(DType::kF32, {2, 3}));
  Builder builder(g);
  SourceLoc loc{0, 42};
  absl::StatusOr<Value*> r = builder.Create("matmul", {a, a}, {}, {}, loc);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(GetLoc(r.status()).has_value());
  EXPECT_EQ(GetLoc(r.status())->offset, 42);
}

TEST(VerifierTest, RejectsMalformedGraphs) {
  {
    Module module;
    Graph* g = module.AddGraph("no_return");
    g->AddParam("a", TensorType(DType::kF32, {2}));
    EXPECT_FALSE(Verify(module).ok());
  }
  {
    Module module;
    Graph* g = module.AddGraph("wrong_result");
    Value* a = g->AddParam("a", TensorType(DType::kF32, {2}));
    g->SetResults({a});
    g->SetDeclaredResultTypes({TensorType(DType::kF32, {3})});
    EXPECT_FALSE(Verify(module).ok());
  }
  {
    // An op whose stored type disagrees with inference (as a buggy pass
    // might leave it).
    Module module;
    Graph* g = module.AddGraph("bad_type");
    Value* a = g->AddParam("a", TensorType(DType::kF32, {2}));
    Op* op = g->AddOp("relu", {a}, {}, {TensorType(DType::kF32, {5})});
    g->SetResults({op->result()});
    g->SetDeclaredResultTypes({op->result()->type()});
    EXPECT_FALSE(Verify(module).ok());
  }
  {
    Module module;
    module.AddGraph("dup")->AddParam("a", TensorType(DType::kF32, {2}));
    module.AddGraph("dup");
    EXPECT_FALSE(Verify(module).ok());
  }
  {
    // Uses a value of another graph.
    Module module;
    Graph* g1 = module.AddGraph("g1");
    Value* a = g1->AddParam("a", TensorType(DType::kF32, {2}));
    g1->SetResults({a});
    g1->SetDeclaredResultTypes({a->type()});
    Graph* g2 = module.AddGraph("g2");
    Op* op = g2->AddOp("relu", {a}, {}, {a->type()});
    g2->SetResults({op->result()});
    g2->SetDeclaredResultTypes({a->type()});
    EXPECT_FALSE(Verify(module).ok());
  }
}

TEST(GraphTest, ReplaceAllUsesAndErase) {
  Module module;
  Graph* g = module.AddGraph("g");
  Value* a = g->AddParam("a", TensorType(DType::kF32, {2}));
  Builder builder(g);
  Value* r = *builder.Unary("relu", a);
  Value* n = *builder.Unary("neg", r);
  g->SetResults({n});
  g->SetDeclaredResultTypes({n->type()});
  g->ReplaceAllUsesWith(r, a);
  g->Erase(r->defining_op());
  ASSERT_TRUE(Verify(module).ok());
  EXPECT_EQ(g->ops().size(), 1u);
  EXPECT_EQ(n->defining_op()->operand(0), a);
}

}  // namespace
}  // namespace hgc
