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
  Value* c = *builder.Splat(0.5, TensorType(DType::kF32));
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

TEST(GraphTest, InsertOpAndEraseKeepOrder) {
  Module module;
  Graph* g = module.AddGraph("g");
  Value* a = g->AddParam("a", TensorType(DType::kF32, {2}));
  Builder builder(g);
  Value* n = *builder.Unary("neg", a);
  g->SetResults({n});
  g->SetDeclaredResultTypes({n->type()});
  // Insert relu before neg and make neg read it.
  builder.SetInsertionPoint(n->defining_op());
  Value* r = *builder.Unary("relu", a);
  n->defining_op()->set_operand(0, r);
  ASSERT_TRUE(Verify(module).ok());
  EXPECT_EQ(g->ops().front()->kind(), "relu");
  EXPECT_EQ(g->ops().back()->kind(), "neg");
  // Erase from the middle of a longer list.
  builder.SetInsertionPoint(nullptr);
  Value* e = *builder.Unary("exp", a);
  g->Erase(r->defining_op());
  n->defining_op()->set_operand(0, a);
  g->Erase(e->defining_op());
  ASSERT_TRUE(Verify(module).ok());
  EXPECT_EQ(g->ops().size(), 1u);
}

TEST(ModuleTest, GraphsKnowTheirModuleAcrossMoves) {
  Module module;
  Graph* g = module.AddGraph("g");
  Graph* h = module.AddGraph("h");
  EXPECT_EQ(g->module(), &module);
  Module moved(std::move(module));
  EXPECT_EQ(g->module(), &moved);
  Module assigned;
  assigned = std::move(moved);
  EXPECT_EQ(h->module(), &assigned);
  assigned.EraseGraph(g);
  EXPECT_EQ(assigned.graphs().size(), 1u);
  EXPECT_EQ(assigned.FindGraph("g"), nullptr);
  Graph standalone("s");
  EXPECT_EQ(standalone.module(), nullptr);
}

// A graph @main calling @body through fusion, with the given body signature.
std::string VerifyFusion(TensorType param, TensorType result,
                         bool self_call = false) {
  Module module;
  Graph* g = module.AddGraph("main");
  Value* x = g->AddParam("x", TensorType(DType::kF32, {2}));
  AttrMap attrs = {{"body", Attribute::Symbol(self_call ? "main" : "body")},
                   {"kind", Attribute::String("elementwise")}};
  Value* f = *Builder(g).Create("fusion", {x}, attrs, {x->type()});
  g->SetResults({f});
  g->SetDeclaredResultTypes({f->type()});
  Graph* body = module.AddGraph("body");
  Value* a = body->AddParam("a", param);
  Value* r = *Builder(body).Unary("relu", a);
  body->SetResults({r});
  body->SetDeclaredResultTypes({result});
  absl::Status s = Verify(module);
  return s.ok() ? "ok" : std::string(s.message());
}

TEST(VerifierTest, ChecksFusionBodies) {
  TensorType f2(DType::kF32, {2});
  EXPECT_EQ(VerifyFusion(f2, f2), "ok");
  EXPECT_NE(VerifyFusion(TensorType(DType::kF32, {3}),
                         TensorType(DType::kF32, {3}))
                .find("operand 0 of fusion has type f32[2]"),
            std::string::npos);
  EXPECT_NE(VerifyFusion(f2, f2, /*self_call=*/true).find("calls itself"),
            std::string::npos);
}

TEST(VerifierTest, FusionNeedsAWrittenTypeAndAKnownKind) {
  Module module;
  Graph* g = module.AddGraph("main");
  Value* x = g->AddParam("x", TensorType(DType::kF32, {2}));
  Builder b(g);
  AttrMap attrs = {{"body", Attribute::Symbol("main")},
                   {"kind", Attribute::String("elementwise")}};
  EXPECT_FALSE(b.Create("fusion", {x}, attrs).ok());
  attrs["kind"] = Attribute::String("magic");
  EXPECT_FALSE(b.Create("fusion", {x}, attrs, {x->type()}).ok());
  attrs["kind"] = Attribute::String("matmul");
  EXPECT_TRUE(b.Create("fusion", {x}, attrs, {x->type()}).ok());
}

}  // namespace
}  // namespace hgc
