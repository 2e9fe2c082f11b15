#include "support/cpu_features.h"

#include "gtest/gtest.h"

namespace hgc {
namespace {

class CpuFeaturesTest : public ::testing::Test {
 protected:
  void TearDown() override { ResetMaxIsa(); }
};

TEST_F(CpuFeaturesTest, NamesRoundTrip) {
  for (Isa isa : {Isa::kNone, Isa::kAvx2, Isa::kAvx512Core,
                  Isa::kAvx512CoreVnni, Isa::kAvx512CoreBf16,
                  Isa::kAvx512CoreFp16, Isa::kAvx512CoreAmx}) {
    absl::StatusOr<Isa> parsed = ParseIsa(IsaName(isa));
    ASSERT_TRUE(parsed.ok()) << IsaName(isa);
    EXPECT_EQ(*parsed, isa);
  }
  EXPECT_EQ(*ParseIsa("AVX512_CORE_BF16"), Isa::kAvx512CoreBf16);
  EXPECT_EQ(*ParseIsa("all"), Isa::kAvx512CoreAmx);
}

TEST_F(CpuFeaturesTest, RejectsUnknownNames) {
  absl::StatusOr<Isa> parsed = ParseIsa("avx3");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("avx512_core_vnni"),
            std::string::npos);
}

TEST_F(CpuFeaturesTest, HighestIsaFollowsTheLadder) {
  CpuFeatures f;
  EXPECT_EQ(f.HighestIsa(), Isa::kNone);
  // AVX2 needs FMA, F16C and the OS saving YMM state.
  f.avx2 = f.fma = f.os_ymm = true;
  EXPECT_EQ(f.HighestIsa(), Isa::kNone);
  f.f16c = true;
  EXPECT_EQ(f.HighestIsa(), Isa::kAvx2);
  f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = f.os_zmm = true;
  EXPECT_EQ(f.HighestIsa(), Isa::kAvx512Core);
  // BF16 without VNNI does not skip a rung.
  f.avx512_bf16 = true;
  EXPECT_EQ(f.HighestIsa(), Isa::kAvx512Core);
  f.avx512_vnni = true;
  EXPECT_EQ(f.HighestIsa(), Isa::kAvx512CoreBf16);
  f.avx512_fp16 = true;
  f.amx_tile = f.amx_bf16 = f.amx_int8 = true;
  // AMX also needs the OS to enable the tile state.
  EXPECT_EQ(f.HighestIsa(), Isa::kAvx512CoreFp16);
  f.os_amx = true;
  EXPECT_EQ(f.HighestIsa(), Isa::kAvx512CoreAmx);
  f.os_zmm = false;
  EXPECT_EQ(f.HighestIsa(), Isa::kAvx2);
  f.os_ymm = false;
  EXPECT_EQ(f.HighestIsa(), Isa::kNone);
}

TEST_F(CpuFeaturesTest, CapLowersButNeverRaises) {
  const Isa cpu = DetectCpuFeatures().HighestIsa();
  SetMaxIsa(Isa::kAvx512Core);
  EXPECT_LE(static_cast<int>(MaxIsa()), static_cast<int>(Isa::kAvx512Core));
  EXPECT_FALSE(IsaAvailable(Isa::kAvx512CoreVnni));
  EXPECT_FALSE(IsaAvailable(Isa::kAvx512CoreAmx));
  SetMaxIsa(Isa::kAvx512CoreAmx);
  EXPECT_EQ(MaxIsa(), cpu);
  EXPECT_FALSE(IsaAvailable(Isa::kNone));
  ResetMaxIsa();
  EXPECT_LE(static_cast<int>(MaxIsa()), static_cast<int>(cpu));
}

TEST_F(CpuFeaturesTest, DescribeNamesTheCap) {
  SetMaxIsa(Isa::kNone);
  const std::string line = DescribeCpu();
  EXPECT_EQ(line.rfind("cpu: ", 0), 0u) << line;
  if (DetectCpuFeatures().HighestIsa() != Isa::kNone) {
    EXPECT_NE(line.find("(cap: none)"), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace hgc
