#include "codegen/matmul_layers.h"

#include "gtest/gtest.h"

namespace hgc {
namespace codegen {
namespace {

// The matrix MapBatch says output batch `b` reads, as the tile loop
// computes it.
int64_t Matrix(const BatchMap& map, int64_t b) {
  int64_t index = 0;
  for (const BatchMap::Run& r : map.runs) {
    index += b / r.inner % r.extent * r.stride;
  }
  return index;
}

TEST(MapBatchTest, FullBatchIsOneRun) {
  BatchMap map = *MapBatch({2, 3, 7, 5}, {2, 3, 7, 4});
  ASSERT_EQ(map.runs.size(), 1u);
  EXPECT_EQ(map.runs[0].inner, 1);
  EXPECT_EQ(map.runs[0].extent, 6);
  EXPECT_EQ(map.runs[0].stride, 1);
  EXPECT_EQ(map.matrices, 6);
}

TEST(MapBatchTest, SharedMatrixHasNoRuns) {
  EXPECT_TRUE(MapBatch({7, 5}, {2, 3, 7, 4})->runs.empty());
  BatchMap ones = *MapBatch({1, 1, 7, 5}, {2, 3, 7, 4});
  EXPECT_TRUE(ones.runs.empty());
  EXPECT_EQ(ones.matrices, 1);
}

TEST(MapBatchTest, BroadcastDimsReadTheSameMatrix) {
  // K of grouped-query attention: [b, kv, 1] against [b, kv, group].
  BatchMap kv = *MapBatch({2, 2, 1, 9, 16}, {2, 2, 3, 9, 9});
  EXPECT_EQ(kv.matrices, 4);
  for (int64_t b = 0; b < 12; ++b) {
    EXPECT_EQ(Matrix(kv, b), b / 3) << b;
  }
  // Broadcast inner dim, then a rank difference: [3] against [2, 3] and
  // [2, 1] against [2, 3].
  BatchMap inner = *MapBatch({3, 7, 32}, {2, 3, 7, 5});
  BatchMap outer = *MapBatch({2, 1, 7, 32}, {2, 3, 7, 5});
  for (int64_t b = 0; b < 6; ++b) {
    EXPECT_EQ(Matrix(inner, b), b % 3) << b;
    EXPECT_EQ(Matrix(outer, b), b / 3) << b;
  }
  // Broadcast in two separated dims: [2, 1, 4, 1] against [2, 3, 4, 5].
  BatchMap two = *MapBatch({2, 1, 4, 1, 6, 6}, {2, 3, 4, 5, 6, 6});
  ASSERT_EQ(two.runs.size(), 2u);
  for (int64_t b = 0; b < 120; ++b) {
    const int64_t i0 = b / 60, i2 = b / 5 % 4;
    EXPECT_EQ(Matrix(two, b), i0 * 4 + i2) << b;
  }
}

TEST(MapBatchTest, RefusesShapesThatDoNotBroadcast) {
  EXPECT_FALSE(MapBatch({4, 7, 5}, {2, 3, 7, 4}).ok());
  EXPECT_FALSE(MapBatch({2, 2, 3, 7, 5}, {2, 3, 7, 4}).ok());
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
