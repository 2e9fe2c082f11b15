#include "microkernels/gemm_driver.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "microkernels/brgemm_dispatch.h"
#include "support/cpu_features.h"
#include "support/float16.h"

namespace hgc {
namespace microkernels {
namespace {

// C = A * B against plain loops, for each data type and a shape with tails
// in every blocked dimension; small-integer inputs make results exact.
TEST(GemmDriverTest, MatchesNaiveGemmWithTails) {
  const int64_t m = 37, n = 70, k = 300;
  for (BrgemmDataType dt : {BrgemmDataType::kF32, BrgemmDataType::kBf16,
                            BrgemmDataType::kU8S8, BrgemmDataType::kS8S8}) {
    auto isa = SelectBrgemmIsa(dt);
    if (!isa.ok()) {
      GTEST_SKIP() << "SKIPPED: " << isa.status().message();
    }
    auto gemm = BrgemmGemm::Create(*isa, dt, m, n, k, {32, 96, 24});
    ASSERT_TRUE(gemm.ok()) << gemm.status();
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> small(-4, 4);
    std::vector<int> ai(m * k), bi(k * n);
    for (int& v : ai) v = dt == BrgemmDataType::kU8S8 ? small(rng) + 4 : small(rng);
    for (int& v : bi) v = small(rng);
    const int64_t es = InputElementSize(dt);
    std::vector<uint8_t> a(m * k * es), b(k * n * es);
    auto store = [&](std::vector<uint8_t>& dst, size_t i, int v) {
      if (dt == BrgemmDataType::kF32) {
        reinterpret_cast<float*>(dst.data())[i] = static_cast<float>(v);
      } else if (dt == BrgemmDataType::kBf16) {
        reinterpret_cast<uint16_t*>(dst.data())[i] = FloatToBf16(static_cast<float>(v));
      } else {
        dst[i] = static_cast<uint8_t>(v);
      }
    };
    for (size_t i = 0; i < ai.size(); ++i) store(a, i, ai[i]);
    for (size_t i = 0; i < bi.size(); ++i) store(b, i, bi[i]);
    std::vector<uint8_t> packed((*gemm)->packed_b_bytes());
    ASSERT_TRUE((*gemm)->PackB(b.data(), n, packed.data()).ok());
    std::vector<int32_t> c(m * n, 12345);
    (*gemm)->Run(a.data(), packed.data(), c.data());
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        int32_t want = 0;
        for (int64_t kk = 0; kk < k; ++kk) want += ai[i * k + kk] * bi[kk * n + j];
        const int32_t got =
            dt == BrgemmDataType::kF32 || dt == BrgemmDataType::kBf16
                ? static_cast<int32_t>(reinterpret_cast<float*>(c.data())[i * n + j])
                : c[i * n + j];
        ASSERT_EQ(got, want) << DataTypeName(dt) << " C[" << i << "][" << j
                             << "] " << (*gemm)->ToString();
      }
    }
  }
}

TEST(GemmDriverTest, RejectsEmptySizes) {
  EXPECT_EQ(BrgemmGemm::Create(Isa::kAvx512Core, BrgemmDataType::kF32, 0, 1, 1)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
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
