#include "support/system_limits.h"

#include <sys/resource.h>

#include "gtest/gtest.h"

namespace hgc {
namespace {

TEST(SystemLimitsTest, ThreadCountsAreBounded) {
  int max = MaxThreads();
  EXPECT_GE(max, 1);
  EXPECT_LE(max, kMaxThreadsEver);
  EXPECT_TRUE(CheckNumThreads(1, "--threads").ok());
  EXPECT_TRUE(CheckNumThreads(max, "--threads").ok());
  absl::Status zero = CheckNumThreads(0, "--threads");
  EXPECT_EQ(zero.code(), absl::StatusCode::kInvalidArgument);
  absl::Status many = CheckNumThreads(int64_t{max} + 1, "num_threads");
  EXPECT_EQ(many.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(many.message().rfind("num_threads must be in [1, ", 0), 0u) << many;
  EXPECT_FALSE(CheckNumThreads(1000000, "--threads").ok());
}

TEST(SystemLimitsTest, MemoryBudget) {
  std::optional<int64_t> available = AvailableMemoryBytes();
  ASSERT_TRUE(available.has_value());  // /proc/meminfo at least
  EXPECT_TRUE(CheckMemoryBudget(4096, "@g").ok());
  absl::Status s = CheckMemoryBudget(int64_t{1} << 62, "@g");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message().rfind("@g needs 4294967296.0 GiB, but only ", 0), 0u)
      << s;
}

TEST(SystemLimitsTest, AddressSpaceLimitCounts) {
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_AS, &saved), 0);
  struct rlimit small = saved;
  small.rlim_cur = rlim_t{64}
                   << 40;  // far more than in use, far less than 2^62
  if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < small.rlim_cur) {
    GTEST_SKIP() << "the hard address-space limit is lower";
  }
  ASSERT_EQ(setrlimit(RLIMIT_AS, &small), 0);
  std::string source;
  std::optional<int64_t> available = AvailableMemoryBytes(&source);
  absl::Status s = CheckMemoryBudget(int64_t{65} << 40, "@g");
  setrlimit(RLIMIT_AS, &saved);
  ASSERT_TRUE(available.has_value());
  EXPECT_LE(*available, int64_t{64} << 40);
  EXPECT_FALSE(s.ok());
}

TEST(SystemLimitsTest, FormatsBytes) {
  EXPECT_EQ(FormatBytes(800), "800 bytes");
  EXPECT_EQ(FormatBytes(int64_t{3} << 20), "3.0 MiB");
  EXPECT_EQ(FormatBytes(int64_t{3} << 29), "1.5 GiB");
}

}  // namespace
}  // namespace hgc
