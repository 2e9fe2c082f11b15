#include "passes/fold_constants.h"

#include <cmath>

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::Optimize;
using pass_test::Parse;

TEST(FoldConstantsTest, ValueAttrIsASplatOrAList) {
  Tensor t = *Tensor::Create(TensorType(DType::kF32, {3}));
  for (int i = 0; i < 3; ++i) t.SetDouble(i, 2.5);
  EXPECT_EQ(ConstantValueAttr(t)->ToString(), "2.5");
  t.SetDouble(2, -1);
  EXPECT_EQ(ConstantValueAttr(t)->ToString(), "[2.5, 2.5, -1.0]");
  t.SetDouble(1, NAN);
  EXPECT_FALSE(ConstantValueAttr(t).has_value());
  Tensor z = *Tensor::Create(TensorType(DType::kF32, {2}));
  z.SetDouble(0, 0.0);
  z.SetDouble(1, -0.0);
  EXPECT_TRUE(ConstantValueAttr(z)->is_list());  // the sign is kept
  Tensor b = *Tensor::Create(TensorType(DType::kBool, {2}));
  b.SetDouble(0, 1);
  EXPECT_EQ(ConstantValueAttr(b)->ToString(), "[true, false]");
  Tensor i = *Tensor::Create(TensorType(DType::kS8));
  i.SetDouble(0, -7);
  EXPECT_EQ(ConstantValueAttr(i)->ToString(), "-7");
}

TEST(FoldConstantsTest, FoldsChainsAndKeepsNames) {
  std::string out = Optimize(R"(
graph @g(%x: f32[2]) -> f32[2] {
  %a = constant() {value = [1.0, 4.0]} : f32[2]
  %b = sqrt(%a)
  %c = add(%b, %b)
  %y = mul(%x, %c)
  return %y
}
)",
                             "fold-constants");
  EXPECT_NE(out.find("%c = constant() {value = [2.0, 4.0]} : f32[2]"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("sqrt"), std::string::npos) << out;
}

TEST(FoldConstantsTest, RespectsTheSizeCapAndNonFiniteResults) {
  const char* text = R"(
graph @g() -> (f32[8], f32[]) {
  %a = constant() {value = 2.0} : f32[8]
  %b = exp(%a)
  %z = constant() {value = 0.0} : f32[]
  %l = log(%z)
  return %b, %l
}
)";
  Module m = Parse(text);
  FoldConstantsOptions options;
  options.max_elements = 4;
  absl::StatusOr<int> n = FoldConstantsInGraph(*m.graphs()[0], options);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);  // exp is too big, log(0) is -inf
  options.max_elements = 8;
  n = FoldConstantsInGraph(*m.graphs()[0], options);
  EXPECT_EQ(*n, 1);
}

TEST(FoldConstantsTest, ConstParamsAreNotLiterals) {
  std::string text = R"(
graph @g(%w: f32[2] const) -> f32[2] {
  %y = exp(%w)
  return %y
}
)";
  Module m = Parse(text);
  absl::StatusOr<int> n = FoldConstantsInGraph(*m.graphs()[0], {});
  EXPECT_EQ(*n, 0);
}

TEST(FoldConstantsTest, FoldsFusionOpsThroughTheirBodies) {
  std::string out = Optimize(R"(
graph @g() -> f32[2] {
  %a = constant() {value = [1.0, -2.0]} : f32[2]
  %f = fusion(%a) {body = @b, kind = "elementwise"} : f32[2]
  return %f
}
graph @b(%x: f32[2]) -> f32[2] {
  %y = relu(%x)
  return %y
}
)",
                             "fold-constants");
  EXPECT_NE(out.find("%f = constant() {value = [1.0, 0.0]} : f32[2]"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace hgc
