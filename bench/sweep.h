// What the workload sweeps (bench:mlp, bench:mha) share: their flags, the
// f32 FMA peak measured in the same process, the run of every case through
// bench/compare.h's BenchGraph, and the report (a table on stdout, the
// geomean speedup, a CSV and a gnuplot chart of speedup and % of peak per
// batch, one line per workload).
//
// Speedups compare hgc with oneDNN only where the baseline ran every op as
// a oneDNN primitive. A case whose baseline ran ops on the reference
// interpreter (BenchResult::baseline_fallbacks: no oneDNN primitive for
// them on this CPU) is not comparable: the table prints its speedup as
// n/a, the geomean leaves it out (and says so), the chart draws no speedup
// for it, and the CSV keeps its raw ratio with a `baseline_fallbacks`
// count that consumers must filter on (WriteSweepCsv).
//
// Flags: --threads=N (default 2), --threading=pool|openmp (hgc's parallel
// steps on its own pool, the default, or on OpenMP: libgomp, the runtime
// the baseline's oneDNN uses), --dtype=f32|bf16|int8 (default f32; the
// workloads' precision), --short, --iters=N, --csv=FILE (default NAME.csv,
// NAME_DTYPE.csv for bf16 and int8), --png=FILE (default: the CSV's name
// with .png). Under `bazel run` relative paths are the directory Bazel ran
// in.
//
// The peak: a throughput loop of the instruction the dtype's kernels are
// built on (bench/isa_peak.h; SweepPeakInstruction: f32 vfmadd231ps, on
// YMM registers where there is no AVX-512; bf16 AMX tdpbf16ps or else
// vdpbf16ps; int8 AMX tdpbusd, else vpdpbusd, else the AVX2 kernel's
// vpmaddwd + vpaddd pair on YMM registers; f32 FMA where the CPU has none of
// them) per thread, all threads at once, summed; sampled after
// every round of every case
// (BenchConfig::round_probe), since a shared machine's speed changes from
// minute to minute. A case's peak is the median of its rounds' samples and
// a side's "% of peak" the median over the rounds of its GFLOP/s in the
// round over the peak sampled after it. The peak before and after the
// sweep is printed too.
#ifndef HGC_BENCH_SWEEP_H_
#define HGC_BENCH_SWEEP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/compare.h"
#include "bench/isa_peak.h"
#include "ir/graph.h"
#include "runtime/threading.h"

namespace hgc {
namespace bench {

// The workloads' precision (--dtype).
enum class SweepDtype { kF32, kBf16, kInt8 };
const char* SweepDtypeName(SweepDtype dtype);  // "f32", "bf16", "int8"

struct SweepArgs {
  int threads = 2;
  SweepDtype dtype = SweepDtype::kF32;
  Threading threading = Threading::kOwnPool;
  int iters = 0;  // 0: BenchGraph chooses
  bool short_run = false;
  std::string csv;
  std::string png;
};

// Parses argv (argv[0] is skipped). On a bad flag prints the usage line for
// `name` to stderr and returns InvalidArgument. Also enters the directory
// Bazel ran in (BUILD_WORKING_DIRECTORY), so relative paths are the user's.
absl::StatusOr<SweepArgs> ParseSweepArgs(int argc, char** argv,
                                         const std::string& name);

// f32 FMA peak (GFLOP/s) of `threads` threads running at once, each allowed
// on every CPU of the process (runtime/thread_pool.h's ProcessCpus): the
// main thread's affinity, which these threads would inherit, is a single
// core when OpenMP binds threads (OMP_PROC_BIND). Each thread's rate is
// the median of `samples` loops of `seconds` each.
absl::StatusOr<double> MeasurePeak(PeakInstruction instr, int threads,
                                   int samples = 5, double seconds = 0.03);

// The instruction whose peak a sweep of `dtype` is compared with: the
// fastest of its family that this CPU has (and the ISA cap allows).
PeakInstruction SweepPeakInstruction(SweepDtype dtype);

// A column of the table and the CSV that identifies a case (before the
// timings): its CSV header, table header and width (left-aligned or not).
struct KeyColumn {
  std::string csv;
  std::string header;
  int width = 6;
  bool left = false;
};

// One workload at one batch.
struct SweepCase {
  std::string workload;           // the chart's line ("MLP-1")
  int64_t batch = 0;              // the chart's x
  std::vector<std::string> keys;  // one per KeyColumn
  // Builds the entry graph into `module`.
  std::function<absl::StatusOr<const Graph*>(Module& module)> build;
};

struct SweepSpec {
  std::string name;         // "mlp": message prefix
  std::string chart_title;  // "f32 MLPs"
  std::vector<int64_t> chart_batches;  // x tics, ascending (not empty)
  std::vector<std::string> workloads;  // chart lines, in order
  std::vector<KeyColumn> keys;
  // BenchConfig per case (threads and iters come from the flags).
  int warmup = 20;
  double target_seconds = 0.5;
};

struct SweepRow {
  const SweepCase* sweep_case = nullptr;
  BenchResult result;
  // GFLOP/s: the median of the peaks sampled after the case's rounds, and
  // each side's median over the rounds of its % of the round's peak.
  double peak = 0;
  double hgc_pct_peak = 0, baseline_pct_peak = 0;
};

// Fills `row`'s peak and % of peak from its result's per-round times and
// peak samples; `fallback_peak` stands in when the result has none.
void SetPeakShares(SweepRow& row, double fallback_peak);

// Whether `row`'s speedup compares hgc with oneDNN: its baseline ran every
// op as a oneDNN primitive (no BenchResult::baseline_fallbacks). Where the
// baseline ran an op on the reference interpreter (no oneDNN primitive for
// it on this CPU: bf16 matmul without AVX-512, say), the ratio is against
// the interpreter, not against what a framework would run.
bool Comparable(const SweepRow& row);

struct SweepGeomean {
  double speedup = 0;  // geometric mean over the counted rows; 0: none
  int counted = 0;     // comparable rows
  int left_out = 0;    // rows whose baseline ran ops on the interpreter
};

// The geometric mean of the comparable rows' speedups.
SweepGeomean GeomeanSpeedup(const std::vector<SweepRow>& rows);

// The report's geomean line: "geomean speedup (hgc vs baseline, 4
// workloads): 1.99x" when every row is comparable, else with how many rows
// were counted and how many left out and why, and "none" in place of the
// number when no row is comparable.
std::string GeomeanLine(const std::vector<SweepRow>& rows);

// The baseline's fallbacks over all rows, one line per op kind and reason:
// "baseline fallback: 8 matmul ops (MLP-1 batch 32, 512; MLP-2 batch 32):
// REASON".
std::vector<std::string> BaselineFallbackLines(
    const std::vector<SweepRow>& rows);

// Prints the table (a row that is not Comparable shows "n/a*" for its
// speedup, and a footnote says why), the geomean line and the fallback
// lines on stdout.
void PrintSweepTable(const SweepSpec& spec, const std::vector<SweepRow>& rows);

// Writes the CSV: the key columns, then threads, hgc_ms, baseline_ms,
// speedup, baseline_fallbacks, hgc_gflops, baseline_gflops, hgc_pct_peak,
// baseline_pct_peak, peak_gflops, compile_ms, agree (1 or 0). Every row is
// written and `speedup` is the raw time ratio even where the baseline ran
// ops on the reference interpreter: `baseline_fallbacks` counts those ops,
// and a consumer that compares hgc with oneDNN must keep only the rows
// where it is 0. Returns "" or what failed.
std::string WriteSweepCsv(const SweepSpec& spec,
                          const std::vector<SweepRow>& rows,
                          const std::string& path);

// Draws with gnuplot the speedup per batch of every workload's comparable
// rows (left axis) and hgc's % of peak of all its rows (right axis) into
// `png`. Returns a note for the user (the chart's path, or why none).
std::string DrawSweepChart(const SweepSpec& spec,
                           const std::vector<SweepRow>& rows, int threads,
                           PeakInstruction peak, const std::string& png);

// Runs every case, then prints the report and writes the CSV and the chart.
// Returns the exit code: 1 when a case fails to build, compile or run, or
// its outputs disagree, or the peak or CSV fails; else 0. With `on_row`,
// it is called after each case (for extra per-case output on stderr).
int RunSweep(const SweepSpec& spec, const SweepArgs& args,
             const std::vector<SweepCase>& cases,
             const std::function<void(const SweepRow&)>& on_row = nullptr);

}  // namespace bench
}  // namespace hgc

#endif  // HGC_BENCH_SWEEP_H_
