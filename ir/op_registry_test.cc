#include "ir/op_registry.h"

#include <limits>

#include "gtest/gtest.h"

namespace hgc {
namespace {

using Types = std::vector<TensorType>;

TensorType F32(Shape s) { return TensorType(DType::kF32, std::move(s)); }

absl::StatusOr<TensorType> Infer(absl::string_view kind, Types operands,
                                 AttrMap attrs = {}, Types declared = {}) {
  absl::StatusOr<Types> r = InferResultTypes(kind, operands, attrs, declared);
  if (!r.ok()) return r.status();
  return (*r)[0];
}

TEST(OpRegistryTest, EveryDesignOpIsRegistered) {
  for (const char* name :
       {"matmul", "add", "sub", "mul", "div", "max", "min", "pow", "relu",
        "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "neg", "abs", "equal",
        "greater", "greater_equal", "less", "less_equal", "select", "gelu",
        "clamp", "softmax", "layernorm", "reduce_sum", "reduce_max",
        "reduce_mean", "reshape", "transpose", "concat", "slice", "cast",
        "quantize", "dequantize", "constant"}) {
    EXPECT_NE(OpRegistry::Get().Find(name), nullptr) << name;
  }
  EXPECT_EQ(OpRegistry::Get().Find("matmull"), nullptr);
  EXPECT_EQ(SuggestOpName("matmull"), "matmul");
  EXPECT_EQ(SuggestOpName("frobnicate"), "");
}

TEST(OpRegistryTest, MatmulShapes) {
  EXPECT_EQ(*Infer("matmul", {F32({128, 13}), F32({13, 512})}), F32({128, 512}));
  AttrMap tb = {{"transpose_b", Attribute::Bool(true)}};
  EXPECT_EQ(*Infer("matmul", {F32({8, 16, 384, 64}), F32({8, 16, 384, 64})}, tb),
            F32({8, 16, 384, 384}));
  AttrMap ta = {{"transpose_a", Attribute::Bool(true)}};
  EXPECT_EQ(*Infer("matmul", {F32({5, 3}), F32({5, 7})}, ta), F32({3, 7}));
  // Batch dims broadcast.
  EXPECT_EQ(*Infer("matmul", {F32({2, 1, 4, 5}), F32({3, 5, 6})}),
            F32({2, 3, 4, 6}));
  EXPECT_FALSE(Infer("matmul", {F32({4, 5}), F32({6, 7})}).ok());
  EXPECT_FALSE(Infer("matmul", {F32({5}), F32({5, 7})}).ok());
  TensorType u8(DType::kU8, {2, 4}), s8(DType::kS8, {4, 3});
  EXPECT_EQ(*Infer("matmul", {u8, s8}), TensorType(DType::kS32, {2, 3}));
  EXPECT_FALSE(Infer("matmul", {F32({2, 4}), s8}).ok());
}

TEST(OpRegistryTest, ElementwiseBroadcastAndDTypes) {
  EXPECT_EQ(*Infer("add", {F32({128, 512}), F32({512})}), F32({128, 512}));
  EXPECT_EQ(*Infer("mul", {F32({4, 1}), F32({1, 3})}), F32({4, 3}));
  EXPECT_FALSE(Infer("add", {F32({4, 3}), F32({4})}).ok());
  EXPECT_FALSE(Infer("add", {F32({4}), TensorType(DType::kBF16, {4})}).ok());
  EXPECT_FALSE(Infer("div", {TensorType(DType::kS32, {4}),
                             TensorType(DType::kS32, {4})}).ok());
  EXPECT_FALSE(Infer("exp", {TensorType(DType::kS8, {4})}).ok());
  EXPECT_EQ(Infer("less", {F32({2}), F32({2})})->dtype, DType::kBool);
  TensorType cond(DType::kBool, {4, 1});
  EXPECT_EQ(*Infer("select", {cond, F32({3}), F32({})}), F32({4, 3}));
  EXPECT_FALSE(Infer("select", {F32({4}), F32({4}), F32({4})}).ok());
}

TEST(OpRegistryTest, ConcatShapes) {
  AttrMap last = {{"axis", Attribute::Int(-1)}};
  EXPECT_EQ(*Infer("concat", {F32({2, 3}), F32({2, 0}), F32({2, 4})}, last),
            F32({2, 7}));
  EXPECT_EQ(*Infer("concat", {F32({5})}, {{"axis", Attribute::Int(0)}}),
            F32({5}));
  EXPECT_FALSE(Infer("concat", {F32({2, 3}), F32({3, 3})}, last).ok());
  EXPECT_FALSE(Infer("concat", {F32({2, 3}), F32({2, 3, 1})}, last).ok());
  EXPECT_FALSE(
      Infer("concat", {F32({2}), TensorType(DType::kS32, {2})}, last).ok());
  EXPECT_FALSE(Infer("concat", {F32({2})}, {{"axis", Attribute::Int(1)}}).ok());
  EXPECT_FALSE(Infer("concat", {F32({})}, {{"axis", Attribute::Int(0)}}).ok());
  EXPECT_FALSE(Infer("concat", {F32({2})}).ok());  // axis is required
}

TEST(OpRegistryTest, SliceShapes) {
  auto ints = [](std::vector<int64_t> v) { return Attribute::IntList(v); };
  // x[1:-1, ::-2] of [5, 7], and x[:, 7:2] (empty).
  EXPECT_EQ(*Infer("slice", {F32({5, 7})},
                   {{"starts", ints({1, 100})},
                    {"ends", ints({-1, -100})},
                    {"steps", ints({1, -2})}}),
            F32({3, 4}));
  EXPECT_EQ(*Infer("slice", {F32({5, 7})},
                   {{"starts", ints({7})},
                    {"ends", ints({2})},
                    {"axes", ints({-1})}}),
            F32({5, 0}));
  auto refused = [&](AttrMap attrs) {
    absl::Status s = Infer("slice", {F32({5, 7})}, attrs).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  };
  refused({{"starts", ints({0})}, {"ends", ints({1})}, {"steps", ints({0})}});
  refused({{"starts", ints({0})}, {"ends", ints({1})}, {"axes", ints({-3})}});
  refused({{"starts", ints({0, 0})},
           {"ends", ints({1, 1})},
           {"axes", ints({0, -2})}});
  refused({{"starts", ints({0})}, {"ends", ints({1, 2})}});
  refused({{"starts", ints({0, 0, 0})}, {"ends", ints({1, 1, 1})}});
  refused({{"starts", ints({0})}});
}

TEST(OpRegistryTest, AttributesAreValidated) {
  AttrMap bad_name = {{"axiz", Attribute::Int(0)}};
  absl::Status s = Infer("softmax", {F32({2, 3})}, bad_name).status();
  EXPECT_NE(s.message().find("unknown attribute 'axiz'"), std::string::npos)
      << s;
  AttrMap bad_kind = {{"axis", Attribute::Float(1.5)}};
  EXPECT_FALSE(Infer("softmax", {F32({2, 3})}, bad_kind).ok());
  AttrMap out_of_range = {{"axis", Attribute::Int(2)}};
  EXPECT_FALSE(Infer("softmax", {F32({2, 3})}, out_of_range).ok());
  EXPECT_FALSE(Infer("cast", {F32({2})}).ok());  // 'to' is required
  AttrMap gelu = {{"approximate", Attribute::String("fast")}};
  EXPECT_FALSE(Infer("gelu", {F32({2})}, gelu).ok());
  AttrMap clamp = {{"min", Attribute::Int(2)}, {"max", Attribute::Float(1.0)}};
  EXPECT_FALSE(Infer("clamp", {F32({2})}, clamp).ok());
  // Non-finite floats: a constant's data and clamp's infinite bounds only.
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  AttrMap open_clamp = {{"min", Attribute::Float(-inf)},
                        {"max", Attribute::Float(inf)}};
  EXPECT_TRUE(Infer("clamp", {F32({2})}, open_clamp).ok());
  AttrMap nan_clamp = {{"max", Attribute::Float(nan)}};
  EXPECT_FALSE(Infer("clamp", {F32({2})}, nan_clamp).ok());
  AttrMap mask = {{"value", Attribute::FloatList({0.0, -inf, nan})}};
  EXPECT_TRUE(Infer("constant", {}, mask, {F32({3})}).ok());
  EXPECT_FALSE(
      Infer("constant", {}, mask, {TensorType(DType::kS32, {3})}).ok());
  AttrMap inf_epsilon = {{"epsilon", Attribute::Float(inf)}};
  EXPECT_FALSE(
      Infer("layernorm", {F32({2, 4}), F32({4}), F32({4})}, inf_epsilon).ok());
  EXPECT_FALSE(Infer("relu", {F32({2}), F32({2})}).ok());  // arity
}

TEST(OpRegistryTest, ShapeOps) {
  AttrMap reshape = {{"shape", Attribute::IntList({-1, 4})}};
  EXPECT_EQ(*Infer("reshape", {F32({2, 3, 4})}, reshape), F32({6, 4}));
  AttrMap bad = {{"shape", Attribute::IntList({5, 5})}};
  EXPECT_FALSE(Infer("reshape", {F32({2, 3, 4})}, bad).ok());
  AttrMap two_inferred = {{"shape", Attribute::IntList({-1, -1})}};
  EXPECT_FALSE(Infer("reshape", {F32({4})}, two_inferred).ok());
  AttrMap perm = {{"perm", Attribute::IntList({0, -1, 1})}};
  EXPECT_EQ(*Infer("transpose", {F32({2, 3, 4})}, perm), F32({2, 4, 3}));
  EXPECT_EQ(*Infer("transpose", {F32({2, 3, 4})}), F32({4, 3, 2}));
  AttrMap not_perm = {{"perm", Attribute::IntList({0, 0, 1})}};
  EXPECT_FALSE(Infer("transpose", {F32({2, 3, 4})}, not_perm).ok());
}

TEST(OpRegistryTest, ReductionsAndNormalization) {
  AttrMap axes = {{"axes", Attribute::IntList({-1})},
                  {"keep_dims", Attribute::Bool(true)}};
  EXPECT_EQ(*Infer("reduce_sum", {F32({2, 3})}, axes), F32({2, 1}));
  EXPECT_EQ(*Infer("reduce_max", {F32({2, 3})}), F32({}));
  AttrMap dup = {{"axes", Attribute::IntList({1, -1})}};
  EXPECT_FALSE(Infer("reduce_mean", {F32({2, 3})}, dup).ok());
  EXPECT_EQ(*Infer("layernorm", {F32({4, 8}), F32({8}), F32({8})}),
            F32({4, 8}));
  AttrMap axis0 = {{"axis", Attribute::Int(0)}};
  EXPECT_EQ(*Infer("layernorm", {F32({4, 8}), F32({4, 8}), F32({4, 8})}, axis0),
            F32({4, 8}));
  EXPECT_FALSE(Infer("layernorm", {F32({4, 8}), F32({4}), F32({8})}).ok());
}

TEST(OpRegistryTest, QuantizationAndConstants) {
  AttrMap q = {{"scale", Attribute::Float(0.1)},
               {"zero_point", Attribute::Int(128)},
               {"to", Attribute::Type(DType::kU8)}};
  EXPECT_EQ(Infer("quantize", {F32({4})}, q)->dtype, DType::kU8);
  q["to"] = Attribute::Type(DType::kS8);  // zero point 128 does not fit s8
  EXPECT_FALSE(Infer("quantize", {F32({4})}, q).ok());
  AttrMap per_channel = {{"scale", Attribute::FloatList({0.1, 0.2})},
                         {"axis", Attribute::Int(1)}};
  TensorType s8(DType::kS8, {3, 2});
  EXPECT_EQ(*Infer("dequantize", {s8}, per_channel), F32({3, 2}));
  per_channel.erase("axis");
  EXPECT_FALSE(Infer("dequantize", {s8}, per_channel).ok());
  AttrMap negative_scale = {{"scale", Attribute::Float(-1.0)}};
  EXPECT_FALSE(Infer("dequantize", {s8}, negative_scale).ok());

  AttrMap value = {{"value", Attribute::Float(0.125)}};
  EXPECT_EQ(*Infer("constant", {}, value, {F32({})}), F32({}));
  EXPECT_FALSE(Infer("constant", {}, value).ok());  // type must be written
  AttrMap list = {{"value", Attribute::IntList({1, 2, 300})}};
  EXPECT_FALSE(Infer("constant", {}, list, {TensorType(DType::kU8, {3})}).ok());
  EXPECT_FALSE(Infer("constant", {}, list, {F32({2})}).ok());
  EXPECT_TRUE(Infer("constant", {}, list, {F32({3})}).ok());
}

TEST(OpRegistryTest, DeclaredTypeMustMatch) {
  EXPECT_TRUE(Infer("relu", {F32({2})}, {}, {F32({2})}).ok());
  EXPECT_FALSE(Infer("relu", {F32({2})}, {}, {F32({3})}).ok());
}

TEST(BroadcastShapesTest, FollowsNumpy) {
  EXPECT_EQ(*BroadcastShapes("add", {8, 1, 6, 1}, {7, 1, 5}),
            Shape({8, 7, 6, 5}));
  EXPECT_EQ(*BroadcastShapes("add", {}, {3}), Shape({3}));
  EXPECT_EQ(*BroadcastShapes("add", {0}, {1}), Shape({0}));
  EXPECT_FALSE(BroadcastShapes("add", {2, 3}, {3, 2}).ok());
}

}  // namespace
}  // namespace hgc
