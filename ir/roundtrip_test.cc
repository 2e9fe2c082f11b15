// parse -> print -> parse gives the same graph for every .graph file in
// testdata/: the printed forms of the first and the second parse are equal,
// and printing is a fixed point.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/parser.h"
#include "gtest/gtest.h"
#include "ir/printer.h"
#include "support/diagnostics.h"

namespace hgc {
namespace {

std::vector<std::filesystem::path> GraphFiles() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  std::filesystem::path root =
      std::filesystem::path(srcdir ? srcdir : ".") / "hgc" / "testdata";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           root, std::filesystem::directory_options::follow_directory_symlink)) {
    if (entry.path().extension() == ".graph" &&
        entry.path().string().find("bad_input") == std::string::npos) {
      files.push_back(entry.path());
    }
  }
  return files;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RoundTripTest, EveryTestdataGraphRoundTrips) {
  std::vector<std::filesystem::path> files = GraphFiles();
  ASSERT_GE(files.size(), 35u) << "testdata/ not found in runfiles";
  int round_tripped = 0;
  for (const auto& path : files) {
    std::string text = ReadFile(path);
    SourceManager sm;
    absl::StatusOr<Module> first = ParseModule(text, path.string(), sm);
    if (!first.ok()) {
      // Only error tests may fail to parse, and they say so in a RUN line.
      EXPECT_NE(text.find("not hgc"), std::string::npos)
          << path << " does not parse:\n"
          << FormatError(first.status(), sm);
      continue;
    }
    std::string printed = PrintModule(*first);
    absl::StatusOr<Module> second = ParseModule(printed, "printed", sm);
    ASSERT_TRUE(second.ok()) << path << ": printed form does not parse:\n"
                             << FormatError(second.status(), sm) << printed;
    EXPECT_EQ(PrintModule(*second), printed) << path;
    ++round_tripped;
  }
  EXPECT_GE(round_tripped, 35);
}

}  // namespace
}  // namespace hgc
