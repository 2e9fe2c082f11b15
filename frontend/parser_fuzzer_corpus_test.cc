// Runs the parser fuzzer's entry point over testdata/bad_input/ (binary
// garbage, invalid UTF-8, resource-exhaustion attempts and every crasher the
// fuzzer found) so each `bazel test` re-checks them without libFuzzer.
// Every file must be rejected with a located InvalidArgument, quickly; the
// entry point itself traps on any broken invariant.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "frontend/parser.h"
#include "gtest/gtest.h"
#include "support/diagnostics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace hgc {
namespace {

std::vector<std::filesystem::path> CorpusFiles() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  std::filesystem::path dir = std::filesystem::path(srcdir ? srcdir : ".") /
                              (workspace ? workspace : "hgc") / "testdata" /
                              "bad_input";
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().filename() == "BUILD.bazel") continue;
    files.push_back(entry.path());
  }
  EXPECT_FALSE(ec) << dir << ": " << ec.message();
  return files;
}

std::string ReadBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

TEST(ParserFuzzerCorpusTest, EveryBadInputIsRejectedCleanly) {
  std::vector<std::filesystem::path> files = CorpusFiles();
  ASSERT_GE(files.size(), 10u) << "corpus not found in runfiles";
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    std::string bytes = ReadBytes(path);
    auto start = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                           bytes.size());
    SourceManager sm;
    absl::StatusOr<Module> module =
        ParseModule(bytes, path.filename().string(), sm);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    ASSERT_FALSE(module.ok()) << "a bad input parsed";
    EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(GetLoc(module.status()).has_value()) << module.status();
    // The inputs are small; a hang or quadratic blowup shows up here.
    EXPECT_LT(seconds, 2.0);
  }
}

}  // namespace
}  // namespace hgc
