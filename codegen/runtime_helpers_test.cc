#include "codegen/runtime_helpers.h"

#include <cstdint>
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

}  // namespace
