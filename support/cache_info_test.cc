#include "support/cache_info.h"

#include <cstdio>

#include "gtest/gtest.h"

namespace hgc {
namespace {

TEST(CacheInfoTest, SizesArePlausible) {
  const CacheInfo& info = HostCacheInfo();
  std::printf("L1d %lld bytes, L2 %lld bytes\n",
              static_cast<long long>(info.l1d_bytes),
              static_cast<long long>(info.l2_bytes));
  EXPECT_GE(info.l1d_bytes, 4 << 10);
  EXPECT_LE(info.l1d_bytes, 1 << 20);
  EXPECT_GE(info.l2_bytes, info.l1d_bytes);
  EXPECT_EQ(&HostCacheInfo(), &info);
}

}  // namespace
}  // namespace hgc
