#include "ir/clone.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace hgc {
namespace {

// @g calls @h through a fusion op; @h adds its two operands.
void BuildModule(Module& module) {
  const TensorType t(DType::kF32, {4});
  Graph* g = module.AddGraph("g");
  Value* x = g->AddParam("x", t);
  Value* w = g->AddParam("w", t, /*is_const=*/true);
  Op* f = g->AddOp("fusion", {x, w},
                   {{"body", Attribute::Symbol("h")},
                    {"kind", Attribute::String("elementwise")}},
                   {t});
  f->result(0)->set_name("f");
  Value* r = *Builder(g).Unary("relu", f->result(0));
  g->SetResults({r});
  g->SetDeclaredResultTypes({t});

  Graph* h = module.AddGraph("h");
  Value* a = h->AddParam("a", t);
  Value* b = h->AddParam("b", t, /*is_const=*/true);
  Value* sum = *Builder(h).Binary("add", a, b);
  h->SetResults({sum});
  h->SetDeclaredResultTypes({t});
}

TEST(CloneTest, CloneModulePrintsTheSameAndIsIndependent) {
  Module m;
  BuildModule(m);
  ASSERT_TRUE(Verify(m).ok());
  const std::string before = PrintModule(m);

  Module copy = CloneModule(m);
  EXPECT_EQ(PrintModule(copy), before);
  ASSERT_EQ(copy.graphs().size(), 2u);
  EXPECT_EQ(copy.graphs()[0]->module(), &copy);
  EXPECT_EQ(copy.FindGraph("h")->module(), &copy);
  EXPECT_NE(copy.FindGraph("g"), m.FindGraph("g"));
  EXPECT_TRUE(Verify(copy).ok());

  // Changing the copy leaves the original alone.
  Graph* g = copy.FindGraph("g");
  Value* neg = *Builder(g).Unary("neg", g->results()[0]);
  g->SetResults({neg});
  EXPECT_EQ(PrintModule(m), before);
  EXPECT_NE(PrintModule(copy), before);
}

TEST(CloneTest, CloneOpKeepsKindAttributesTypesAndNames) {
  Module m;
  BuildModule(m);
  const Graph& g = *m.FindGraph("g");
  const Op& fusion = *g.ops().front();

  Module other;
  Graph* dst = other.AddGraph("dst");
  const TensorType t(DType::kF32, {4});
  Value* p = dst->AddParam("p", t);
  Value* q = dst->AddParam("q", t, /*is_const=*/true);
  ASSERT_TRUE(Builder(dst).Unary("relu", p).ok());
  Op* last = dst->ops().back().get();
  // Inserted before `last`, reading the new graph's values.
  Op* copy = CloneOp(fusion, *dst, last, {p, q});
  EXPECT_EQ(copy->kind(), "fusion");
  EXPECT_EQ(copy->attrs(), fusion.attrs());
  EXPECT_EQ(copy->result(0)->type(), t);
  EXPECT_EQ(copy->result(0)->name(), "f");
  EXPECT_EQ(copy->operands(), (std::vector<Value*>{p, q}));
  EXPECT_EQ(dst->ops().front().get(), copy);
  EXPECT_EQ(dst->ops().back().get(), last);
}

}  // namespace
}  // namespace hgc
