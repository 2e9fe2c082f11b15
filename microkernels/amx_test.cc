// The AMX plan's tile configurations byte for byte, the simulator's
// instruction semantics, and the native kernels where AMX exists.
#include <array>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "microkernels/amx.h"
#include "microkernels/amx_emulator.h"
#include "microkernels/amx_plan.h"
#include "microkernels/brgemm_kernel.h"
#include "microkernels/brgemm_test_util.h"
#include "support/cpu_features.h"
#include "support/float16.h"

namespace hgc {
namespace microkernels {
namespace {

std::array<uint8_t, 64> Bytes(std::initializer_list<std::pair<int, std::pair<int, int>>> tiles) {
  std::array<uint8_t, 64> b{};
  b[0] = 1;
  for (const auto& [t, shape] : tiles) {
    b[16 + 2 * t] = static_cast<uint8_t>(shape.second & 0xff);
    b[17 + 2 * t] = static_cast<uint8_t>(shape.second >> 8);
    b[48 + t] = static_cast<uint8_t>(shape.first);
  }
  return b;
}

TEST(AmxPlanTest, FullBlockConfigBytes) {
  const AmxPlan plan = BuildAmxPlan(
      MakeBrgemmDesc(Isa::kAvx512CoreAmx, BrgemmDataType::kBf16, 64, 96, 128));
  EXPECT_EQ(plan.chunk_k, 32);
  EXPECT_EQ(plan.full_chunks, 4);
  EXPECT_EQ(plan.tail_k, 0);
  EXPECT_EQ(plan.m_count[0], 2);
  EXPECT_EQ(plan.n_count[0], 3);
  EXPECT_TRUE(plan.single_config);
  const std::array<uint8_t, 64> want =
      Bytes({{0, {16, 64}}, {1, {16, 64}}, {2, {16, 64}}, {3, {16, 64}},
             {4, {16, 64}}, {5, {16, 64}}, {6, {16, 64}}, {7, {16, 64}}});
  EXPECT_EQ(plan.kinds[0][0].config.ToBytes(), want);
  // The schedule: A0 B0 C00, B1 C01, A1 C10 C11.
  std::string ops;
  for (const AmxOp& op : plan.kinds[0][0].chunk_ops) ops += op.ToString() + ";";
  EXPECT_EQ(ops,
            "tileloadd tmm4 <- A0;tileloadd tmm6 <- B0;tdp tmm0 += tmm4 * tmm6;"
            "tileloadd tmm7 <- B1;tdp tmm1 += tmm4 * tmm7;"
            "tileloadd tmm5 <- A1;tdp tmm2 += tmm5 * tmm6;"
            "tdp tmm3 += tmm5 * tmm7;");
}

TEST(AmxPlanTest, TailBlocksShrinkTheirTiles) {
  // M = 32 + 17, N = 32 + 5, int8 K = 64 + 3.
  const AmxPlan plan = BuildAmxPlan(
      MakeBrgemmDesc(Isa::kAvx512CoreAmx, BrgemmDataType::kU8S8, 49, 37, 67));
  EXPECT_EQ(plan.chunk_k, 64);
  EXPECT_EQ(plan.full_chunks, 1);
  EXPECT_EQ(plan.tail_k, 3);
  EXPECT_FALSE(plan.single_config);
  // Tail M (17 rows = 16 + 1) x tail N (5 columns = 20 bytes).
  EXPECT_EQ(plan.kinds[1][1].config.ToBytes(),
            Bytes({{0, {16, 20}}, {2, {1, 20}}, {4, {16, 64}}, {5, {1, 64}},
                   {6, {16, 20}}}));
  // Full M x tail N.
  EXPECT_EQ(plan.kinds[0][1].config.ToBytes(),
            Bytes({{0, {16, 20}}, {2, {16, 20}}, {4, {16, 64}}, {5, {16, 64}},
                   {6, {16, 20}}}));
  // Tail M x full N.
  EXPECT_EQ(plan.kinds[1][0].config.ToString(),
            "t0=16x64 t1=16x64 t2=1x64 t3=1x64 t4=16x64 t5=1x64 t6=16x64 "
            "t7=16x64");
  EXPECT_EQ(plan.kinds[1][1].chunk_ops.size(), 5u);  // A0 B0 C00 A1 C10
}

TEST(AmxSimulatorTest, Bf16DotMatchesThePseudoCode) {
  AmxTileSimulator sim;
  TileConfig cfg;
  cfg.Set(0, 2, 8);  // C: 2 rows x 2 f32 columns
  cfg.Set(4, 2, 8);  // A: 2 rows x 4 bf16 (2 pairs along K)
  cfg.Set(6, 2, 8);  // B: 2 pair-rows x 2 columns of (k, k+1) pairs
  ASSERT_TRUE(sim.LoadConfig(cfg).ok());
  uint16_t a[8], b[8];
  for (int i = 0; i < 8; ++i) {
    a[i] = FloatToBf16(static_cast<float>(i + 1));
    b[i] = FloatToBf16(static_cast<float>(i + 1));
  }
  sim.Load(4, a, 8);
  sim.Load(6, b, 8);
  sim.DotBf16(0, 4, 6);
  float c[4];
  sim.Store(0, c, 8);
  // C[m][n] = sum_k A[m][2k] B[k][2n] + A[m][2k+1] B[k][2n+1].
  EXPECT_FLOAT_EQ(c[0], 1 * 1 + 2 * 2 + 3 * 5 + 4 * 6);
  EXPECT_FLOAT_EQ(c[1], 1 * 3 + 2 * 4 + 3 * 7 + 4 * 8);
  EXPECT_FLOAT_EQ(c[2], 5 * 1 + 6 * 2 + 7 * 5 + 8 * 6);
  EXPECT_FLOAT_EQ(c[3], 5 * 3 + 6 * 4 + 7 * 7 + 8 * 8);
}

TEST(AmxSimulatorTest, Int8DotsAndShapes) {
  AmxTileSimulator sim;
  TileConfig cfg;
  cfg.Set(0, 1, 4);  // C: 1 x 1 s32
  cfg.Set(4, 1, 4);  // A: 1 row x 4 bytes
  cfg.Set(6, 1, 4);  // B: 1 quad-row x 1 column
  ASSERT_TRUE(sim.LoadConfig(cfg).ok());
  const uint8_t a[4] = {200, 1, 2, 255};  // u8 200.. or s8 -56, 1, 2, -1
  const int8_t b[4] = {-1, 2, 3, 4};
  sim.Load(4, a, 4);
  sim.Load(6, b, 4);
  int32_t c = 0;
  sim.DotU8S8(0, 4, 6);
  sim.Store(0, &c, 4);
  EXPECT_EQ(c, -200 + 2 + 6 + 1020);
  sim.Zero(0);
  sim.DotS8S8(0, 4, 6);
  sim.Store(0, &c, 4);
  EXPECT_EQ(c, 56 + 2 + 6 - 4);
  // Stores write only the configured bytes.
  int32_t wide[2] = {7, 7};
  sim.Store(0, wide, 4);
  EXPECT_EQ(wide[1], 7);
}

TEST(AmxSimulatorTest, RejectsBadConfigs) {
  AmxTileSimulator sim;
  TileConfig cfg;
  cfg.palette = 2;
  EXPECT_EQ(sim.LoadConfig(cfg).code(), absl::StatusCode::kInvalidArgument);
}

TEST(AmxNativeTest, PermissionAndKernelMatchReference) {
  if (!AmxSupported()) {
    GTEST_SKIP() << "SKIPPED: AMX not available on this CPU ("
                 << DescribeCpu() << ")";
  }
  ASSERT_TRUE(RequestAmxPermission().ok());
  BrgemmDesc d =
      MakeBrgemmDesc(Isa::kAvx512CoreAmx, BrgemmDataType::kBf16, 70, 75, 300);
  auto kernel = BrgemmKernel::Create(d);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const BrgemmKernel* k = kernel->get();
  EXPECT_TRUE(CheckBrgemmCase(d, 5, 7, [&](const BrgemmDesc&) -> BrgemmRunner {
    return [&](const BrgemmCallArgs& args) { k->fn()(&args); };
  }));
}

// Long blocks over a wide C (ldc >= 512 f32) prefetch the next C block
// (brgemm_amx.cc); the prefetch address logic must leave results exact,
// including in the M and N tail blocks.
TEST(AmxNativeTest, WideCPrefetchKeepsResultsExact) {
  if (!AmxSupported()) {
    GTEST_SKIP() << "SKIPPED: AMX not available on this CPU ("
                 << DescribeCpu() << ")";
  }
  ASSERT_TRUE(RequestAmxPermission().ok());
  for (BrgemmDataType dtype : {BrgemmDataType::kBf16, BrgemmDataType::kU8S8,
                               BrgemmDataType::kS8S8}) {
    BrgemmDesc d = MakeBrgemmDesc(Isa::kAvx512CoreAmx, dtype, 70, 75, 300);
    d.ldc = 640;
    auto kernel = BrgemmKernel::Create(d);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    const BrgemmKernel* k = kernel->get();
    EXPECT_TRUE(
        CheckBrgemmCase(d, 3, 11, [&](const BrgemmDesc&) -> BrgemmRunner {
          return [&](const BrgemmCallArgs& args) { k->fn()(&args); };
        }))
        << d.ToString();
  }
}

// Kernels leave their configuration in the tiles and reload only when the
// thread's current one differs: released tiles, another kernel's shape, a
// foreign ldtilecfg and multi-configuration kernels in between must all
// still give exact results.
TEST(AmxNativeTest, TileConfigIsCachedAcrossCallsAndReloadedWhenStale) {
  if (!AmxSupported()) {
    GTEST_SKIP() << "SKIPPED: AMX not available on this CPU ("
                 << DescribeCpu() << ")";
  }
  ASSERT_TRUE(RequestAmxPermission().ok());
  const BrgemmDesc d1 =
      MakeBrgemmDesc(Isa::kAvx512CoreAmx, BrgemmDataType::kBf16, 64, 64, 128);
  const BrgemmDesc d2 =
      MakeBrgemmDesc(Isa::kAvx512CoreAmx, BrgemmDataType::kU8S8, 16, 16, 64);
  const BrgemmDesc tails =
      MakeBrgemmDesc(Isa::kAvx512CoreAmx, BrgemmDataType::kS8S8, 49, 37, 67);
  ASSERT_TRUE(BuildAmxPlan(d1).single_config);
  ASSERT_FALSE(BuildAmxPlan(tails).single_config);
  auto k1 = BrgemmKernel::Create(d1);
  auto k2 = BrgemmKernel::Create(d2);
  auto k3 = BrgemmKernel::Create(tails);
  ASSERT_TRUE(k1.ok() && k2.ok() && k3.ok());
  auto check = [](const BrgemmKernel* k, uint32_t seed) {
    return CheckBrgemmCase(k->desc(), 3, seed,
                           [k](const BrgemmDesc&) -> BrgemmRunner {
                             return [k](const BrgemmCallArgs& args) {
                               k->fn()(&args);
                             };
                           });
  };
  const std::array<uint8_t, 64> cfg1 =
      BuildAmxPlan(d1).kinds[0][0].config.ToBytes();
  // 16 x 16 is all tail: the plan's only kind is [1][1].
  const std::array<uint8_t, 64> cfg2 =
      BuildAmxPlan(d2).kinds[1][1].config.ToBytes();
  ReleaseTiles();
  EXPECT_EQ(CurrentTileConfig(), (std::array<uint8_t, 64>{}));
  EXPECT_TRUE(check(k1->get(), 1));  // configures from the init state
  EXPECT_EQ(CurrentTileConfig(), cfg1);
  EXPECT_TRUE(check(k1->get(), 2));  // reuses it
  EXPECT_TRUE(check(k2->get(), 3));  // another shape reconfigures
  EXPECT_EQ(CurrentTileConfig(), cfg2);
  EXPECT_TRUE(check(k1->get(), 4));
  TileConfig foreign;
  for (int t = 0; t < kAmxTiles; ++t) foreign.Set(t, 1, 4);
  LoadTileConfig(foreign);  // as another library on this thread would
  EXPECT_EQ(CurrentTileConfig(), foreign.ToBytes());
  EXPECT_TRUE(check(k1->get(), 5));
  EXPECT_EQ(CurrentTileConfig(), cfg1);
  EXPECT_TRUE(check(k3->get(), 6));  // loads its kinds' configs itself
  EXPECT_TRUE(check(k1->get(), 7));
  ReleaseTiles();
  EXPECT_TRUE(check(k1->get(), 8));
  ReleaseTiles();
}

TEST(AmxNativeTest, CapTurnsAmxOff) {
  SetMaxIsa(Isa::kAvx512CoreFp16);
  EXPECT_FALSE(AmxSupported());
  auto kernel = BrgemmKernel::Create(
      MakeBrgemmDesc(Isa::kAvx512CoreAmx, BrgemmDataType::kBf16, 16, 16, 32));
  ResetMaxIsa();
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(kernel.status().message().find("not available"), std::string::npos);
}

}  // namespace
}  // namespace microkernels
}  // namespace hgc
