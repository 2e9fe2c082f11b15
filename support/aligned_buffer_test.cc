#include "support/aligned_buffer.h"

#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"

namespace hgc {
namespace {

TEST(AlignedBufferTest, SmallBuffersAreCacheLineAligned) {
  for (int64_t bytes : {int64_t{0}, int64_t{1}, int64_t{63}, int64_t{64},
                        int64_t{65}, int64_t{4096}, kHugePageThreshold - 1}) {
    std::shared_ptr<uint8_t> b = AllocateBuffer(bytes);
    ASSERT_NE(b, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.get()) % 64, 0u) << bytes;
    std::memset(b.get(), 0x5a, static_cast<size_t>(bytes));
  }
}

TEST(AlignedBufferTest, BigBuffersAreHugePageAligned) {
  for (int64_t bytes :
       {kHugePageBytes, kHugePageBytes + 1, 3 * kHugePageBytes}) {
    std::shared_ptr<uint8_t> b = AllocateBuffer(bytes);
    ASSERT_NE(b, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.get()) % kHugePageBytes, 0u)
        << bytes;
    std::memset(b.get(), 0x5a, static_cast<size_t>(bytes));
    EXPECT_EQ(b.get()[bytes - 1], 0x5a);
  }
}

TEST(AlignedBufferTest, ZeroedBuffersAreZeroAndAligned) {
  for (int64_t bytes :
       {int64_t{0}, int64_t{100}, kLazyZeroThreshold - 1, kLazyZeroThreshold,
        kLazyZeroThreshold + 1, kHugePageThreshold - 1, kHugePageThreshold,
        3 * kHugePageBytes + 5}) {
    std::shared_ptr<uint8_t> b = AllocateZeroedBuffer(bytes);
    ASSERT_NE(b, nullptr) << bytes;
    const uintptr_t align = bytes >= kHugePageThreshold ? kHugePageBytes : 64;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.get()) % align, 0u) << bytes;
    int64_t nonzero = 0;
    for (int64_t i = 0; i < bytes; ++i) nonzero += b.get()[i] != 0;
    EXPECT_EQ(nonzero, 0) << bytes;
    if (bytes > 0) {
      std::memset(b.get(), 0x5a, static_cast<size_t>(bytes));
      EXPECT_EQ(b.get()[bytes - 1], 0x5a);
    }
  }
}

TEST(AlignedBufferTest, NegativeSizeIsRefused) {
  EXPECT_EQ(AllocateBuffer(-1), nullptr);
  EXPECT_EQ(AllocateZeroedBuffer(-1), nullptr);
}

}  // namespace
}  // namespace hgc
