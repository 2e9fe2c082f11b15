#include "support/aligned_buffer.h"

#include <cstdint>
#include <cstring>

#include "gtest/gtest.h"

namespace hgc {
namespace {

TEST(AlignedBufferTest, SmallBuffersAreCacheLineAligned) {
  for (int64_t bytes : {0, 1, 63, 64, 65, 4096, 100000}) {
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

TEST(AlignedBufferTest, NegativeSizeIsRefused) {
  EXPECT_EQ(AllocateBuffer(-1), nullptr);
}

}  // namespace
}  // namespace hgc
