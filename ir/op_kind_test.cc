#include "ir/op_kind.h"

#include <string>

#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/op_registry.h"

namespace hgc {
namespace {

TEST(OpKindTest, NamesRoundTrip) {
  EXPECT_EQ(static_cast<int>(AllOpKinds().size()), kNumOpKinds);
  for (OpKind k : AllOpKinds()) {
    EXPECT_EQ(OpKindFromName(OpKindName(k)), k) << OpKindName(k);
  }
  EXPECT_EQ(OpKindFromName("matmul"), OpKind::kMatmul);
  EXPECT_EQ(OpKindFromName("reduce_mean"), OpKind::kReduceMean);
  EXPECT_EQ(OpKindFromName("matmull"), std::nullopt);
  EXPECT_EQ(OpKindFromName(""), std::nullopt);
}

// The enum table and the op registry name the same ops, and the registry's
// `elementwise` trait is IsElementwise.
TEST(OpKindTest, MatchesTheRegistry) {
  const OpRegistry& registry = OpRegistry::Get();
  for (OpKind k : AllOpKinds()) {
    const OpInfo* info = registry.Find(OpKindName(k));
    ASSERT_NE(info, nullptr) << OpKindName(k) << " is not registered";
    EXPECT_EQ(registry.Find(k), info) << OpKindName(k);
    EXPECT_EQ(info->kind, k) << OpKindName(k);
    EXPECT_EQ(info->elementwise, IsElementwise(k)) << OpKindName(k);
  }
  for (const std::string& name : registry.Names()) {
    EXPECT_TRUE(OpKindFromName(name).has_value())
        << name << " is registered but not in ir/op_kinds.def";
  }
}

// Each family enum lists exactly the kinds of its class, and converts back.
TEST(OpKindTest, FamiliesMatchTheClasses) {
  int unary = 0, binary = 0, compare = 0, reduce = 0;
  for (OpKind k : AllOpKinds()) {
    SCOPED_TRACE(OpKindName(k));
    EXPECT_EQ(AsUnary(k).has_value(), IsUnary(k));
    EXPECT_EQ(AsBinary(k).has_value(), OpClassOf(k) == OpClass::kBinary);
    EXPECT_EQ(AsCompare(k).has_value(), IsComparison(k));
    EXPECT_EQ(AsReduce(k).has_value(), IsReduction(k));
    if (auto u = AsUnary(k)) {
      EXPECT_EQ(ToOpKind(*u), k);
      ++unary;
    }
    if (auto b = AsBinary(k)) {
      EXPECT_EQ(ToOpKind(*b), k);
      ++binary;
    }
    if (auto c = AsCompare(k)) {
      EXPECT_EQ(ToOpKind(*c), k);
      ++compare;
    }
    if (auto r = AsReduce(k)) {
      EXPECT_EQ(ToOpKind(*r), k);
      ++reduce;
    }
  }
  EXPECT_EQ(unary, 12);
  EXPECT_EQ(binary, 7);
  EXPECT_EQ(compare, 5);
  EXPECT_EQ(reduce, 3);
  EXPECT_EQ(AsUnary(OpKind::kUnknown), std::nullopt);
  EXPECT_EQ(ToOpKind(UnaryKind::kGelu), OpKind::kGelu);
  EXPECT_EQ(ToOpKind(CompareKind::kLessEqual), OpKind::kLessEqual);
}

TEST(OpKindTest, Predicates) {
  EXPECT_TRUE(IsUnary(OpKind::kGelu));
  EXPECT_TRUE(IsUnary(OpKind::kClamp));
  EXPECT_FALSE(IsUnary(OpKind::kCast));
  EXPECT_TRUE(IsBinary(OpKind::kMin));
  EXPECT_TRUE(IsBinary(OpKind::kLessEqual));
  EXPECT_TRUE(IsComparison(OpKind::kGreaterEqual));
  EXPECT_FALSE(IsComparison(OpKind::kMax));
  EXPECT_TRUE(IsElementwise(OpKind::kSelect));
  EXPECT_FALSE(IsElementwise(OpKind::kQuantize));
  EXPECT_TRUE(IsPointwise(OpKind::kDequantize));
  EXPECT_FALSE(IsPointwise(OpKind::kSoftmax));
  EXPECT_TRUE(IsRowOp(OpKind::kLayernorm));
  EXPECT_TRUE(IsRowOp(OpKind::kReduceMax));
  EXPECT_TRUE(IsReduction(OpKind::kReduceSum));
  EXPECT_FALSE(IsReduction(OpKind::kSoftmax));
  for (auto pred : {IsUnary, IsBinary, IsElementwise, IsPointwise, IsRowOp}) {
    EXPECT_FALSE(pred(OpKind::kUnknown));
    EXPECT_FALSE(pred(OpKind::kMatmul));
    EXPECT_FALSE(pred(OpKind::kFusion));
    EXPECT_FALSE(pred(OpKind::kConstant));
    EXPECT_FALSE(pred(OpKind::kReshape));
  }
}

TEST(OpKindTest, FusionKinds) {
  for (FusionKind k : AllFusionKinds()) {
    EXPECT_EQ(FusionKindFromName(FusionKindName(k)), k);
  }
  EXPECT_EQ(FusionKindName(FusionKind::kMlp), "mlp");
  EXPECT_EQ(FusionKindFromName("magic"), std::nullopt);
  EXPECT_TRUE(IsMatmulFusion(FusionKind::kMlp));
  EXPECT_FALSE(IsMatmulFusion(FusionKind::kAttention));
  EXPECT_TRUE(IsRowFusion(FusionKind::kReduce));
  EXPECT_FALSE(IsRowFusion(FusionKind::kElementwise));
}

TEST(OpKindTest, OpsCacheTheirKind) {
  Module m;
  Graph* g = m.AddGraph("g");
  Value* x = g->AddParam("x", TensorType(DType::kF32, {4}));
  Builder b(g);
  Op* relu = (*b.Unary("relu", x))->defining_op();
  EXPECT_EQ(relu->kind(), "relu");
  EXPECT_EQ(relu->kind_id(), OpKind::kRelu);
  Op* odd = g->AddOp("no_such_op", {x}, {}, {x->type()});
  EXPECT_EQ(odd->kind_id(), OpKind::kUnknown);
  EXPECT_EQ(FusionKindOf(*relu), std::nullopt);
}

TEST(OpKindTest, FusionKindOf) {
  Module m;
  Graph* g = m.AddGraph("g");
  Value* x = g->AddParam("x", TensorType(DType::kF32, {4}));
  auto fusion = [&](Attribute kind) {
    return g->AddOp("fusion", {x},
                    {{"body", Attribute::Symbol("b")}, {"kind", kind}},
                    {x->type()});
  };
  Op* mlp = fusion(Attribute::String("mlp"));
  EXPECT_EQ(FusionKindOf(*mlp), FusionKind::kMlp);
  EXPECT_TRUE(IsMatmulGroup(*mlp));
  EXPECT_FALSE(IsRowGroup(*mlp));
  Op* reduce = fusion(Attribute::String("reduce"));
  EXPECT_TRUE(IsRowGroup(*reduce));
  EXPECT_FALSE(IsMatmulGroup(*reduce));
  EXPECT_EQ(FusionKindOf(*fusion(Attribute::String("magic"))), std::nullopt);
  EXPECT_EQ(FusionKindOf(*fusion(Attribute::Int(1))), std::nullopt);
}

}  // namespace
}  // namespace hgc
