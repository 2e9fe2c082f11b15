// quantized-matmul: which matmuls become integer matmuls, and that the
// rewritten graph computes each element as the exact integer sum of
// (a - za) (b - zb) scaled once, over the full u8 / s8 ranges.
#include "passes/quantized_matmul.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::CountOps;
using pass_test::ExpectSameNumbers;
using pass_test::Parse;
using pass_test::RunPipeline;

// A u8 or s8 tensor of `type` covering its whole range (both ends
// included), in a pattern that differs per tensor.
Tensor FullRange(const TensorType& type, int salt) {
  absl::StatusOr<Tensor> t = Tensor::Create(type);
  EXPECT_TRUE(t.ok()) << t.status();
  const int64_t n = type.NumElements();
  for (int64_t i = 0; i < n; ++i) {
    const int v = static_cast<int>((i * 37 + salt * 11 + (i * i) % 7) % 256);
    if (type.dtype == DType::kU8) {
      t->mutable_data<uint8_t>()[i] = static_cast<uint8_t>(v);
    } else {
      t->mutable_data<int8_t>()[i] = static_cast<int8_t>(v - 128);
    }
  }
  return *std::move(t);
}

int64_t At(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kU8 ? t.data<uint8_t>()[i] : t.data<int8_t>()[i];
}

// One 2-D case: y[m, n] = sa * sb[n] * sum_k (a[m, k] - za) (b[k, n] - zb[n])
// with a [M, K] and b [K, N] (or transposed as the flags say).
struct Case {
  std::string text;  // graph @g(%a, %b) -> f32[M, N]
  int64_t m, n, k;
  bool transpose_a = false, transpose_b = false;
  double sa;
  int64_t za;
  std::vector<double> sb;   // one, or one per column
  std::vector<int64_t> zb;  // one, or one per column
};

// Runs the rewritten graph on full-range inputs and compares each element
// with the exact sum, rounded once to f32 and multiplied by the f32 scale
// (the dequantize of an s32): equal bits.
void ExpectExact(const Case& c) {
  Module m = Parse(c.text);
  absl::StatusOr<int> n = RewriteQuantizedMatmuls(m);
  ASSERT_TRUE(n.ok()) << n.status();
  ASSERT_EQ(*n, 1) << c.text;
  const Graph& g = *m.graphs()[0];
  ASSERT_TRUE(Verify(m).ok());
  std::vector<Tensor> inputs = {FullRange(g.param(0)->type(), 1),
                                FullRange(g.param(1)->type(), 2)};
  absl::StatusOr<std::vector<Tensor>> out = Interpret(g, inputs);
  ASSERT_TRUE(out.ok()) << out.status();
  const Tensor& y = (*out)[0];
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      const size_t ch = c.sb.size() == 1 ? 0 : j;
      const int64_t zb = c.zb[c.zb.size() == 1 ? 0 : j];
      int64_t sum = 0;
      for (int64_t k = 0; k < c.k; ++k) {
        const int64_t a =
            At(inputs[0], c.transpose_a ? k * c.m + i : i * c.k + k);
        const int64_t b =
            At(inputs[1], c.transpose_b ? j * c.k + k : k * c.n + j);
        sum += (a - c.za) * (b - zb);
      }
      const float scale =
          static_cast<float>(static_cast<double>(static_cast<float>(c.sa)) *
                             static_cast<float>(c.sb[ch]));
      const float expected = static_cast<float>(sum) * scale;
      ASSERT_EQ(y.data<float>()[i * c.n + j], expected)
          << "at [" << i << ", " << j << "], sum " << sum << "\n"
          << c.text;
    }
  }
}

TEST(QuantizedMatmulTest, U8TimesS8WithActivationZeroPoint) {
  ExpectExact({R"(
graph @g(%a: u8[5, 300], %b: s8[300, 7] const) -> f32[5, 7] {
  %da = dequantize(%a) {scale = 0.02, zero_point = 131}
  %db = dequantize(%b) {scale = 0.003}
  %y = matmul(%da, %db)
  return %y
})",
               5,
               7,
               300,
               false,
               false,
               0.02,
               131,
               {0.003},
               {0}});
}

TEST(QuantizedMatmulTest, U8WeightsWithZeroPoint128PerChannel) {
  ExpectExact({R"(
graph @g(%a: u8[4, 33], %b: u8[33, 3] const) -> f32[4, 3] {
  %da = dequantize(%a) {scale = 0.5, zero_point = 0}
  %db = dequantize(%b) {scale = [0.25, 0.125, 3.0], zero_point = 128, axis = 1}
  %y = matmul(%da, %db)
  return %y
})",
               4,
               3,
               33,
               false,
               false,
               0.5,
               0,
               {0.25, 0.125, 3.0},
               {128}});
}

TEST(QuantizedMatmulTest, BothZeroPointsAndTransposes) {
  // s8 a with za = -5, u8 b with per-channel zero points (zr != 0): the
  // row sums of a, K * za * zr and the transposes of both sums.
  ExpectExact({R"(
graph @g(%a: s8[40, 6], %b: u8[4, 40]) -> f32[6, 4] {
  %da = dequantize(%a) {scale = 0.1, zero_point = -5}
  %db = dequantize(%b) {scale = 0.01, zero_point = [77, 0, 255, 128], axis = 0}
  %y = matmul(%da, %db) {transpose_a = true, transpose_b = true}
  return %y
})",
               6,
               4,
               40,
               true,
               true,
               0.1,
               -5,
               {0.01},
               {77, 0, 255, 128}});
  // Weights stored [N, K] and transposed by an op (as Gemm's transB is
  // exported): read through the transpose with the flag flipped.
  ExpectExact({R"(
graph @g(%a: u8[5, 30], %b: s8[6, 30] const) -> f32[5, 6] {
  %da = dequantize(%a) {scale = 0.02, zero_point = 7}
  %db = dequantize(%b) {scale = [0.5, 0.25, 0.125, 1.0, 2.0, 4.0], axis = 0}
  %bt = transpose(%db) {perm = [1, 0]}
  %y = matmul(%da, %bt)
  return %y
})",
               5,
               6,
               30,
               false,
               true,
               0.02,
               7,
               {0.5, 0.25, 0.125, 1.0, 2.0, 4.0},
               {0}});
  // The same sums from an s8 b (no shift) with one zero point.
  ExpectExact({R"(
graph @g(%a: u8[3, 64], %b: s8[64, 9]) -> f32[3, 9] {
  %da = dequantize(%a) {scale = 1.0, zero_point = 255}
  %db = dequantize(%b) {scale = 1.0, zero_point = -128}
  %y = matmul(%da, %db)
  return %y
})",
               3,
               9,
               64,
               false,
               false,
               1.0,
               255,
               {1.0},
               {-128}});
}

TEST(QuantizedMatmulTest, IntegerMatmulsWithU8BKeepTheirBits) {
  const char* graphs[] = {
      R"(
graph @g(%a: u8[7, 70], %b: u8[70, 5]) -> s32[7, 5] {
  %y = matmul(%a, %b)
  return %y
})",
      R"(
graph @g(%a: s8[3, 40, 6], %b: u8[1, 9, 40] const) -> s32[3, 6, 9] {
  %y = matmul(%a, %b) {transpose_a = true, transpose_b = true}
  return %y
})",
  };
  for (const char* text : graphs) {
    Module original = Parse(text);
    Module m = Parse(text);
    absl::StatusOr<int> n = RewriteQuantizedMatmuls(m);
    ASSERT_TRUE(n.ok()) << n.status();
    ASSERT_EQ(*n, 1) << text;
    ASSERT_TRUE(Verify(m).ok());
    const Graph& before = *original.graphs()[0];
    const Graph& after = *m.graphs()[0];
    for (const auto& op : after.ops()) {
      if (op->kind() != "matmul") continue;
      EXPECT_EQ(op->operand(1)->type().dtype, DType::kS8) << text;
    }
    std::vector<Tensor> inputs = {FullRange(before.param(0)->type(), 3),
                                  FullRange(before.param(1)->type(), 4)};
    absl::StatusOr<std::vector<Tensor>> e = Interpret(before, inputs);
    absl::StatusOr<std::vector<Tensor>> a = Interpret(after, inputs);
    ASSERT_TRUE(e.ok() && a.ok());
    ASSERT_EQ((*a)[0].type(), (*e)[0].type());
    EXPECT_EQ(
        std::memcmp((*a)[0].raw(), (*e)[0].raw(), (*e)[0].size_in_bytes()), 0)
        << text;
  }
}

TEST(QuantizedMatmulTest, KeepsTheValuesWithinTolerancesOnBatches) {
  // Batched with broadcasting, seeded random inputs: the f32 chain before
  // and the integer one after agree within the f32 tolerances.
  ExpectSameNumbers(R"(
graph @g(%x: f32[2, 3, 10, 48], %w: u8[3, 48, 24] const) -> f32[2, 3, 10, 24] {
  %q = quantize(%x) {scale = 0.01, zero_point = 128, to = u8}
  %da = dequantize(%q) {scale = 0.01, zero_point = 128}
  %db = dequantize(%w) {scale = 0.02, zero_point = 30}
  %y = matmul(%da, %db)
  %r = relu(%y)
  return %r
})",
                    "quantized-matmul");
}

TEST(QuantizedMatmulTest, RewritesIntoAnS32MatmulAndOneDequantize) {
  Module m = Parse(R"(
graph @g(%x: u8[8, 16], %w: s8[16, 4] const) -> f32[8, 4] {
  %dx = dequantize(%x) {scale = 0.5, zero_point = 128}
  %dw = dequantize(%w) {scale = 0.25}
  %y = matmul(%dx, %dw)
  return %y
})");
  ASSERT_TRUE(RunPipeline(m, "quantized-matmul").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(CountOps(g, "matmul"), 1);
  EXPECT_EQ(CountOps(g, "dequantize"), 1);  // the operands' ones are erased
  EXPECT_EQ(CountOps(g, "reduce_sum"), 1);  // w's column sums only
  const Op& last = *g.ops().back();
  EXPECT_EQ(last.kind(), "dequantize");
  EXPECT_EQ(last.result()->name(), "y");
  EXPECT_DOUBLE_EQ(last.FindAttr("scale")->as_number(), 0.125);
  for (const auto& op : g.ops()) {
    if (op->kind() != "matmul") continue;
    EXPECT_EQ(op->operand(0)->name(), "x");
    EXPECT_EQ(op->operand(1)->name(), "w");
    EXPECT_EQ(op->result()->type().dtype, DType::kS32);
  }
}

TEST(QuantizedMatmulTest, ShiftsAU8OperandToS8Once) {
  // x times three u8 weights, and one u8 weight read twice.
  Module m = Parse(R"(
graph @g(%x: u8[6, 16], %w: u8[16, 8] const, %v: u8[16, 8] const)
    -> (f32[6, 8], f32[6, 8], f32[6, 8]) {
  %dx = dequantize(%x) {scale = 0.5, zero_point = 3}
  %dw = dequantize(%w) {scale = 0.25, zero_point = 128}
  %dv = dequantize(%v) {scale = 0.25, zero_point = 128}
  %p = matmul(%dx, %dw)
  %q = matmul(%dx, %dv)
  %r = matmul(%dx, %dw)
  return %p, %q, %r
})");
  absl::StatusOr<int> n = RewriteQuantizedMatmuls(m);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 3);
  int casts_to_s8 = 0;
  for (const auto& op : m.graphs()[0]->ops()) {
    casts_to_s8 +=
        op->kind() == "cast" && op->result()->type().dtype == DType::kS8;
  }
  EXPECT_EQ(casts_to_s8, 2);
}

TEST(QuantizedMatmulTest, LeavesOtherMatmulsAlone) {
  const char* kept[] = {
      // Weight-only quantization: an f32 activation.
      R"(
graph @g(%x: f32[4, 8], %w: s8[8, 4] const) -> f32[4, 4] {
  %dw = dequantize(%w) {scale = 0.5}
  %y = matmul(%x, %dw)
  return %y
})",
      // A per row (its scale varies along M): left to the f32 matmul.
      R"(
graph @g(%x: u8[2, 8], %w: s8[8, 4] const) -> f32[2, 4] {
  %dx = dequantize(%x) {scale = [0.5, 0.25], axis = 0}
  %dw = dequantize(%w) {scale = 0.5}
  %y = matmul(%dx, %dw)
  return %y
})",
      // B per channel along K.
      R"(
graph @g(%x: u8[2, 3], %w: s8[3, 4] const) -> f32[2, 4] {
  %dx = dequantize(%x) {scale = 0.5}
  %dw = dequantize(%w) {scale = [0.5, 0.25, 1.0], axis = 0}
  %y = matmul(%dx, %dw)
  return %y
})",
      // K * 255 * 255 past s32.
      R"(
graph @g(%x: u8[1, 40000], %w: u8[40000, 1] const) -> f32[1, 1] {
  %dx = dequantize(%x) {scale = 0.5}
  %dw = dequantize(%w) {scale = 0.5}
  %y = matmul(%dx, %dw)
  return %y
})",
      // A K near 2^60, where K * 255 * 255 does not fit an int64 either.
      R"(
graph @g(%x: u8[1, 1152921504606846976], %w: s8[1152921504606846976, 1])
    -> f32[1, 1] {
  %dx = dequantize(%x) {scale = 0.5}
  %dw = dequantize(%w) {scale = 0.5}
  %y = matmul(%dx, %dw)
  return %y
})",
      // A dequantized element overflows f32 (255 * 3e38), though the
      // combined scale (3e8) is a normal f32: the f32 chain gives inf.
      R"(
graph @g(%a: u8[2, 4], %b: u8[4, 3] const) -> f32[2, 3] {
  %da = dequantize(%a) {scale = 3e38}
  %db = dequantize(%b) {scale = 1e-30}
  %y = matmul(%da, %db)
  return %y
})",
      // Finite elements whose products overflow (255 * 2e36 * 128): the
      // f32 sum of +inf and -inf products is NaN.
      R"(
graph @g(%a: u8[2, 4], %b: u8[4, 3] const) -> f32[2, 3] {
  %da = dequantize(%a) {scale = 2e36}
  %db = dequantize(%b) {scale = 1.0, zero_point = 128}
  %y = matmul(%da, %db)
  return %y
})",
      // The combined scale underflows f32.
      R"(
graph @g(%x: s8[2, 3], %w: s8[3, 4] const) -> f32[2, 4] {
  %dx = dequantize(%x) {scale = 1e-30}
  %dw = dequantize(%w) {scale = 1e-30}
  %y = matmul(%dx, %dw)
  return %y
})",
      // A dequantized s32.
      R"(
graph @g(%x: s32[2, 3], %w: s8[3, 4] const) -> f32[2, 4] {
  %dx = dequantize(%x) {scale = 0.5}
  %dw = dequantize(%w) {scale = 0.5}
  %y = matmul(%dx, %dw)
  return %y
})",
  };
  for (const char* text : kept) {
    Module m = Parse(text);
    const int dequantizes = CountOps(*m.graphs()[0], "dequantize");
    absl::StatusOr<int> n = RewriteQuantizedMatmuls(m);
    ASSERT_TRUE(n.ok()) << n.status();
    EXPECT_EQ(*n, 0) << text;
    EXPECT_EQ(CountOps(*m.graphs()[0], "dequantize"), dequantizes) << text;
    EXPECT_EQ(CountOps(*m.graphs()[0], "matmul"), 1) << text;
  }
}

}  // namespace
}  // namespace hgc
