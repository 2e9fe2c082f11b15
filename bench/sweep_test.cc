// Tests of bench/sweep.h's flag parsing, geomean and % of peak (the sweeps
// themselves run in CI: bench:mlp and bench:mha with --short).
#include "bench/sweep.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hgc {
namespace bench {
namespace {

absl::StatusOr<SweepArgs> Parse(std::vector<std::string> flags) {
  std::vector<char*> argv = {const_cast<char*>("sweep")};
  for (std::string& f : flags) argv.push_back(f.data());
  return ParseSweepArgs(static_cast<int>(argv.size()), argv.data(), "mha");
}

TEST(SweepTest, Defaults) {
  absl::StatusOr<SweepArgs> args = Parse({});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->threads, 2);
  EXPECT_EQ(args->iters, 0);
  EXPECT_FALSE(args->short_run);
  EXPECT_EQ(args->csv, "mha.csv");
  EXPECT_EQ(args->png, "mha.png");
}

TEST(SweepTest, Flags) {
  absl::StatusOr<SweepArgs> args =
      Parse({"--threads=4", "--short", "--iters=3", "--csv=out/a.csv"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->threads, 4);
  EXPECT_EQ(args->iters, 3);
  EXPECT_TRUE(args->short_run);
  EXPECT_EQ(args->csv, "out/a.csv");
  EXPECT_EQ(args->png, "out/a.png");
  args = Parse({"--csv=table", "--png=c.png"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->png, "c.png");
  args = Parse({"--csv=table"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->png, "table.png");
}

TEST(SweepTest, Dtype) {
  absl::StatusOr<SweepArgs> args = Parse({});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->dtype, SweepDtype::kF32);
  args = Parse({"--dtype=int8"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->dtype, SweepDtype::kInt8);
  EXPECT_EQ(args->csv, "mha_int8.csv");
  EXPECT_EQ(args->png, "mha_int8.png");
  args = Parse({"--dtype=bf16", "--csv=b.csv"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->dtype, SweepDtype::kBf16);
  EXPECT_EQ(args->csv, "b.csv");
  args = Parse({"--dtype=f32"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->csv, "mha.csv");
}

// Whatever the CPU has, each dtype's peak instruction is one of its own
// family or the f32 FMA, and one this process can run.
TEST(SweepTest, PeakInstructionPerDtype) {
  EXPECT_EQ(SweepPeakInstruction(SweepDtype::kF32), F32PeakInstruction());
  const PeakInstruction bf16 = SweepPeakInstruction(SweepDtype::kBf16);
  EXPECT_TRUE(bf16 == PeakInstruction::kTdpbf16ps ||
              bf16 == PeakInstruction::kVdpbf16ps ||
              bf16 == F32PeakInstruction());
  const PeakInstruction int8 = SweepPeakInstruction(SweepDtype::kInt8);
  EXPECT_TRUE(int8 == PeakInstruction::kTdpbusd ||
              int8 == PeakInstruction::kVpdpbusd ||
              int8 == F32PeakInstruction());
  for (PeakInstruction i : {bf16, int8}) {
    EXPECT_TRUE(PeakMeter::Create(i).ok()) << PeakInstructionName(i);
  }
}

TEST(SweepTest, BadFlags) {
  for (const char* bad : {"--threads=0", "--threads=x", "--iters=0", "-v",
                          "--short=1", "--dtype=f16", "--dtype="}) {
    EXPECT_FALSE(Parse({bad}).ok()) << bad;
  }
}

TEST(SweepTest, Geomean) {
  EXPECT_EQ(GeomeanSpeedup({}), 0);
  std::vector<SweepRow> rows(2);
  rows[0].result.round_speedup = 2;
  rows[1].result.round_speedup = 8;
  EXPECT_DOUBLE_EQ(GeomeanSpeedup(rows), 4);
}

// Each round's rate over the peak sampled after it, the median over the
// rounds: a machine that runs at half speed in one round (peak and sides
// alike) gives the same share as in the others.
TEST(SweepTest, PeakSharesPerRound) {
  SweepRow row;
  row.result.flops = 1e9;  // 1 GFLOP per run
  row.result.round_hgc_ms = {10, 20, 5};
  row.result.round_baseline_ms = {20, 40, 10};
  row.result.round_probes = {200, 100, 400};
  SetPeakShares(row, 1000);
  EXPECT_DOUBLE_EQ(row.peak, 200);
  EXPECT_DOUBLE_EQ(row.hgc_pct_peak, 50);  // 100, 50, 200 GF/s
  EXPECT_DOUBLE_EQ(row.baseline_pct_peak, 25);
}

// Without samples, the overall medians over the fallback peak.
TEST(SweepTest, PeakSharesWithoutSamples) {
  SweepRow row;
  row.result.flops = 1e9;
  row.result.hgc_ms = 10;
  row.result.baseline_ms = 40;
  SetPeakShares(row, 400);
  EXPECT_DOUBLE_EQ(row.peak, 400);
  EXPECT_DOUBLE_EQ(row.hgc_pct_peak, 25);
  EXPECT_DOUBLE_EQ(row.baseline_pct_peak, 6.25);
}

}  // namespace
}  // namespace bench
}  // namespace hgc
