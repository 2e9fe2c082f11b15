#include "codegen/runtime_helpers.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace {

// Every block and edge case: whole 16 x 16 blocks, a ragged right edge, a
// ragged bottom edge, both, and shapes smaller than one block; leading
// dimensions wider than the rows.
TEST(RuntimeHelpersTest, TransposeMatchesTheDefinitionOnEveryEdge) {
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
TEST(RuntimeHelpersTest, WidenRowsMatchesTheDefinitionForEveryPattern) {
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

}  // namespace
