// The compiled graph against the primitive baseline: what `hgc FILE
// --bench` (driver/driver.cc) and the workload sweeps (bench/sweep.h) run.
//
// BenchGraph compiles the entry graph (timing the compile session,
// hgc/session.h: passes and codegen), builds the oneDNN primitive-per-op
// baseline (baseline/primitive_executor.h) on the same graph as written,
// binds the constants of both OUTSIDE the timed
// loops (the compiled graph's init steps prepack; the baseline reorders its
// weights), runs both on the same seeded random inputs (support/
// random_fill.h: seed, parameter name) with the same thread count in this
// process, and checks that their outputs agree (tensor_util/tensor_compare.h,
// hgc's outputs against the baseline's, with the tolerance of the dtype each
// output was computed in, so an f32 output cast from bf16 gets bf16's, and
// --atol/--rtol replacing its fields); where an output differs, the
// reference interpreter judges both sides (oneDNN keeps f32 between the
// post-ops it fuses, where the graph rounds each bf16 op), and a wrong
// baseline fails the check as a wrong hgc does.
//
// Timing: `warmup` untimed runs of each, then `iters` runs of each timed one
// by one with a monotonic clock (std::chrono::steady_clock), in `rounds`
// alternating blocks (hgc, baseline, hgc, baseline, ...) so that clock and
// load drift hit both alike; times are medians over all timed runs, the
// speedup the median of the per-round ratios. A `round_probe` runs after
// each round's two blocks.
// After each baseline block OpenMP's threads are sent to sleep
// (PrimitiveExecutor::ReleaseThreads): each side runs with the machine to
// itself, as a framework or an hgc user would. With
// iters == 0 the count is chosen so that each side runs for about
// `target_seconds` (at least 10, at most 100000 runs), from the warm-up's
// speed.
//
// FLOPs: 2*M*N*K per matmul (times the product of its batch dimensions),
// summed over the entry graph as written; elementwise, normalization and
// data-movement ops count 0 (the convention of the oneDNN Graph Compiler
// paper, which reports matmul throughput). GFLOP/s = flops / median time.
// Graphs without matmuls report no GFLOP/s.
#ifndef HGC_BENCH_COMPARE_H_
#define HGC_BENCH_COMPARE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "runtime/threading.h"
#include "tensor_util/tensor_compare.h"

namespace hgc {

struct BenchConfig {
  int threads = 1;
  // hgc's threads: its own pool or OpenMP (the baseline always uses OpenMP).
  Threading threading = Threading::kOwnPool;
  // Graph pipeline the compiler runs ("O2" when empty).
  std::string pipeline = "O2";
  // Timed runs per side (0: choose from target_seconds).
  int iters = 0;
  int warmup = 10;
  int rounds = 8;  // alternating blocks per side
  double target_seconds = 0.5;
  uint64_t seed = 0;
  // Values for parameters, by name (an ONNX model's initializers), given
  // to both sides; every other parameter gets seeded random values.
  std::map<std::string, Tensor> bound_params;
  // Replace the fields of each output dtype's default tolerance
  // (DefaultTolerance) when set (--atol, --rtol).
  std::optional<double> atol;
  std::optional<double> rtol;
  // When set, called once per round after both blocks (neither side
  // running), e.g. to measure the FMA peak, so that a side's rate can be
  // compared with what the machine gave in the same round; the values come
  // back in BenchResult::round_probes.
  std::function<double()> round_probe;
  // After the timed rounds, run hgc as many more times as it was timed,
  // timing each step (Executable::ExecuteProfiled) into
  // BenchResult::profile.
  bool profile = false;
};

// One step of hgc's compiled graph in a profile (`--bench --profile`).
struct StepProfile {
  std::string name;  // the step's name, as in --emit=loops
  // "native" (generated code on the pool), "serial" (generated code of a
  // group too small to split, on the calling thread alone), "pool" (host
  // code that every pool thread runs a part of: a copy split by rows) or
  // "host" (host code on the calling thread alone: a copy, a reduction or
  // transpose helper, or an interpreter fallback, named
  // fallback.OP.VALUE).
  std::string kind;
  double median_ms = 0;  // wall time on the calling thread, waits included
};

struct BenchResult {
  std::string graph;  // entry graph name
  int threads = 0;
  int iters = 0;
  double flops = 0;        // per run, matmuls only (0 when none)
  double compile_ms = 0;   // median of 3 compiles (passes and codegen)
  double hgc_ms = 0;       // median per run
  double baseline_ms = 0;  // median per run
  // Whether every output agreed (with the baseline, or where they differ
  // both sides with the reference interpreter), and one line per output
  // against the baseline, then two per differing output (hgc and the
  // baseline against the interpreter).
  bool agree = false;
  // Whether the reference interpreter rejected one of the baseline's
  // outputs (a baseline bug: `agree` is false and the speedup meaningless).
  bool baseline_wrong = false;
  std::vector<std::string> check_lines;
  // The baseline's primitives and fallbacks (PrimitiveExecutor::Summary's
  // first line).
  std::string baseline_summary;
  // The baseline's reference-interpreter fallbacks, one line each: the op
  // and why no oneDNN primitive runs it ("%NAME = KIND: REASON"). Each one
  // makes the baseline slower than a framework on oneDNN would be, so with
  // any, speedup() is a ratio against the interpreter and no result:
  // PrintBenchResult prints it as n/a (with the raw ratio) and the sweeps
  // leave the case out of their geomean (bench/sweep.h).
  std::vector<std::string> baseline_fallbacks;
  // The baseline's steps in order, each with oneDNN's implementation:
  // "matmul+mul+add [brg:avx512_core] | softmax [jit:avx512_common] | ...".
  std::string baseline_steps;

  // Median over the rounds of (baseline median / hgc median) within the
  // round: each round's two blocks run back to back, so a machine that
  // changes speed between rounds (a shared or throttled host) cancels out
  // of the ratio, where it would not out of the overall medians.
  double round_speedup = 0;
  // Per round: each side's median time (ms) and round_probe's value (empty
  // without a probe).
  std::vector<double> round_hgc_ms, round_baseline_ms, round_probes;
  // With BenchConfig::profile: each step's median over profile_runs runs,
  // in execution order, and the median of the runs' step sums.
  std::vector<StepProfile> profile;
  int profile_runs = 0;
  double profile_total_ms = 0;

  // round_speedup when measured, else the ratio of the overall medians.
  double speedup() const {
    if (round_speedup > 0) return round_speedup;
    return hgc_ms > 0 ? baseline_ms / hgc_ms : 0;
  }
  double hgc_gflops() const { return Gflops(hgc_ms); }
  double baseline_gflops() const { return Gflops(baseline_ms); }

 private:
  double Gflops(double ms) const {
    return ms > 0 ? flops / (ms * 1e-3) / 1e9 : 0;
  }
};

// 2*M*N*K per matmul of `graph` (batch dims multiplied in); fusion ops count
// their bodies' matmuls.
double MatmulFlops(const Graph& graph);

// The median of `samples` (the mean of the middle two for an even count);
// 0 when empty.
double Median(std::vector<double> samples);

// Benchmarks `entry` of `module` (as parsed or built: no passes run on it)
// as described above. Errors from the compiler or the baseline are
// returned as they are (located errors keep their source locations).
absl::StatusOr<BenchResult> BenchGraph(const Module& module, const Graph& entry,
                                       const BenchConfig& config);

// Prints `result` in the driver's format (see README.md, `--bench`).
void PrintBenchResult(const BenchResult& result, std::ostream& out);
// Its profile table alone (PrintBenchResult ends with it when there is one).
void PrintProfile(const BenchResult& result, std::ostream& out);

}  // namespace hgc

#endif  // HGC_BENCH_COMPARE_H_
