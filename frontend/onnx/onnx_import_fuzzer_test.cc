// Runs the ONNX importer's fuzz entry point over testdata/onnx's models,
// every prefix of each, and seeded byte flips, so that each `bazel test`
// checks what the fuzzer checks (onnx_import_fuzzer.cc) without libFuzzer.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace hgc {
namespace {

void FuzzOne(const std::string& bytes) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()),
                         bytes.size());
}

TEST(OnnxImportFuzzerTest, ModelsTheirPrefixesAndFlips) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  const std::filesystem::path dir =
      std::filesystem::path(srcdir ? srcdir : ".") /
      (workspace ? workspace : "hgc") / "testdata" / "onnx";
  int models = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".onnx") continue;
    SCOPED_TRACE(entry.path().filename().string());
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    ++models;
    FuzzOne(bytes);
    // Prefixes in steps, so that the large models stay quick.
    const size_t step = bytes.size() / 512 + 1;
    for (size_t n = 0; n < bytes.size(); n += step) FuzzOne(bytes.substr(0, n));
    uint64_t state = 7;
    for (int trial = 0; trial < 300; ++trial) {
      std::string damaged = bytes;
      state = state * 6364136223846793005u + 1442695040888963407u;
      damaged[(state >> 33) % damaged.size()] ^= static_cast<char>(state >> 24);
      FuzzOne(damaged);
    }
  }
  EXPECT_FALSE(ec) << dir << ": " << ec.message();
  EXPECT_GE(models, 5) << "testdata/onnx not found in runfiles";
}

}  // namespace
}  // namespace hgc
