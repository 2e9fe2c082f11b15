#include "microkernels/kernel_dump.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "microkernels/brgemm_dispatch.h"
#include "microkernels/brgemm_kernel.h"
#include "support/cpu_features.h"

namespace hgc {
namespace microkernels {
namespace {

// The f32 kernel family the dispatcher picks on this CPU.
Isa F32Isa() { return *SelectBrgemmIsa(BrgemmDataType::kF32); }

TEST(KernelDumpTest, DisassemblesKnownBytes) {
  // vfmadd231ps zmm0, zmm1, zmm2 ; ret ; an undecodable byte.
  const uint8_t code[] = {0x62, 0xf2, 0x75, 0x48, 0xb8, 0xc2, 0xc3, 0x06};
  auto text = DisassembleX86(code, sizeof(code));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_NE(text->find("vfmadd231ps\tzmm0, zmm1, zmm2"), std::string::npos)
      << *text;
  EXPECT_NE(text->find("ret"), std::string::npos);
  EXPECT_NE(text->find(".byte 0x06"), std::string::npos) << *text;
}

TEST(KernelDumpTest, FileStemKeepsOnlySafeCharacters) {
  EXPECT_EQ(KernelFileStem("brgemm:avx512_core:M6N64K64:stride(1,2)"),
            "brgemm_avx512_core_M6N64K64_stride_1_2_");
}

TEST(KernelDumpTest, WritesBinAndListingOfAKernel) {
  const BrgemmDesc d =
      MakeBrgemmDesc(F32Isa(), BrgemmDataType::kF32, 6, 64, 64);
  auto kernel = BrgemmKernel::Create(d);
  ASSERT_TRUE(kernel.ok());
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  ASSERT_TRUE(DumpKernel((*kernel)->name(), (*kernel)->code(),
                         (*kernel)->code_size(), tmp)
                  .ok());
  const std::string base = std::string(tmp) + "/" + KernelFileStem(d.ToString());
  std::ifstream bin(base + ".bin", std::ios::binary);
  std::stringstream bytes;
  bytes << bin.rdbuf();
  EXPECT_EQ(bytes.str().size(), (*kernel)->code_size());
  std::ifstream s(base + ".s");
  std::stringstream listing;
  listing << s.rdbuf();
  EXPECT_EQ(listing.str().rfind("// " + d.ToString(), 0), 0u);
  EXPECT_NE(listing.str().find("vfmadd231ps"), std::string::npos);
  EXPECT_NE(listing.str().find("vbroadcastss"), std::string::npos);
  EXPECT_EQ(DumpKernel("x", (*kernel)->code(), 1, "/nonexistent-dir").code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace microkernels
}  // namespace hgc
