// With HGC_PERF_MAP=1 (set by this test's BUILD rule), every generated
// microkernel is named in perf's map of this process.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "microkernels/brgemm_dispatch.h"
#include "microkernels/brgemm_kernel.h"
#include "support/perf_map.h"

namespace hgc {
namespace microkernels {
namespace {

TEST(PerfMapEnvTest, NamesEachKernelAtItsCode) {
  const std::string path = PerfMap::ProcessMapPath();
  std::remove(path.c_str());
  const BrgemmDesc d = MakeBrgemmDesc(*SelectBrgemmIsa(BrgemmDataType::kF32),
                                      BrgemmDataType::kF32, 5, 24, 7);
  absl::StatusOr<std::unique_ptr<BrgemmKernel>> kernel =
      BrgemmKernel::Create(d);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  const std::string expected = absl::StrCat(
      absl::Hex(reinterpret_cast<uintptr_t>((*kernel)->code())), " ",
      absl::Hex((*kernel)->code_size()), " ", d.ToString(), "\n");
  EXPECT_NE(text.str().find(expected), std::string::npos)
      << "expected " << expected << "in\n"
      << text.str();
}

}  // namespace
}  // namespace microkernels
}  // namespace hgc
