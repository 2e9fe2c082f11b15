// matmul of the portable kernels against hand-computed values.
#include <cmath>
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"
#include "runtime/portable/evaluate.h"
#include "runtime/portable/test_util.h"

namespace hgc {
namespace portable {
namespace {

using namespace testing_util;  // NOLINT

// [[1, 2, 3], [4, 5, 6]] x [[7, 8], [9, 10], [11, 12]] = [[58, 64], [139, 154]]
const std::vector<double> kA = {1, 2, 3, 4, 5, 6};
const std::vector<double> kAT = {1, 4, 2, 5, 3, 6};  // A^T, stored [3, 2]
const std::vector<double> kB = {7, 8, 9, 10, 11, 12};
const std::vector<double> kBT = {7, 9, 11, 8, 10, 12};  // B^T, stored [2, 3]
const std::vector<double> kC = {58, 64, 139, 154};

TEST(MatmulTest, Plain) {
  Tensor c = Eval("matmul", {F32({2, 3}, kA), F32({3, 2}, kB)});
  EXPECT_EQ(c.type(), TensorType(DType::kF32, {2, 2}));
  ExpectValues(c, kC);
}

TEST(MatmulTest, TransposeFlags) {
  ExpectValues(Eval("matmul", {F32({3, 2}, kAT), F32({3, 2}, kB)},
                    {{"transpose_a", B(true)}}),
               kC);
  ExpectValues(Eval("matmul", {F32({2, 3}, kA), F32({2, 3}, kBT)},
                    {{"transpose_b", B(true)}}),
               kC);
  ExpectValues(Eval("matmul", {F32({3, 2}, kAT), F32({2, 3}, kBT)},
                    {{"transpose_a", B(true)}, {"transpose_b", B(true)}}),
               kC);
  ExpectValues(Eval("matmul", {F32({2, 3}, kA), F32({3, 2}, kB)},
                    {{"transpose_a", B(false)}, {"transpose_b", B(false)}}),
               kC);
}

TEST(MatmulTest, TransposeBOnBf16) {
  Tensor c = Eval("matmul", {T(DType::kBF16, {2, 3}, kA),
                             T(DType::kBF16, {2, 3}, kBT)},
                  {{"transpose_b", B(true)}});
  EXPECT_EQ(c.type(), TensorType(DType::kBF16, {2, 2}));
  ExpectValues(c, kC);  // all exactly representable in bf16
}

TEST(MatmulTest, BatchWithBroadcastRhs) {
  // a [2, 2, 2]: I and diag(2, 3); b [2, 2] shared by both batches.
  Tensor c = Eval("matmul", {F32({2, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 3}),
                             F32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(c.shape(), (Shape{2, 2, 2}));
  ExpectValues(c, {1, 2, 3, 4, 2, 4, 9, 12});
}

TEST(MatmulTest, BatchBroadcastOnBothSides) {
  // a [2, 1, 1, 2] (row vectors a_i), b [1, 3, 2, 1] (column vectors b_j)
  // -> [2, 3, 1, 1] with out[i, j] = a_i . b_j.
  Tensor c = Eval("matmul", {F32({2, 1, 1, 2}, {1, 2, 3, 4}),
                             F32({1, 3, 2, 1}, {1, 0, 0, 1, 1, 1})});
  EXPECT_EQ(c.shape(), (Shape{2, 3, 1, 1}));
  ExpectValues(c, {1, 2, 3, 3, 4, 7});
}

TEST(MatmulTest, BatchedTransposeA) {
  // Two batches of A^T [3, 2] against one B [3, 2]; batch 1 is 2 * A.
  std::vector<double> at2 = kAT;
  for (double& v : at2) v *= 2;
  std::vector<double> both = kAT;
  both.insert(both.end(), at2.begin(), at2.end());
  Tensor c = Eval("matmul", {F32({2, 3, 2}, both), F32({3, 2}, kB)},
                  {{"transpose_a", B(true)}});
  ExpectValues(c, {58, 64, 139, 154, 116, 128, 278, 308});
}

TEST(MatmulTest, Bf16AccumulatesInF32AndRoundsOnce) {
  // 1 + 3 * 2^-8 = 1.01171875 is exact in f32 and a tie in bf16 between
  // 1.0078125 (odd) and 1.015625 (even). Rounding after every step would
  // give 1 (each 1 + 2^-8 ties back down to 1).
  Tensor c = Eval("matmul", {T(DType::kBF16, {1, 4}, {1, 1, 1, 1}),
                             T(DType::kBF16, {4, 1},
                               {1, 0.00390625, 0.00390625, 0.00390625})});
  EXPECT_EQ(c.dtype(), DType::kBF16);
  ExpectValues(c, {1.015625});
}

TEST(MatmulTest, Bf16ReadsDenormalOperandsAsZero) {
  // 1e-40 is a bf16 denormal: read as 0, so inf * 1e-40 is NaN and
  // 2^126 * 1e-40 adds nothing; 2^-126 (the smallest normal) is read
  // as it is. f16 and f32 operands are read exactly (1e-7 is an f16
  // denormal).
  const double inf = std::numeric_limits<double>::infinity();
  Tensor c =
      Eval("matmul", {T(DType::kBF16, {2, 2}, {inf, 0, 0x1p126, 1}),
                      T(DType::kBF16, {2, 2}, {1e-40, 0x1p-126, -1e-40, 2})});
  EXPECT_TRUE(std::isnan(c.GetDouble(0)));
  EXPECT_EQ(c.GetDouble(1), inf);
  EXPECT_EQ(c.GetDouble(2), 0);
  EXPECT_FALSE(std::signbit(c.GetDouble(2)));  // +0 + -0
  EXPECT_EQ(c.GetDouble(3), 3);
  Tensor h = Eval("matmul", {T(DType::kF16, {1, 1}, {2048}),
                             T(DType::kF16, {1, 1}, {1.1920928955078125e-07})});
  ExpectValues(h, {0.000244140625});
  Tensor f = Eval("matmul", {F32({1, 1}, {inf}), F32({1, 1}, {1e-40})});
  EXPECT_EQ(f.GetDouble(0), inf);
}

TEST(MatmulTest, F16AccumulatesInF32) {
  // 2048 + 1 + 1 = 2050 is exact in f16; per-step f16 rounding gives 2048.
  Tensor c = Eval("matmul", {T(DType::kF16, {1, 3}, {1, 1, 1}),
                             T(DType::kF16, {3, 1}, {2048, 1, 1})});
  EXPECT_EQ(c.dtype(), DType::kF16);
  ExpectValues(c, {2050});
}

TEST(MatmulTest, Int8AccumulatesInS32) {
  // u8 x s8: 255 * 127 * 4 = 129540, far beyond any 8- or 16-bit type.
  Tensor c = Eval("matmul", {T(DType::kU8, {1, 4}, {255, 255, 255, 255}),
                             T(DType::kS8, {4, 1}, {127, 127, 127, 127})});
  EXPECT_EQ(c.type(), TensorType(DType::kS32, {1, 1}));
  ExpectValues(c, {129540});
  // s8 x s8: (-128)(-128) * 3; u8 x u8: 255 * 255 * 2.
  ExpectValues(Eval("matmul", {T(DType::kS8, {1, 3}, {-128, -128, -128}),
                               T(DType::kS8, {3, 1}, {-128, -128, -128})}),
               {49152});
  ExpectValues(Eval("matmul", {T(DType::kU8, {1, 2}, {255, 255}),
                               T(DType::kU8, {2, 1}, {255, 255})}),
               {130050});
  // s8 x u8 with mixed signs: -128 * 255 + 127 * 255 = -255.
  ExpectValues(Eval("matmul", {T(DType::kS8, {1, 2}, {-128, 127}),
                               T(DType::kU8, {2, 1}, {255, 255})}),
               {-255});
}

TEST(MatmulTest, Int8LargeKTransposed) {
  // K = 1000: 255 * -128 * 1000 = -32640000, with transpose_b.
  std::vector<double> a(1000, 255), b(2000, -128);
  for (int i = 1000; i < 2000; ++i) b[i] = 1;  // second row of B^T
  Tensor c = Eval("matmul", {T(DType::kU8, {1, 1000}, a),
                             T(DType::kS8, {2, 1000}, b)},
                  {{"transpose_b", B(true)}});
  EXPECT_EQ(c.shape(), (Shape{1, 2}));
  ExpectValues(c, {-32640000, 255000});
}

TEST(MatmulTest, EmptyContractionGivesZeros) {
  Tensor c = Eval("matmul", {F32({2, 0}, {}), F32({0, 3}, {})});
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  ExpectValues(c, {0, 0, 0, 0, 0, 0});
  Tensor e = Eval("matmul", {F32({0, 2, 2}, {}), F32({2, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(e.shape(), (Shape{0, 2, 2}));
}

TEST(MatmulTest, TransposeFlagsAgreeWithTransposeOp) {
  // A 3x4 times B 4x5 built from distinct small integers, computed with and
  // without the flags; the flags must equal an explicit transpose.
  std::vector<double> a, b;
  for (int i = 0; i < 12; ++i) a.push_back(i % 5 - 2);
  for (int i = 0; i < 20; ++i) b.push_back(i % 7 - 3);
  Tensor ta = F32({3, 4}, a), tb = F32({4, 5}, b);
  Tensor plain = Eval("matmul", {ta, tb});
  Tensor at = Eval("transpose", {ta});
  Tensor bt = Eval("transpose", {tb});
  Tensor flagged = Eval("matmul", {at, bt},
                        {{"transpose_a", B(true)}, {"transpose_b", B(true)}});
  ExpectValues(flagged, Values(plain));
  // Spot check one element by hand: row 0 of A = [-2, -1, 0, 1], column 0
  // of B = [-3, 2, 0, -2] -> 6 - 2 + 0 - 2 = 2.
  EXPECT_EQ(plain.GetDouble(0), 2);
}

TEST(MatmulTest, LargeF32IsExactOnIntegers) {
  // 512^3 with small integers: every partial sum is exact in f32. Also a
  // smoke test that the i-k-j loop is fast enough for --check sized graphs.
  const int n = 512;
  std::vector<double> a(n * n), b(n * n);
  for (int i = 0; i < n * n; ++i) {
    a[i] = (i % 3) - 1;  // -1, 0, 1
    b[i] = 1;
  }
  Tensor c = Eval("matmul", {F32({n, n}, a), F32({n, n}, b)});
  // Row i of A has elements (i*n + p) % 3 - 1; n = 512 = 170*3 + 2, so each
  // row sums to the two leftover terms: rows where i*n % 3 == 0 sum
  // -1 + 0 = -1, == 1 sum 0 + 1 = 1, == 2 sum 1 + -1 = 0.
  for (int i = 0; i < n; ++i) {
    int start = static_cast<int>((static_cast<int64_t>(i) * n) % 3);
    double expected = start == 0 ? -1 : (start == 1 ? 1 : 0);
    ASSERT_EQ(c.GetDouble(static_cast<int64_t>(i) * n), expected) << i;
    ASSERT_EQ(c.GetDouble(static_cast<int64_t>(i) * n + n - 1), expected);
  }
}

}  // namespace
}  // namespace portable
}  // namespace hgc
