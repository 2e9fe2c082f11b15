#include "microkernels/gemm_driver.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "microkernels/amx.h"
#include "microkernels/brgemm_dispatch.h"
#include "support/cpu_features.h"
#include "support/float16.h"

namespace hgc {
namespace microkernels {
namespace {

// 64-byte aligned bytes, as PackB requires.
struct AlignedBytes {
  explicit AlignedBytes(int64_t n)
      : p(static_cast<uint8_t*>(std::aligned_alloc(64, (n + 63) / 64 * 64))) {}
  ~AlignedBytes() { std::free(p); }
  uint8_t* p;
};

// C = A * B against plain loops for one data type, ISA and blocking; small
// integer inputs make every result exact.
void CheckGemm(Isa isa, BrgemmDataType dt, int64_t m, int64_t n, int64_t k,
               GemmBlocking blocking, uint32_t seed) {
  auto gemm = BrgemmGemm::Create(isa, dt, m, n, k, blocking);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  std::mt19937 rng(seed);
  // Extremes included: -128 and 127 exercise the s8s8 compensation.
  std::uniform_int_distribution<int> small(-4, 4), wide(-128, 127);
  const bool int8 = dt == BrgemmDataType::kU8S8 || dt == BrgemmDataType::kS8S8;
  std::vector<int> ai(m * k), bi(k * n);
  for (int& v : ai) {
    v = int8 ? wide(rng) : small(rng);
    if (dt == BrgemmDataType::kU8S8) v += 128;
  }
  for (int& v : bi) v = int8 ? wide(rng) : small(rng);
  const int64_t es = InputElementSize(dt);
  std::vector<uint8_t> a(m * k * es), b(k * n * es);
  auto store = [&](std::vector<uint8_t>& dst, size_t i, int v) {
    if (dt == BrgemmDataType::kF32) {
      reinterpret_cast<float*>(dst.data())[i] = static_cast<float>(v);
    } else if (dt == BrgemmDataType::kBf16) {
      reinterpret_cast<uint16_t*>(dst.data())[i] =
          FloatToBf16(static_cast<float>(v));
    } else {
      dst[i] = static_cast<uint8_t>(v);
    }
  };
  for (size_t i = 0; i < ai.size(); ++i) store(a, i, ai[i]);
  for (size_t i = 0; i < bi.size(); ++i) store(b, i, bi[i]);
  AlignedBytes packed((*gemm)->packed_b_bytes());
  ASSERT_TRUE((*gemm)->PackB(b.data(), n, packed.p).ok());
  std::vector<int32_t> c(m * n, 12345);
  (*gemm)->Run(a.data(), packed.p, c.data());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int32_t want = 0;
      for (int64_t kk = 0; kk < k; ++kk) want += ai[i * k + kk] * bi[kk * n + j];
      const int32_t got =
          int8 ? c[i * n + j]
               : static_cast<int32_t>(
                     reinterpret_cast<float*>(c.data())[i * n + j]);
      ASSERT_EQ(got, want) << DataTypeName(dt) << " C[" << i << "][" << j
                           << "] " << (*gemm)->ToString();
    }
  }
}

// Every data type on the dispatcher's ISA, with tails in every blocked
// dimension, A read in place and A packed (s8s8 on VNNI: the s8s8 kernel
// and the sign-flipping copy with compensation).
TEST(GemmDriverTest, MatchesNaiveGemmWithTails) {
  for (BrgemmDataType dt : {BrgemmDataType::kF32, BrgemmDataType::kBf16,
                            BrgemmDataType::kU8S8, BrgemmDataType::kS8S8}) {
    auto isa = SelectBrgemmIsa(dt);
    if (!isa.ok()) GTEST_SKIP() << "SKIPPED: " << isa.status().message();
    for (int pack_a : {0, 1}) {
      SCOPED_TRACE(pack_a);
      CheckGemm(*isa, dt, 37, 70, 300, {32, 96, 24, pack_a}, 5);
    }
  }
}

// The same on every family below AMX (AVX-512 int8 needs VNNI), so the
// s8s8 compensation path runs even where AMX is the dispatcher's pick, and
// on the default blocking (K of 1 KB of A: chunk-aligned, no tails).
TEST(GemmDriverTest, EveryFamilyBelowAmxAndDefaultBlocking) {
  int families = 0;
  for (BrgemmDataType dt : {BrgemmDataType::kF32, BrgemmDataType::kBf16,
                            BrgemmDataType::kU8S8, BrgemmDataType::kS8S8}) {
    const bool int8 =
        dt == BrgemmDataType::kU8S8 || dt == BrgemmDataType::kS8S8;
    const Isa avx512 = int8 ? Isa::kAvx512CoreVnni : Isa::kAvx512Core;
    for (Isa isa : {Isa::kAvx2, avx512}) {
      if (!IsaAvailable(isa)) {
        std::printf("SKIPPED: %s not available on this CPU (%s)\n",
                    std::string(IsaName(isa)).c_str(), DescribeCpu().c_str());
        continue;
      }
      ++families;
      SCOPED_TRACE(absl::StrCat(DataTypeName(dt), " on ", IsaName(isa)));
      CheckGemm(isa, dt, 200, 80, 1024 / InputElementSize(dt), GemmBlocking(),
                6);
      CheckGemm(isa, dt, 5, 17, 3, GemmBlocking(), 7);
      // s8s8 on VNNI: N, K >= 1024 default to the compensation path.
      CheckGemm(isa, dt, 5, 1030, 1024, GemmBlocking(), 9);
    }
  }
  if (families == 0) {
    GTEST_SKIP() << "SKIPPED: no AVX2 (" << DescribeCpu() << ")";
  }
}

TEST(GemmDriverTest, AmxGemmLeavesTheTilesReleased) {
  if (!IsaAvailable(Isa::kAvx512CoreAmx) || !RequestAmxPermission().ok()) {
    GTEST_SKIP() << "SKIPPED: AMX not available on this CPU";
  }
  for (BrgemmDataType dt : {BrgemmDataType::kBf16, BrgemmDataType::kU8S8,
                            BrgemmDataType::kS8S8}) {
    CheckGemm(Isa::kAvx512CoreAmx, dt, 100, 96, 200, GemmBlocking(), 8);
    EXPECT_EQ(CurrentTileConfig(), (std::array<uint8_t, 64>{}));
  }
}

TEST(GemmDriverTest, RejectsUnalignedPackedB) {
  if (!IsaAvailable(Isa::kAvx512CoreVnni)) GTEST_SKIP() << "SKIPPED: no VNNI";
  auto gemm =
      BrgemmGemm::Create(Isa::kAvx512Core, BrgemmDataType::kF32, 8, 8, 8);
  ASSERT_TRUE(gemm.ok());
  AlignedBytes packed((*gemm)->packed_b_bytes() + 64);
  std::vector<float> b(64, 1.0f);
  EXPECT_EQ((*gemm)->PackB(b.data(), 8, packed.p + 4).code(),
            absl::StatusCode::kInvalidArgument);
}

// s8s8 on VNNI picks its way from the sizes unless A packing is given.
TEST(GemmDriverTest, S8s8OnVnniCompensatesOnlyWithAPacking) {
  if (!IsaAvailable(Isa::kAvx512CoreVnni)) GTEST_SKIP() << "SKIPPED: no VNNI";
  auto name = [](int64_t n, int64_t k, int pack_a) {
    auto gemm = BrgemmGemm::Create(Isa::kAvx512CoreVnni,
                                   BrgemmDataType::kS8S8, 8, n, k,
                                   {0, 0, 0, pack_a});
    return gemm.ok() ? (*gemm)->ToString() : gemm.status().ToString();
  };
  EXPECT_EQ(name(512, 512, -1).find("s8s8comp"), std::string::npos);
  EXPECT_NE(name(512, 512, -1).find("s8s8s32"), std::string::npos);
  EXPECT_NE(name(1024, 1024, -1).find(":packa:s8s8comp over"),
            std::string::npos);
  EXPECT_NE(name(1024, 1024, -1).find("u8s8s32"), std::string::npos);
  EXPECT_EQ(name(1024, 1024, 0).find("s8s8comp"), std::string::npos);
  EXPECT_NE(name(8, 8, 1).find("s8s8comp"), std::string::npos);
}

TEST(GemmDriverTest, RejectsEmptySizes) {
  EXPECT_EQ(BrgemmGemm::Create(Isa::kAvx512Core, BrgemmDataType::kF32, 0, 1, 1)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// Without AVX-512 (or capped below it) every data type runs on the AVX2
// kernel; with AVX-512 but no VNNI, int8 does; with no AVX2, nothing does.
TEST(DispatchTest, Avx2TakesWhatAvx512CannotRun) {
  if (!IsaAvailable(Isa::kAvx2)) {
    GTEST_SKIP() << "SKIPPED: no AVX2 on this CPU (" << DescribeCpu() << ")";
  }
  SetMaxIsa(Isa::kAvx2);
  for (BrgemmDataType dt : {BrgemmDataType::kF32, BrgemmDataType::kBf16,
                            BrgemmDataType::kU8S8, BrgemmDataType::kS8S8}) {
    auto isa = SelectBrgemmIsa(dt);
    ASSERT_TRUE(isa.ok()) << isa.status();
    EXPECT_EQ(*isa, Isa::kAvx2) << DataTypeName(dt);
  }
  SetMaxIsa(Isa::kNone);
  EXPECT_EQ(SelectBrgemmIsa(BrgemmDataType::kF32).status().code(),
            absl::StatusCode::kFailedPrecondition);
  if (IsaAvailable(Isa::kAvx512Core)) {
    SetMaxIsa(Isa::kAvx512Core);
    EXPECT_EQ(*SelectBrgemmIsa(BrgemmDataType::kU8S8), Isa::kAvx2);
    EXPECT_EQ(*SelectBrgemmIsa(BrgemmDataType::kF32), Isa::kAvx512Core);
  }
  ResetMaxIsa();
}

TEST(DispatchTest, PicksAFamilyTheCpuRuns) {
  for (BrgemmDataType dt : {BrgemmDataType::kF32, BrgemmDataType::kBf16,
                            BrgemmDataType::kU8S8}) {
    auto isa = SelectBrgemmIsa(dt);
    if (!isa.ok()) {
      EXPECT_EQ(isa.status().code(), absl::StatusCode::kFailedPrecondition);
      continue;
    }
    EXPECT_TRUE(IsaAvailable(*isa)) << IsaName(*isa);
  }
  if (!IsaAvailable(Isa::kAvx512Core)) {
    GTEST_SKIP() << "SKIPPED: no AVX-512 on this CPU";
  }
  // Below AMX, bf16 goes to whichever AVX-512 kernel measured faster.
  SetMaxIsa(Isa::kAvx512CoreFp16);
  auto cal = CalibrateBf16();
  auto bf16 = SelectBrgemmIsa(BrgemmDataType::kBf16);
  ResetMaxIsa();
  ASSERT_TRUE(cal.ok() && bf16.ok());
  EXPECT_GT(cal->widen_gflops, 0);
  const bool dot_faster = cal->dot_gflops > cal->widen_gflops;
  EXPECT_EQ(cal->chosen, dot_faster ? Isa::kAvx512CoreBf16 : Isa::kAvx512Core)
      << cal->ToString();
  EXPECT_NE(cal->ToString().find("bf16 dispatch"), std::string::npos);
}

}  // namespace
}  // namespace microkernels
}  // namespace hgc
