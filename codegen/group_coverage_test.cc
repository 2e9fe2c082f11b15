// Every op kind the fusion pass may place in a group has a lowering: the
// pointwise kinds (elementwise groups, matmul post-ops, the ops around a
// row op) an elemental emitter, the row kinds the row-group lowering. A
// kind added to ir/op_kinds.def and classified so that passes/fusion_rules
// groups it fails here until codegen can lower it.
#include <vector>

#include "codegen/compile.h"
#include "codegen/llvm/elemental_emitter.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/clone.h"
#include "ir/graph.h"
#include "ir/op_kind.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "passes/fusion_rules.h"
#include "passes/pipelines.h"
#include "passes/register_all_passes.h"
#include "reference/reference_interpreter.h"
#include "tensor_util/random_fill.h"
#include "tensor_util/tensor_compare.h"

namespace hgc {
namespace {

// Operands and attributes EmitElementwise takes for `kind` on 16 lanes.
struct EmitCase {
  std::vector<DType> dtypes;
  DType result;
  AttrMap attrs;
};

EmitCase CaseFor(OpKind kind) {
  if (kind == OpKind::kSelect) {
    return {{DType::kBool, DType::kF32, DType::kF32}, DType::kF32, {}};
  }
  if (kind == OpKind::kCast) return {{DType::kF32}, DType::kBF16, {}};
  if (kind == OpKind::kQuantize) {
    return {{DType::kF32}, DType::kU8, {{"scale", Attribute::Float(0.5)}}};
  }
  if (kind == OpKind::kDequantize) {
    return {{DType::kS8}, DType::kF32, {{"scale", Attribute::Float(0.5)}}};
  }
  if (IsComparison(kind)) return {{DType::kF32, DType::kF32}, DType::kBool, {}};
  if (IsBinary(kind)) return {{DType::kF32, DType::kF32}, DType::kF32, {}};
  return {{DType::kF32}, DType::kF32, {}};
}

TEST(GroupCoverageTest, EveryPointwiseKindHasAnElementalEmitter) {
  llvm::LLVMContext context;
  llvm::Module module("coverage", context);
  llvm::Function* f = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
      llvm::Function::ExternalLinkage, "f", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", f));
  auto lanes = [&](DType dtype) -> llvm::Value* {
    llvm::Type* t = dtype == DType::kBool ? b.getInt1Ty()
                    : dtype == DType::kS8 ? b.getInt8Ty()
                                          : b.getFloatTy();
    return llvm::Constant::getNullValue(llvm::FixedVectorType::get(t, 16));
  };
  int pointwise = 0;
  for (OpKind kind : AllOpKinds()) {
    if (!IsPointwise(kind)) continue;
    ++pointwise;
    SCOPED_TRACE(OpKindName(kind));
    EXPECT_TRUE(codegen::IsElementalOp(kind));
    EmitCase c = CaseFor(kind);
    std::vector<llvm::Value*> operands;
    for (DType d : c.dtypes) operands.push_back(lanes(d));
    absl::StatusOr<llvm::Value*> v = codegen::EmitElementwise(
        b, kind, c.dtypes, c.result, operands, c.attrs);
    EXPECT_TRUE(v.ok()) << v.status();
  }
  EXPECT_GT(pointwise, 20);
}

// relu(x) then the row op: one row group, which must lower natively.
TEST(GroupCoverageTest, EveryRowAnchorLowersNatively) {
  int row_kinds = 0;
  for (OpKind kind : AllOpKinds()) {
    std::optional<FusionKind> anchor = AnchorKind(kind);
    if (!anchor.has_value() || !IsRowFusion(*anchor)) continue;
    ++row_kinds;
    SCOPED_TRACE(OpKindName(kind));
    Module m;
    Graph* g = m.AddGraph("g");
    const TensorType f32(DType::kF32, {4, 24});
    Value* x = g->AddParam("x", f32);
    Builder builder(g);
    Value* y = *builder.Unary("relu", x);
    std::vector<Value*> operands = {y};
    AttrMap attrs;
    if (kind == OpKind::kLayernorm) {
      operands.push_back(g->AddParam("gamma", TensorType(DType::kF32, {24})));
      operands.push_back(g->AddParam("beta", TensorType(DType::kF32, {24})));
    }
    if (IsReduction(kind)) attrs["axes"] = Attribute::IntList({-1});
    absl::StatusOr<Value*> r =
        builder.Create(OpKindName(kind), operands, attrs);
    ASSERT_TRUE(r.ok()) << r.status();
    g->SetResults({*r});
    g->SetDeclaredResultTypes({(*r)->type()});

    CompileOptions options;
    CompileStats stats;
    options.stats = &stats;
    Module optimized = CloneModule(m);
    ASSERT_TRUE(RunPipeline("O2", GlobalPassRegistry(), optimized).ok());
    absl::StatusOr<std::unique_ptr<Executable>> exe =
        Compile(optimized, *g, options);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_EQ(stats.fallback_steps, 0);
    EXPECT_EQ(stats.native_steps, 1);
    std::vector<Tensor> inputs;
    for (int i = 0; i < g->num_params(); ++i) {
      inputs.push_back(*RandomTensor(g->param(i)->type(), 5, i));
    }
    ASSERT_TRUE((*exe)->SetConstants(inputs).ok());
    absl::StatusOr<std::vector<Tensor>> out = (*exe)->Execute(inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<Tensor> expected = *Interpret(*g, inputs);
    EXPECT_TRUE(CompareTensors((*out)[0], expected[0])->ok());
  }
  EXPECT_EQ(row_kinds, 5);
}

}  // namespace
}  // namespace hgc
