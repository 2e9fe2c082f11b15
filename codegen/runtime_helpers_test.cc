#include "codegen/runtime_helpers.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "support/cpu_features.h"

namespace {

// The helpers pick AVX-512 or AVX2 code by the ISA cap; each test runs
// with no cap (the CPU's best) and under an AVX2 cap.
class RuntimeHelpersTest : public ::testing::TestWithParam<hgc::Isa> {
 protected:
  void SetUp() override { hgc::SetMaxIsa(GetParam()); }
  void TearDown() override { hgc::ResetMaxIsa(); }
};

// Every block and edge case: whole 16 x 16 (AVX2: 8 x 8) blocks, a ragged
// right edge, a ragged bottom edge, both, and shapes smaller than one block;
// leading dimensions wider than the rows.
TEST_P(RuntimeHelpersTest, TransposeMatchesTheDefinitionOnEveryEdge) {
  for (int64_t rows : {1, 5, 16, 17, 32, 77, 129}) {
    for (int64_t cols : {1, 15, 16, 24, 33, 64, 96}) {
      const int64_t src_ld = cols + 3, dst_ld = rows + 5;
      std::vector<float> src(rows * src_ld), dst(cols * dst_ld, -1.0f);
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
      hgc_transpose_f32(src.data(), src_ld, dst.data(), dst_ld, rows, cols);
      for (int64_t c = 0; c < cols; ++c) {
        for (int64_t r = 0; r < dst_ld; ++r) {
          const float want = r < rows ? src[r * src_ld + c] : -1.0f;
          ASSERT_EQ(dst[c * dst_ld + r], want)
              << rows << "x" << cols << " at column " << c << ", row " << r;
        }
      }
    }
  }
}

// The f32 bits of a bf16 or half value, one element at a time by the
// definition (half: sign, 5-bit exponent biased by 15, 10-bit fraction).
uint32_t WidenByDefinition(uint16_t h, bool f16, bool daz) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  if (f16) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
    const int exponent = (h >> 10) & 0x1f;
    uint32_t fraction = h & 0x3ff;
    if (exponent == 0x1f) {  // inf / NaN (quieted, as vcvtph2ps does)
      bits = sign | 0x7f800000u | (fraction << 13) |
             (fraction != 0 ? 0x400000u : 0);
    } else if (exponent != 0) {
      bits = sign | static_cast<uint32_t>(exponent - 15 + 127) << 23 |
             fraction << 13;
    } else if (fraction == 0) {
      bits = sign;
    } else {  // a half denormal: normal in f32
      int e = -14;
      while ((fraction & 0x400) == 0) {
        fraction <<= 1;
        --e;
      }
      bits = sign | static_cast<uint32_t>(e + 127) << 23 |
             (fraction & 0x3ff) << 13;
    }
  }
  if (daz && (bits & 0x7f800000u) == 0) bits &= 0x80000000u;
  return bits;
}

// Every 16-bit pattern, in rows with ragged right edges, both types, with
// and without denormals as zero.
TEST_P(RuntimeHelpersTest, WidenRowsMatchesTheDefinitionForEveryPattern) {
  for (int64_t cols : {1, 15, 16, 17, 40, 80}) {
    const int64_t src_ld = cols + 2, dst_ld = cols + 7;
    const int64_t rows = (65536 + cols - 1) / cols;
    std::vector<uint16_t> src(rows * src_ld, 0);
    for (int64_t i = 0; i < rows * cols; ++i) {
      src[(i / cols) * src_ld + i % cols] = static_cast<uint16_t>(i);
    }
    for (int f16 : {0, 1}) {
      for (int daz : {0, 1}) {
        std::vector<float> dst(rows * dst_ld, -1.0f);
        hgc_widen_rows(src.data(), src_ld, dst.data(), dst_ld, rows, cols, f16,
                       daz);
        for (int64_t r = 0; r < rows; ++r) {
          for (int64_t c = 0; c < dst_ld; ++c) {
            uint32_t got;
            std::memcpy(&got, &dst[r * dst_ld + c], sizeof(got));
            uint32_t want;
            const float untouched = -1.0f;
            std::memcpy(&want, &untouched, sizeof(want));
            if (c < cols) {
              want = WidenByDefinition(src[r * src_ld + c], f16, daz);
            }
            ASSERT_EQ(got, want) << "cols " << cols << " f16 " << f16 << " daz "
                                 << daz << " at " << r << ", " << c;
          }
        }
      }
    }
  }
}

float FromBits(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

// Rounding to nearest even (ties, carries into the exponent, overflow to
// inf), NaN quieting and any destination strides.
TEST(RuntimeNarrowTest, NarrowRowsRoundsToNearestEvenWithStrides) {
  struct Case {
    uint32_t f32;
    uint16_t bf16, f16;
  };
  const Case cases[] = {
      {0x3f800000u, 0x3f80, 0x3c00},  // 1
      {0x3f808000u, 0x3f80, 0x3c04},  // 1 + 2^-8: a bf16 tie, down to even
      {0x3f818000u, 0x3f82, 0x3c0c},  // 1 + 3 * 2^-8: a tie, up to even
      {0x3f808001u, 0x3f81, 0x3c04},  // just above the tie
      {0xbf7fffffu, 0xbf80, 0xbc00},  // -(1 - 2^-24): carries into 2^0
      {0x7f7fffffu, 0x7f80, 0x7c00},  // the largest float: inf in both
      {0x477ff000u, 0x4780, 0x7c00},  // 65520: f16 rounds up to inf
      {0x33000000u, 0x3300, 0x0000},  // 2^-25: an f16 tie, down to 0
      {0x7f800000u, 0x7f80, 0x7c00},  // inf
      {0x7fa00001u, 0x7fe0, 0x7f00},  // a signalling NaN, quieted
      {0x80000000u, 0x8000, 0x8000},  // -0
  };
  constexpr int64_t kCases = sizeof(cases) / sizeof(cases[0]);
  // Two rows of the cases (the second reversed), written column-major
  // into a 3-strided destination.
  const int64_t src_ld = kCases + 1, dst_row = 1, dst_col = 3;
  std::vector<float> src(2 * src_ld, 0.0f);
  for (int64_t c = 0; c < kCases; ++c) {
    src[c] = FromBits(cases[c].f32);
    src[src_ld + c] = FromBits(cases[kCases - 1 - c].f32);
  }
  for (int f16 : {0, 1}) {
    std::vector<uint16_t> dst(dst_col * kCases + 1, 0xdead);
    hgc_narrow_rows(src.data(), src_ld, dst.data(), dst_row, dst_col, 2,
                    kCases, f16);
    for (int64_t c = 0; c < kCases; ++c) {
      const Case& a = cases[c];
      const Case& b = cases[kCases - 1 - c];
      EXPECT_EQ(dst[c * dst_col], f16 ? a.f16 : a.bf16)
          << "f16 " << f16 << " case " << c;
      EXPECT_EQ(dst[c * dst_col + 1], f16 ? b.f16 : b.bf16)
          << "f16 " << f16 << " case " << kCases - 1 - c;
      EXPECT_EQ(dst[c * dst_col + 2], 0xdead);  // between the strides
    }
  }
}

// Every byte of both types against the dequantize op's definition, with
// zero points that move the difference across zero, row strides on both
// sides, and nothing written between the rows.
TEST(RuntimeDequantizeTest, DequantizeRowsMatchesTheDefinitionForEveryByte) {
  const int64_t rows = 16, cols = 16, src_ld = 19, dst_ld = 21;
  std::vector<uint8_t> src(rows * src_ld, 0);
  for (int64_t i = 0; i < rows * cols; ++i) {
    src[(i / cols) * src_ld + i % cols] = static_cast<uint8_t>(i);
  }
  for (int is_signed : {0, 1}) {
    for (int32_t zero_point : {0, 3, -128, 128, 255}) {
      const float scale = 0.0137f;
      std::vector<float> dst(rows * dst_ld, -7.0f);
      hgc_dequantize_rows(src.data(), src_ld, dst.data(), dst_ld, rows, cols,
                          is_signed, scale, zero_point);
      // Byte 255 (row 15, column 15): -1 as s8, 255 as u8.
      EXPECT_EQ(
          dst[15 * dst_ld + 15],
          static_cast<float>((is_signed ? -1 : 255) - zero_point) * scale);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < dst_ld; ++c) {
          const uint8_t byte = src[r * src_ld + c];
          const int32_t x = is_signed ? static_cast<int8_t>(byte)
                                      : static_cast<int32_t>(byte);
          const float want =
              c < cols ? static_cast<float>(x - zero_point) * scale : -7.0f;
          ASSERT_EQ(dst[r * dst_ld + c], want)
              << "signed " << is_signed << " zero point " << zero_point
              << " at " << r << ", " << c;
        }
      }
    }
  }
}

// Bytes that cover the sign bit and both ends.
uint8_t Byte(int64_t i) { return static_cast<uint8_t>((i * 37 + 11) % 256); }

// Every depth tail of the groups of four, both signs, and the three ways
// in: K's rows (a group's bytes adjacent), V's rows (16 columns at a time
// and a ragged edge), and any strides; with and without the sums.
TEST_P(RuntimeHelpersTest, PackBIsTheVnniLayoutOfS8WithColumnSums) {
  for (int64_t depth : {1, 3, 4, 5, 18}) {
    for (int layout = 0; layout < 3; ++layout) {
      for (int is_signed : {0, 1}) {
        for (int with_sums : {0, 1}) {
          const int64_t cols = 37, ldb = 48;
          const int64_t k_stride = layout == 0 ? 1 : layout == 1 ? cols + 3 : 2;
          const int64_t n_stride = layout == 0   ? depth + 2
                                   : layout == 1 ? 1
                                                 : 2 * depth + 1;
          std::vector<uint8_t> src(cols * n_stride + depth * k_stride);
          for (size_t i = 0; i < src.size(); ++i) src[i] = Byte(i);
          const int64_t groups = (depth + 3) / 4;
          std::vector<int8_t> dst(groups * ldb * 4, 99);
          std::vector<int32_t> sums(cols, -1);
          hgc_pack_int8_b(src.data(), k_stride, n_stride, depth, cols,
                          is_signed, dst.data(), ldb, with_sums, sums.data());
          for (int64_t n = 0; n < cols; ++n) {
            int32_t sum = 0;
            for (int64_t k = 0; k < groups * 4; ++k) {
              int32_t want = 0;
              if (k < depth) {
                const uint8_t b = src[k * k_stride + n * n_stride];
                want = is_signed ? static_cast<int8_t>(b) : b - 128;
              }
              sum += want;
              ASSERT_EQ(dst[((k / 4) * ldb + n) * 4 + k % 4], want)
                  << "depth " << depth << " layout " << layout << " signed "
                  << is_signed << " k " << k << " n " << n;
            }
            EXPECT_EQ(sums[n], with_sums ? sum : -1)
                << "depth " << depth << " column " << n;
          }
          EXPECT_EQ(dst[(groups - 1) * ldb * 4 + cols * 4], 99);  // past N
        }
      }
    }
  }
}

// Rows stored contiguously (Q's rows, 32 bytes at a time and a ragged
// edge) and columns apart, both signs, with and without the sums.
TEST_P(RuntimeHelpersTest, PackAIsU8RowsWithRowSums) {
  for (int64_t col_stride : {1, 6}) {
    for (int is_signed : {0, 1}) {
      for (int with_sums : {0, 1}) {
        const int64_t rows = 5, cols = col_stride == 1 ? 45 : 19;
        const int64_t row_stride = col_stride == 1 ? cols + 2 : 1;
        std::vector<uint8_t> src(rows * row_stride + cols * col_stride);
        for (size_t i = 0; i < src.size(); ++i) src[i] = Byte(i);
        const int64_t ld = 64;
        std::vector<uint8_t> dst(rows * ld, 7);
        std::vector<int32_t> sums(rows, -1);
        hgc_pack_int8_a(src.data(), row_stride, col_stride, rows, cols,
                        is_signed, dst.data(), ld, with_sums, sums.data());
        for (int64_t r = 0; r < rows; ++r) {
          int32_t sum = 0;
          for (int64_t c = 0; c < ld; ++c) {
            int32_t want = 7;  // past the row: untouched
            if (c < cols) {
              const uint8_t b = src[r * row_stride + c * col_stride];
              want = is_signed ? static_cast<int8_t>(b) + 128 : b;
              sum += want;
            }
            ASSERT_EQ(dst[r * ld + c], want)
                << "signed " << is_signed << " at " << r << ", " << c;
          }
          EXPECT_EQ(sums[r], with_sums ? sum : -1);
        }
      }
    }
  }
}

// The zero-point terms against the sum of (a - za) * (b - zb) itself; a
// zero point of 0 needs the other operand's sums not at all (null here).
TEST_P(RuntimeHelpersTest, ToF32AppliesTheZeroPointTermsExactly) {
  const std::pair<int32_t, int32_t> zero_points[] = {
      {131, -7}, {0, -7}, {131, 0}, {0, 0}};
  for (const auto& [a_zero, b_zero] : zero_points) {
    const int64_t rows = 3, cols = 17, depth = 9, ld = 20;
    const float scale = 0.0123f;
    std::vector<uint8_t> a(rows * depth);
    std::vector<int8_t> b(depth * cols);
    for (size_t i = 0; i < a.size(); ++i) a[i] = Byte(i);
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = static_cast<int8_t>(Byte(i + 5));
    std::vector<int32_t> x(rows * ld, 0), row_sums(rows, 0), col_sums(cols, 0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        for (int64_t k = 0; k < depth; ++k) {
          x[r * ld + c] += a[r * depth + k] * b[k * cols + c];
        }
      }
      for (int64_t k = 0; k < depth; ++k) row_sums[r] += a[r * depth + k];
    }
    for (int64_t c = 0; c < cols; ++c) {
      for (int64_t k = 0; k < depth; ++k) col_sums[c] += b[k * cols + c];
    }
    // Out of place, into rows of another stride (the result's rows); the
    // elements between them stay as they were.
    const int64_t dst_ld = 23;
    const float untouched = -1.5f;
    std::vector<float> out(rows * dst_ld, untouched);
    const std::vector<int32_t> sums = x;
    hgc_int8_to_f32(x.data(), ld, rows, cols,
                    b_zero == 0 ? nullptr : row_sums.data(),
                    a_zero == 0 ? nullptr : col_sums.data(), a_zero, b_zero,
                    depth, scale, out.data(), dst_ld);
    EXPECT_EQ(x, sums);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = cols; c < dst_ld; ++c) {
        ASSERT_EQ(out[r * dst_ld + c], untouched) << r << ", " << c;
      }
      for (int64_t c = 0; c < cols; ++c) {
        int64_t exact = 0;
        for (int64_t k = 0; k < depth; ++k) {
          exact +=
              int64_t{a[r * depth + k] - a_zero} * (b[k * cols + c] - b_zero);
        }
        ASSERT_EQ(out[r * dst_ld + c], static_cast<float>(exact) * scale)
            << "zero points " << a_zero << ", " << b_zero << " at " << r << ", "
            << c;
      }
    }
  }
}

// The scores' variant: the conversion, then the scale and the mask row in
// the reference's order, and each row's 16 running maxima.
TEST_P(RuntimeHelpersTest, ScoresApplyScaleMaskAndRowMaxima) {
  const int64_t rows = 2, cols = 37, depth = 4, ld = 40;
  std::vector<int32_t> x(rows * ld), row_sums = {10, 20}, col_sums(cols);
  std::vector<float> mask(cols);
  for (int64_t c = 0; c < cols; ++c) {
    col_sums[c] = static_cast<int32_t>(c) - 5;
    mask[c] = c % 3 == 0 ? -INFINITY : 0.25f * static_cast<float>(c);
    for (int64_t r = 0; r < rows; ++r) {
      x[r * ld + c] = static_cast<int32_t>(100 * r + 7 * c) - 50;
    }
  }
  const std::vector<int32_t> acc = x;
  const int32_t a_zero = 3, b_zero = -2;
  const float scale = 0.01f, score_scale = 0.125f;
  std::vector<float> row_max(16 * rows, 0.0f);
  hgc_int8_scores(x.data(), ld, rows, cols, row_sums.data(), col_sums.data(),
                  a_zero, b_zero, depth, scale, 1, &score_scale, 1, mask.data(),
                  1, row_max.data());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> lanes(16, -INFINITY);
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t exact = acc[r * ld + c] - int64_t{b_zero} * row_sums[r] -
                            int64_t{a_zero} * col_sums[c] +
                            depth * a_zero * b_zero;
      const float want =
          static_cast<float>(exact) * scale * score_scale + mask[c];
      float got;
      std::memcpy(&got, &x[r * ld + c], 4);
      ASSERT_EQ(got, want) << r << ", " << c;
      lanes[c % 16] = std::max(lanes[c % 16], want);
    }
    for (int l = 0; l < 16; ++l) {
      EXPECT_EQ(row_max[16 * r + l], lanes[l]) << "row " << r << " lane " << l;
    }
  }
}

// Rounding half to even, saturation at both ends, NaN as 0, both types.
TEST_P(RuntimeHelpersTest, QuantizeRowsRoundsAsTheQuantizeOp) {
  const float nan = std::nanf("");
  const std::vector<float> src = {0.5f,        1.5f,   2.5f,    -0.5f,
                                  -1.5f,       300.0f, -300.0f, nan,
                                  0.49999997f, 127.5f, 1e30f};
  const int64_t cols = static_cast<int64_t>(src.size());
  struct Case {
    int32_t zero_point;
    int to_signed;
    std::vector<int32_t> want;  // the quantized values
  };
  const Case cases[] = {
      {0, 0, {0, 2, 2, 0, 0, 255, 0, 0, 0, 128, 255}},
      {10, 0, {10, 12, 12, 10, 8, 255, 0, 10, 10, 138, 255}},
      {0, 1, {0, 2, 2, 0, -2, 127, -128, 0, 0, 127, 127}},
      {-128, 1, {-128, -126, -126, -128, -128, 127, -128, -128, -128, 0, 127}},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> dst(cols, 0);
    int32_t sum = -1;
    // Divided by 2 first, then by a scale of 1: the doubled values.
    std::vector<float> doubled(src);
    for (float& x : doubled) x *= 2.0f;
    const float divisor = 2.0f;
    hgc_quantize_rows_int8(doubled.data(), cols, 1, cols, &divisor, 1.0f,
                           c.zero_point, c.to_signed, dst.data(), cols, &sum);
    int32_t want_sum = 0;
    for (int64_t i = 0; i < cols; ++i) {
      const int32_t stored = c.want[i] + (c.to_signed ? 128 : 0);
      want_sum += stored;
      EXPECT_EQ(dst[i], stored) << "zero point " << c.zero_point << " signed "
                                << c.to_signed << " element " << i;
    }
    EXPECT_EQ(sum, want_sum);
  }
}

// K keys-major (pairs adjacent, columns whole words apart or not), V's
// rows (32 and 16 columns a step and a ragged edge), and any strides; odd
// depths pad their last pair with a zero.
TEST_P(RuntimeHelpersTest, PackBf16BIsTheVnni2Layout) {
  for (int64_t depth : {1, 2, 5, 18, 33}) {
    for (int layout = 0; layout < 4; ++layout) {
      const int64_t cols = 53, ldb = 64;
      const int64_t k_stride = layout < 2 ? 1 : layout == 2 ? cols + 3 : 2;
      const int64_t n_stride = layout == 0   ? depth + depth % 2 + 2
                               : layout == 1 ? depth + 1 + depth % 2
                               : layout == 2 ? 1
                                             : 2 * depth + 1;
      std::vector<uint16_t> src(cols * n_stride + depth * k_stride);
      for (size_t i = 0; i < src.size(); ++i) {
        src[i] = static_cast<uint16_t>(i * 40503u + 7);
      }
      const int64_t pairs = (depth + 1) / 2;
      std::vector<uint16_t> dst(pairs * ldb * 2, 0xdead);
      hgc_pack_bf16_b(src.data(), k_stride, n_stride, depth, cols, dst.data(),
                      ldb);
      for (int64_t n = 0; n < cols; ++n) {
        for (int64_t k = 0; k < pairs * 2; ++k) {
          const uint16_t want =
              k < depth ? src[k * k_stride + n * n_stride] : 0;
          ASSERT_EQ(dst[((k / 2) * ldb + n) * 2 + k % 2], want)
              << "depth " << depth << " layout " << layout << " k " << k
              << " n " << n;
        }
      }
      EXPECT_EQ(dst[(pairs - 1) * ldb * 2 + cols * 2], 0xdead);  // past N
    }
  }
}

TEST_P(RuntimeHelpersTest, CopyBf16RowsTakesAnyStrides) {
  for (int64_t col_stride : {1, 7}) {
    const int64_t rows = 5, cols = 19, row_stride = col_stride == 1 ? 23 : 1;
    const int64_t dst_ld = 24;
    std::vector<uint16_t> src(rows * row_stride + cols * col_stride);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i);
    std::vector<uint16_t> dst(rows * dst_ld, 0xdead);
    hgc_copy_bf16_rows(src.data(), row_stride, col_stride, rows, cols,
                       dst.data(), dst_ld);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < dst_ld; ++c) {
        const uint16_t want =
            c < cols ? src[r * row_stride + c * col_stride] : 0xdead;
        ASSERT_EQ(dst[r * dst_ld + c], want) << r << ", " << c;
      }
    }
  }
}

// Every rounding case (ties to even either way, carries into the exponent,
// infinities, NaNs quieted, denormals), in rows with ragged right edges:
// as hgc_narrow_rows narrows them, its strides unit.
TEST_P(RuntimeHelpersTest, NarrowBf16RowsRoundsAsNarrowRows) {
  std::vector<uint32_t> bits = {0x3f808000u, 0x3f818000u, 0x3f80ffffu,
                                0x7f7fffffu, 0xff7f8000u, 0x7f800000u,
                                0x7f800001u, 0xffc12345u, 0x00008000u,
                                0x80018000u, 0x00000000u, 0x80000000u};
  for (uint32_t i = 0; i < 4000; ++i) bits.push_back(i * 1073741u + 12345u);
  for (int64_t cols : {1, 15, 16, 17, 40}) {
    const int64_t src_ld = cols + 3, dst_ld = cols + 5;
    const int64_t rows = (static_cast<int64_t>(bits.size()) + cols - 1) / cols;
    std::vector<float> src(rows * src_ld, 0.0f);
    for (size_t i = 0; i < bits.size(); ++i) {
      std::memcpy(&src[(i / cols) * src_ld + i % cols], &bits[i], 4);
    }
    std::vector<uint16_t> got(rows * dst_ld, 0xdead);
    std::vector<uint16_t> want(rows * dst_ld, 0xdead);
    hgc_narrow_bf16_rows(src.data(), src_ld, rows, cols, got.data(), dst_ld);
    hgc_narrow_rows(src.data(), src_ld, want.data(), dst_ld, 1, rows, cols, 0);
    ASSERT_EQ(got, want) << "cols " << cols;
  }
}

// The quantize op itself (a division, ties to even, NaN as the zero
// point, saturation), into rows of bytes and into columns (a transposed
// result), to u8 and to s8.
TEST_P(RuntimeHelpersTest, QuantizeOutIsTheQuantizeOp) {
  const float nan = std::nanf("");
  const int64_t rows = 3, cols = 37, src_ld = 40;
  std::vector<float> src(rows * src_ld);
  for (size_t i = 0; i < src.size(); ++i) {
    src[i] = (static_cast<float>(i % 23) - 11.0f) * 0.0375f;
  }
  src[5] = nan;
  src[6] = INFINITY;
  src[7] = -INFINITY;
  src[8] = 0.0375f * 2.5f;  // a tie in the quotient's neighbourhood
  const float scale = 0.0375f;
  for (int to_signed : {0, 1}) {
    for (int transposed : {0, 1}) {
      const int32_t zero_point = to_signed ? -3 : 120;
      const int64_t dst_row = transposed ? 1 : cols + 5;
      const int64_t dst_col = transposed ? rows + 2 : 1;
      std::vector<uint8_t> dst((cols + 5) * (rows + 2) + 8, 0xee);
      hgc_quantize_out(src.data(), src_ld, rows, cols, scale, zero_point,
                       to_signed, dst.data(), dst_row, dst_col);
      const double lo = to_signed ? -128 : 0, hi = to_signed ? 127 : 255;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const float q = src[r * src_ld + c] / scale;
          double want = std::isnan(q) ? 0.0 : std::nearbyint(q);
          want = std::clamp(want + zero_point, lo, hi);
          const uint8_t byte = dst[r * dst_row + c * dst_col];
          const int64_t got = to_signed ? static_cast<int8_t>(byte) : byte;
          ASSERT_EQ(got, static_cast<int64_t>(want))
              << "signed " << to_signed << " transposed " << transposed
              << " at " << r << ", " << c;
        }
      }
      if (!transposed) EXPECT_EQ(dst[cols], 0xee);  // between rows
    }
  }
}

INSTANTIATE_TEST_SUITE_P(IsaCaps, RuntimeHelpersTest,
                         ::testing::Values(hgc::Isa::kAvx512CoreAmx,
                                           hgc::Isa::kAvx2),
                         [](const ::testing::TestParamInfo<hgc::Isa>& info) {
                           return info.param == hgc::Isa::kAvx2
                                      ? std::string("avx2")
                                      : std::string("uncapped");
                         });

}  // namespace
