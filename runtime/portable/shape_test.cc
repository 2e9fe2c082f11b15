// reshape, transpose and constant of the portable kernels.
#include "gtest/gtest.h"
#include "runtime/portable/test_util.h"
#include "runtime/portable/evaluate.h"

namespace hgc {
namespace portable {
namespace {

using namespace testing_util;  // NOLINT

std::vector<double> Iota(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

TEST(ReshapeTest, InfersMinusOneAndKeepsOrder) {
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r = Eval("reshape", {x}, {{"shape", Ints({3, -1})}});
  EXPECT_EQ(r.type(), TensorType(DType::kF32, {3, 2}));
  ExpectValues(r, {1, 2, 3, 4, 5, 6});
  Tensor flat = Eval("reshape", {x}, {{"shape", Ints({-1})}});
  EXPECT_EQ(flat.shape(), (Shape{6}));
  Tensor s = Eval("reshape", {F32({1, 1}, {7})}, {{"shape", Ints({})}});
  EXPECT_EQ(s.shape(), (Shape{}));
  ExpectValues(s, {7});
  Tensor u = Eval("reshape", {T(DType::kU8, {4}, {1, 2, 250, 4})},
                  {{"shape", Ints({2, 1, 2})}});
  EXPECT_EQ(u.type(), TensorType(DType::kU8, {2, 1, 2}));
  ExpectValues(u, {1, 2, 250, 4});
}

TEST(TransposeTest, DefaultReversesDims) {
  Tensor r = Eval("transpose", {F32({2, 3}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  ExpectValues(r, {1, 4, 2, 5, 3, 6});
}

TEST(TransposeTest, ThreeDimPerm) {
  // x[a, b, c] = 12a + 4b + c on [2, 3, 4]; perm [1, 2, 0] gives
  // out[b, c, a] = x[a, b, c], shape [3, 4, 2].
  Tensor x = F32({2, 3, 4}, Iota(24));
  Tensor r = Eval("transpose", {x}, {{"perm", Ints({1, 2, 0})}});
  EXPECT_EQ(r.shape(), (Shape{3, 4, 2}));
  // First row by hand: out[0, 0, :] = {x[0,0,0], x[1,0,0]} = {0, 12};
  // out[0, 1, :] = {1, 13}; out[2, 3, :] = {11, 23}.
  EXPECT_EQ(r.GetDouble(0), 0);
  EXPECT_EQ(r.GetDouble(1), 12);
  EXPECT_EQ(r.GetDouble(2), 1);
  EXPECT_EQ(r.GetDouble(3), 13);
  EXPECT_EQ(r.GetDouble(22), 11);
  EXPECT_EQ(r.GetDouble(23), 23);
  for (int b = 0; b < 3; ++b) {
    for (int c = 0; c < 4; ++c) {
      for (int a = 0; a < 2; ++a) {
        EXPECT_EQ(r.GetDouble((b * 4 + c) * 2 + a), 12 * a + 4 * b + c);
      }
    }
  }
}

TEST(TransposeTest, NegativePermEntries) {
  // [-1, 0, -2] = [2, 0, 1]: out[c, a, b] = x[a, b, c], shape [4, 2, 3].
  Tensor x = T(DType::kS8, {2, 3, 4}, Iota(24));
  Tensor r = Eval("transpose", {x}, {{"perm", Ints({-1, 0, -2})}});
  EXPECT_EQ(r.type(), TensorType(DType::kS8, {4, 2, 3}));
  for (int c = 0; c < 4; ++c) {
    for (int a = 0; a < 2; ++a) {
      for (int b = 0; b < 3; ++b) {
        EXPECT_EQ(r.GetDouble((c * 2 + a) * 3 + b), 12 * a + 4 * b + c);
      }
    }
  }
  // Identity perm.
  ExpectValues(Eval("transpose", {x}, {{"perm", Ints({0, 1, 2})}}), Iota(24));
}

TEST(TransposeTest, KeepsBf16Bits) {
  Tensor x = Bits16(DType::kBF16, {2, 2}, {0x3F80, 0x7FC1, 0x0001, 0xC000});
  Tensor r = Eval("transpose", {x});
  EXPECT_EQ(Bits(r), (std::vector<uint16_t>{0x3F80, 0x0001, 0x7FC1, 0xC000}));
}

TEST(ConstantTest, FillsEveryElement) {
  Tensor r = Eval("constant", {}, {{"value", F(1.5)}},
                  TensorType(DType::kF32, {2, 2}));
  EXPECT_EQ(r.type(), TensorType(DType::kF32, {2, 2}));
  ExpectValues(r, {1.5, 1.5, 1.5, 1.5});
  ExpectValues(Eval("constant", {}, {{"value", I(3)}}, TensorType(DType::kF32)),
               {3});
  ExpectValues(Eval("constant", {}, {{"value", I(-7)}},
                    TensorType(DType::kS8, {3})),
               {-7, -7, -7});
  ExpectValues(Eval("constant", {}, {{"value", B(true)}},
                    TensorType(DType::kBool, {2})),
               {1, 1});
}

TEST(ConstantTest, FlatListRowMajor) {
  ExpectValues(Eval("constant", {}, {{"value", Ints({-1, 0, 127, 5})}},
                    TensorType(DType::kS8, {2, 2})),
               {-1, 0, 127, 5});
  ExpectValues(Eval("constant", {}, {{"value", Floats({0.5, -2, 3})}},
                    TensorType(DType::kF32, {3})),
               {0.5, -2, 3});
  ExpectValues(Eval("constant", {},
                    {{"value", Attribute::MakeList({B(true), B(false),
                                                    B(true)})}},
                    TensorType(DType::kBool, {3})),
               {1, 0, 1});
  ExpectValues(Eval("constant", {}, {{"value", Ints({1, 0})}},
                    TensorType(DType::kBool, {2})),
               {1, 0});
}

TEST(ConstantTest, RoundsOnceToLowPrecision) {
  // 0.1 -> bf16 0x3DCD = 0.10009765625; -> f16 0x2E66 = 0.0999755859375.
  Tensor b = Eval("constant", {}, {{"value", F(0.1)}},
                  TensorType(DType::kBF16, {2}));
  EXPECT_EQ(Bits(b), (std::vector<uint16_t>{0x3DCD, 0x3DCD}));
  Tensor h = Eval("constant", {}, {{"value", F(0.1)}},
                  TensorType(DType::kF16, {1}));
  EXPECT_EQ(Bits(h), (std::vector<uint16_t>{0x2E66}));
  ExpectValues(h, {0.0999755859375});
}

TEST(ConstantTest, NeedsResultType) {
  absl::StatusOr<Tensor> r = EvaluateOp("constant", {}, {{"value", F(1)}});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace portable
}  // namespace hgc
