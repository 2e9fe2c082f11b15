#include "codegen/attention_blocks.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace hgc {
namespace codegen {
namespace {

constexpr int64_t kKiB = 1024;

// Kᵀ, V and the score tile of one key block fit the whole L2: bert-large
// and MHA-3 (384 keys, heads 64 and 128) take their keys in one block on
// a 512 KiB L2.
TEST(ChooseAttentionBlocksTest, OneBlockWhenTheHeadFitsL2) {
  for (int64_t d : {64, 128}) {
    const AttentionBlocks b = ChooseAttentionBlocks(384, 384, d, d, 512 * kKiB);
    EXPECT_EQ(b.mb, 64) << "head " << d;
    EXPECT_EQ(b.nb, 384) << "head " << d;
  }
}

// Keys that need several blocks are split evenly, in multiples of 16.
TEST(ChooseAttentionBlocksTest, SplitsKeysEvenly) {
  // 512 KiB / (4 * (128 + 128 + 64)) = 409 keys a block: 512 keys in two.
  EXPECT_EQ(ChooseAttentionBlocks(512, 512, 128, 128, 512 * kKiB).nb, 256);
  // 256 KiB / (4 * (64 + 64 + 64)) = 341 keys a block: 384 in two.
  EXPECT_EQ(ChooseAttentionBlocks(384, 384, 64, 64, 256 * kKiB).nb, 192);
  // At most 512 keys a block: 1000 keys as 512 + 488.
  EXPECT_EQ(ChooseAttentionBlocks(128, 1000, 64, 64, 2048 * kKiB).nb, 512);
  // 600 keys as 304 + 296, not 512 + 88.
  EXPECT_EQ(ChooseAttentionBlocks(128, 600, 64, 64, 2048 * kKiB).nb, 304);
}

// Several blocks are multiples of 16 keys, at most 512.
TEST(ChooseAttentionBlocksTest, BlocksAreMultiplesOf16) {
  for (int64_t l2 : {64 * kKiB, 256 * kKiB, 512 * kKiB, 1024 * kKiB}) {
    for (int64_t keys : {1, 7, 64, 129, 383, 512, 1000, 4097}) {
      for (int64_t d : {32, 80, 128}) {
        const AttentionBlocks b = ChooseAttentionBlocks(129, keys, d, d, l2);
        SCOPED_TRACE(testing::Message()
                     << "L2 " << l2 << " keys " << keys << " head " << d);
        EXPECT_EQ(b.mb, 64);
        ASSERT_GE(b.nb, 1);
        EXPECT_LE(b.nb, keys);
        EXPECT_LE(b.nb, 512);
        if (b.nb < keys) {
          EXPECT_EQ(b.nb % 16, 0);
        }
      }
    }
  }
}

TEST(ChooseAttentionBlocksTest, ShortQueriesTakeOneQueryBlock) {
  EXPECT_EQ(ChooseAttentionBlocks(1, 384, 64, 64, 512 * kKiB).mb, 1);
  EXPECT_EQ(ChooseAttentionBlocks(7, 384, 64, 64, 512 * kKiB).mb, 7);
}

// A rounded softmax takes whole rows: all keys in one block, and query
// blocks (8 to 64 rows) whose score rows fit half of L2.
TEST(ChooseAttentionBlocksTest, WholeRows) {
  const AttentionBlocks b =
      ChooseAttentionBlocks(512, 4096, 64, 64, 1024 * kKiB, true);
  EXPECT_EQ(b.nb, 4096);
  EXPECT_EQ(b.mb, 32);  // 512 KiB / (4 * 4096) rows
  EXPECT_EQ(ChooseAttentionBlocks(512, 65536, 64, 64, 1024 * kKiB, true).mb, 8);
  EXPECT_EQ(ChooseAttentionBlocks(512, 128, 64, 64, 1024 * kKiB, true).mb, 64);
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
