// Tests of bench/sweep.h's flag parsing, geomean, report and % of peak (the
// sweeps themselves run in CI: bench:mlp and bench:mha with --short).
#include "bench/sweep.h"

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "support/cpu_features.h"

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
  EXPECT_TRUE(
      int8 == PeakInstruction::kTdpbusd || int8 == PeakInstruction::kVpdpbusd ||
      int8 == PeakInstruction::kVpmaddwdYmm || int8 == F32PeakInstruction());
  for (PeakInstruction i : {bf16, int8}) {
    EXPECT_TRUE(PeakMeter::Create(i).ok()) << PeakInstructionName(i);
  }
}

// Capped at AVX2, int8 sweeps compare with the AVX2 kernel's vpmaddwd +
// vpaddd pair wherever the CPU has AVX2; capped below it, the meter refuses.
TEST(SweepTest, Int8PeakUnderAvx2Cap) {
  EXPECT_EQ(OpsPerInstruction(PeakInstruction::kVpmaddwdYmm), 32.0);
  EXPECT_EQ(PeakInstructionIsa(PeakInstruction::kVpmaddwdYmm), Isa::kAvx2);
  SetMaxIsa(Isa::kAvx2);
  const PeakInstruction int8 = SweepPeakInstruction(SweepDtype::kInt8);
  if (IsaAvailable(Isa::kAvx2)) {
    EXPECT_EQ(int8, PeakInstruction::kVpmaddwdYmm);
    absl::StatusOr<double> gops = MeasurePeakGops(int8);
    ASSERT_TRUE(gops.ok()) << gops.status();
    EXPECT_GT(*gops, 0);
  } else {
    EXPECT_EQ(int8, F32PeakInstruction());
  }
  SetMaxIsa(Isa::kNone);
  EXPECT_FALSE(PeakMeter::Create(PeakInstruction::kVpmaddwdYmm).ok());
  ResetMaxIsa();
}

TEST(SweepTest, BadFlags) {
  for (const char* bad : {"--threads=0", "--threads=x", "--iters=0", "-v",
                          "--short=1", "--dtype=f16", "--dtype="}) {
    EXPECT_FALSE(Parse({bad}).ok()) << bad;
  }
}

// A case of `workload` at `batch`, its one key column the workload.
SweepCase Case(const std::string& workload, int64_t batch) {
  SweepCase c;
  c.workload = workload;
  c.batch = batch;
  c.keys = {workload};
  return c;
}

// A row of `c` with the given speedup and baseline fallbacks.
SweepRow Row(const SweepCase& c, double speedup,
             std::vector<std::string> fallbacks = {}) {
  SweepRow row;
  row.sweep_case = &c;
  row.result.round_speedup = speedup;
  row.result.baseline_fallbacks = std::move(fallbacks);
  return row;
}

TEST(SweepTest, Geomean) {
  const SweepGeomean none = GeomeanSpeedup({});
  EXPECT_EQ(none.speedup, 0);
  EXPECT_EQ(none.counted, 0);
  EXPECT_EQ(none.left_out, 0);
  SweepCase c;
  std::vector<SweepRow> rows = {Row(c, 2), Row(c, 8)};
  const SweepGeomean g = GeomeanSpeedup(rows);
  EXPECT_DOUBLE_EQ(g.speedup, 4);
  EXPECT_EQ(g.counted, 2);
  EXPECT_EQ(g.left_out, 0);
  EXPECT_EQ(GeomeanLine(rows),
            "geomean speedup (hgc vs baseline, 2 workloads): 4.00x");
}

// A row whose baseline ran an op on the reference interpreter is a ratio
// against the interpreter: left out of the geomean, and the line says so.
TEST(SweepTest, GeomeanLeavesOutBaselineFallbacks) {
  SweepCase c;
  std::vector<SweepRow> rows = {
      Row(c, 2), Row(c, 60, {"%m = matmul: no bf16 matmul"}), Row(c, 8)};
  EXPECT_TRUE(Comparable(rows[0]));
  EXPECT_FALSE(Comparable(rows[1]));
  const SweepGeomean g = GeomeanSpeedup(rows);
  EXPECT_DOUBLE_EQ(g.speedup, 4);
  EXPECT_EQ(g.counted, 2);
  EXPECT_EQ(g.left_out, 1);
  EXPECT_EQ(GeomeanLine(rows),
            "geomean speedup (hgc vs baseline, 2 of 3 workloads; 1 left out: "
            "the baseline ran ops on the reference interpreter, no oneDNN "
            "primitive on this CPU): 4.00x");
}

TEST(SweepTest, GeomeanNoneComparable) {
  SweepCase c;
  std::vector<SweepRow> rows = {Row(c, 30, {"%m = matmul: none"}),
                                Row(c, 90, {"%s = softmax: none"})};
  const SweepGeomean g = GeomeanSpeedup(rows);
  EXPECT_EQ(g.speedup, 0);
  EXPECT_EQ(g.counted, 0);
  EXPECT_EQ(g.left_out, 2);
  const std::string line = GeomeanLine(rows);
  EXPECT_EQ(line,
            "geomean speedup (hgc vs baseline, 0 of 2 workloads; 2 left out: "
            "the baseline ran ops on the reference interpreter, no oneDNN "
            "primitive on this CPU): none, no workload is comparable");
}

// One line per op kind and reason, with the cases' batches per workload.
TEST(SweepTest, BaselineFallbackLinesCollapse) {
  const SweepCase a32 = Case("MLP-1", 32), a512 = Case("MLP-1", 512),
                  b32 = Case("MLP-2", 32);
  const std::string mm = "no bf16 matmul: oneDNN: could not create";
  std::vector<SweepRow> rows = {
      Row(a32, 30, {"%0 = matmul: " + mm, "%1 = matmul: " + mm}),
      Row(a512, 40, {"%0 = matmul: " + mm, "%1 = matmul: " + mm}),
      Row(b32, 50, {"%0 = matmul: " + mm, "%p = softmax: no softmax"}),
      Row(b32, 2)};
  EXPECT_EQ(BaselineFallbackLines(rows),
            (std::vector<std::string>{
                "baseline fallback: 5 matmul ops (MLP-1 batch 32, 512; MLP-2 "
                "batch 32): " +
                    mm,
                "baseline fallback: 1 softmax op (MLP-2 batch 32): no "
                "softmax"}));
  EXPECT_TRUE(BaselineFallbackLines({Row(b32, 2)}).empty());
}

// The table prints a fallback row's speedup as n/a with a footnote.
TEST(SweepTest, TableMarksFallbackRowsNotComparable) {
  SweepSpec spec;
  spec.keys = {{"workload", "workload", 8, true}};
  const SweepCase a = Case("MLP-1", 32), b = Case("MLP-2", 32);
  std::vector<SweepRow> rows = {Row(a, 1.5),
                                Row(b, 59.1, {"%0 = matmul: none"})};
  testing::internal::CaptureStdout();
  PrintSweepTable(spec, rows);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("   1.50x "), std::string::npos) << out;
  EXPECT_NE(out.find("    n/a* "), std::string::npos) << out;
  EXPECT_EQ(out.find("59.10x"), std::string::npos) << out;
  EXPECT_NE(out.find("\n* not comparable: the baseline ran ops on the "
                     "reference interpreter"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("1 of 2 workloads; 1 left out"), std::string::npos) << out;
}

// The CSV keeps every row with its raw ratio and a fallback count to
// filter on.
TEST(SweepTest, CsvCountsBaselineFallbacks) {
  SweepSpec spec;
  spec.keys = {{"workload", "workload", 8, true}};
  const SweepCase a = Case("MLP-1", 32), b = Case("MLP-2", 32);
  std::vector<SweepRow> rows = {
      Row(a, 1.5), Row(b, 59.1, {"%0 = matmul: x", "%1 = matmul: x"})};
  const std::string path = testing::TempDir() + "/sweep_test.csv";
  ASSERT_EQ(WriteSweepCsv(spec, rows, path), "");
  std::ifstream in(path);
  std::string header, row_a, row_b;
  std::getline(in, header);
  std::getline(in, row_a);
  std::getline(in, row_b);
  EXPECT_TRUE(absl::StartsWith(
      header,
      "workload,threads,hgc_ms,baseline_ms,speedup,baseline_fallbacks,"))
      << header;
  EXPECT_TRUE(absl::StartsWith(row_a, "MLP-1,0,0.00000,0.00000,1.5000,0,"))
      << row_a;
  EXPECT_TRUE(absl::StartsWith(row_b, "MLP-2,0,0.00000,0.00000,59.1000,2,"))
      << row_b;
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
