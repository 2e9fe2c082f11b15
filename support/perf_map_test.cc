#include "support/perf_map.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace hgc {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : ".") + "/" + name;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PerfMapTest, WritesOneHexLinePerRecord) {
  const std::string path = TempPath("lines.map");
  std::remove(path.c_str());
  absl::StatusOr<std::unique_ptr<PerfMap>> map = PerfMap::Open(path);
  ASSERT_TRUE(map.ok()) << map.status();
  (*map)->Record(reinterpret_cast<const void*>(0x7f0012340000), 0x1a0,
                 "brgemm:avx2:f32f32f32:M6N16K64");
  (*map)->Record(reinterpret_cast<const void*>(0x1000), 16, "name with\nbreak");
  // Written before the map is closed.
  EXPECT_EQ(ReadAll(path),
            "7f0012340000 1a0 brgemm:avx2:f32f32f32:M6N16K64\n"
            "1000 10 name with break\n");
}

TEST(PerfMapTest, AppendsToAnExistingMap) {
  const std::string path = TempPath("append.map");
  std::remove(path.c_str());
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<std::unique_ptr<PerfMap>> map = PerfMap::Open(path);
    ASSERT_TRUE(map.ok()) << map.status();
    (*map)->Record(reinterpret_cast<const void*>(0x2000 + i), 1, "f");
  }
  EXPECT_EQ(ReadAll(path), "2000 1 f\n2001 1 f\n");
}

TEST(PerfMapTest, ConcurrentRecordsKeepWholeLines) {
  const std::string path = TempPath("threads.map");
  std::remove(path.c_str());
  absl::StatusOr<std::unique_ptr<PerfMap>> map = PerfMap::Open(path);
  ASSERT_TRUE(map.ok()) << map.status();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&map, t] {
      for (int i = 0; i < 100; ++i) {
        (*map)->Record(reinterpret_cast<const void*>(0x1000 * (t + 1)), 8,
                       "kernel_of_some_length");
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::vector<std::string> lines =
      absl::StrSplit(ReadAll(path), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 400u);
  for (const std::string& line : lines) {
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    ASSERT_EQ(fields.size(), 3u) << line;
    EXPECT_EQ(fields[1], "8");
    EXPECT_EQ(fields[2], "kernel_of_some_length");
  }
}

TEST(PerfMapTest, UnopenablePathIsAnError) {
  absl::StatusOr<std::unique_ptr<PerfMap>> map =
      PerfMap::Open(TempPath("no_such_dir/x.map"));
  EXPECT_FALSE(map.ok());
}

}  // namespace
}  // namespace hgc
