// The paper's MLP workloads (oneDNN Graph Compiler, arXiv 2301.01333) in
// f32: hgc against the oneDNN primitive-per-op baseline.
//
//   bazel run -c opt //bench:mlp -- [--threads=N] [--short] [--csv=FILE]
//       [--png=FILE] [--iters=N] [--threading=pool|openmp]
//
// Workloads: MLP-1 = DLRM bottom MLP 13 -> 512 -> 256 -> 128, MLP-2 = DLRM
// top MLP 479 -> 1024 -> 1024 -> 512 -> 256 -> 1, matmul + bias + ReLU per
// layer, weights and biases `const`, batch 32, 64, 128, 256, 512 (--short:
// 32 and 512 with fewer runs, for CI: well under a minute).
//
// Each row comes from driver/bench.h's BenchGraph (same process, same
// threads, same seeded inputs; constants bound outside the timed loops;
// medians; outputs checked against each other). FLOPs are 2*M*N*K per
// matmul (bias and ReLU not counted). "% of peak" divides GFLOP/s by the
// machine's f32 FMA peak for this thread count, measured here: one
// vfmadd231ps throughput loop (bench/isa_peak.h) per thread, all threads at
// once, summed; sampled before and after the sweep, the larger kept.
// --threading=openmp runs hgc's parallel steps on OpenMP (libgomp, the
// runtime the baseline's oneDNN uses) instead of hgc's own pool.
//
// Output: a table on stdout, the geomean speedup, a CSV (default mlp.csv;
// under `bazel run` relative paths are the directory Bazel ran in), and a
// PNG chart drawn with gnuplot (default: the CSV's name with .png): speedup
// per batch for both MLPs and hgc's % of peak. Without gnuplot the chart is
// skipped with a note. Exit 1 when any workload's outputs disagree or
// something fails to compile or run.
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "bench/isa_peak.h"
#include "driver/bench.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "runtime/thread_pool.h"
#include "runtime/threading.h"

namespace hgc {
namespace {

struct Mlp {
  std::string name;
  std::vector<int64_t> widths;
};

struct Row {
  std::string mlp;
  int64_t batch = 0;
  BenchResult result;
};

// @name: x[batch, widths[0]] -> [batch, widths.back()], matmul + bias +
// relu per layer, weights and biases const.
absl::StatusOr<const Graph*> BuildMlp(Module& module, const Mlp& mlp,
                                      int64_t batch) {
  Graph* g = module.AddGraph(absl::StrCat("mlp_", batch));
  Builder b(g);
  Value* x = g->AddParam("x", TensorType(DType::kF32, {batch, mlp.widths[0]}));
  for (size_t i = 1; i < mlp.widths.size(); ++i) {
    Value* w = g->AddParam(
        absl::StrCat("w", i - 1),
        TensorType(DType::kF32, {mlp.widths[i - 1], mlp.widths[i]}), true);
    Value* bias = g->AddParam(absl::StrCat("b", i - 1),
                              TensorType(DType::kF32, {mlp.widths[i]}), true);
    absl::StatusOr<Value*> y = b.Matmul(x, w);
    if (y.ok()) y = b.Binary("add", *y, bias);
    if (y.ok()) y = b.Unary("relu", *y);
    if (!y.ok()) return y.status();
    x = *y;
  }
  g->SetResults({x});
  g->SetDeclaredResultTypes({x->type()});
  return g;
}

// f32 FMA peak (GFLOP/s) of `threads` threads running at once, each allowed
// on every CPU of the process (runtime/thread_pool.h's ProcessCpus): the
// main thread's affinity, which these threads would inherit, is a single
// core when OpenMP binds threads (OMP_PROC_BIND).
absl::StatusOr<double> MeasureF32Peak(int threads) {
  cpu_set_t process;
  CPU_ZERO(&process);
  for (int cpu : ProcessCpus()) CPU_SET(cpu, &process);
  std::vector<std::unique_ptr<bench::PeakMeter>> meters;
  for (int t = 0; t < threads; ++t) {
    absl::StatusOr<std::unique_ptr<bench::PeakMeter>> m =
        bench::PeakMeter::Create(bench::PeakInstruction::kVfmadd231ps);
    if (!m.ok()) return m.status();
    meters.push_back(std::move(*m));
  }
  std::vector<double> gflops(threads, 0);
  std::atomic<int> ready{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      if (CPU_COUNT(&process) > 0) {
        sched_setaffinity(0, sizeof(process), &process);
      }
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }
      std::vector<double> samples;
      for (int i = 0; i < 5; ++i) samples.push_back(meters[t]->Sample(0.03));
      gflops[t] = Median(samples);
    });
  }
  for (std::thread& w : workers) w.join();
  double total = 0;
  for (double g : gflops) total += g;
  return total;
}

std::string WriteCsv(const std::vector<Row>& rows, double peak,
                     const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return absl::StrCat("cannot write ", path);
  std::fprintf(f,
               "mlp,batch,threads,hgc_ms,baseline_ms,speedup,hgc_gflops,"
               "baseline_gflops,hgc_pct_peak,baseline_pct_peak,peak_gflops,"
               "compile_ms,agree\n");
  for (const Row& r : rows) {
    const BenchResult& b = r.result;
    std::fprintf(f, "%s,%lld,%d,%.5f,%.5f,%.4f,%.3f,%.3f,%.2f,%.2f,%.2f,%.2f,%d\n",
                 r.mlp.c_str(), static_cast<long long>(r.batch), b.threads,
                 b.hgc_ms, b.baseline_ms, b.speedup(), b.hgc_gflops(),
                 b.baseline_gflops(), 100 * b.hgc_gflops() / peak,
                 100 * b.baseline_gflops() / peak, peak, b.compile_ms,
                 b.agree ? 1 : 0);
  }
  std::fclose(f);
  return "";
}

// Draws speedup per batch (left axis) and hgc's % of peak (right axis) for
// every MLP with gnuplot. Returns a note for the user.
std::string DrawChart(const std::vector<Row>& rows, const std::vector<Mlp>& mlps,
                      double peak, int threads, const std::string& png) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    return "gnuplot not found (Debian: gnuplot-nox, see ./configure): "
           "chart skipped";
  }
  std::string script = absl::StrCat(
      "set terminal pngcairo size 960,540 noenhanced\n", "set output '", png,
      "'\n",
      absl::StrFormat("set title 'hgc vs oneDNN primitives, f32 MLPs, %d "
                      "thread%s'\n",
                      threads, threads == 1 ? "" : "s"),
      "set xlabel 'batch'\nset logscale x 2\nset xtics (32,64,128,256,512)\n"
      "set ylabel 'speedup (baseline time / hgc time)'\n"
      "set y2label 'hgc % of f32 FMA peak'\nset y2tics\nset ytics nomirror\n"
      "set yrange [0:*]\nset y2range [0:100]\nset grid\n"
      "set key below\n");
  std::string plot = "plot ";
  for (size_t m = 0; m < mlps.size(); ++m) {
    absl::StrAppend(&script, "$d", m, " << EOD\n");
    for (const Row& r : rows) {
      if (r.mlp != mlps[m].name) continue;
      absl::StrAppend(&script, r.batch, " ", r.result.speedup(), " ",
                      100 * r.result.hgc_gflops() / peak, "\n");
    }
    absl::StrAppend(&script, "EOD\n");
    absl::StrAppend(&plot, m ? ", " : "", "$d", m,
                    " using 1:2 with linespoints lw 2 title '", mlps[m].name,
                    " speedup', $d", m,
                    " using 1:3 axes x1y2 with linespoints dt 2 title '",
                    mlps[m].name, " % of peak'");
  }
  absl::StrAppend(&script, plot, ", 1 with lines lc 'gray' notitle\n");
  FILE* p = popen("gnuplot", "w");
  if (p == nullptr) return "cannot start gnuplot: chart skipped";
  std::fputs(script.c_str(), p);
  int rc = pclose(p);
  if (rc != 0) return absl::StrCat("gnuplot failed (status ", rc, ")");
  return absl::StrCat("chart: ", png);
}

int Main(int argc, char** argv) {
  // Under `bazel run`, relative paths mean the user's directory.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(dir) != 0) std::fprintf(stderr, "mlp: cannot enter %s\n", dir);
  }
  int threads = 2, iters = 0;
  Threading threading = Threading::kOwnPool;
  bool short_run = false;
  std::string csv = "mlp.csv", png;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--short") {
      short_run = true;
    } else if (absl::ConsumePrefix(&arg, "--threads=")) {
      if (!absl::SimpleAtoi(arg, &threads) || threads < 1) threads = -1;
    } else if (arg == "--threading=pool" || arg == "--threading=openmp") {
      threading = arg == "--threading=openmp" ? Threading::kOpenMP
                                              : Threading::kOwnPool;
    } else if (absl::ConsumePrefix(&arg, "--iters=")) {
      if (!absl::SimpleAtoi(arg, &iters) || iters < 1) threads = -1;
    } else if (absl::ConsumePrefix(&arg, "--csv=")) {
      csv = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--png=")) {
      png = std::string(arg);
    } else {
      threads = -1;
    }
    if (threads < 1) {
      std::fprintf(
          stderr,
          "usage: mlp [--threads=N] [--threading=pool|openmp] [--short] "
          "[--iters=N] [--csv=FILE] [--png=FILE]\n");
      return 1;
    }
  }
  if (png.empty()) {
    png = absl::EndsWith(csv, ".csv") ? csv.substr(0, csv.size() - 4) : csv;
    png += ".png";
  }
  const std::vector<Mlp> mlps = {{"MLP-1", {13, 512, 256, 128}},
                                 {"MLP-2", {479, 1024, 1024, 512, 256, 1}}};
  const std::vector<int64_t> batches =
      short_run ? std::vector<int64_t>{32, 512}
                : std::vector<int64_t>{32, 64, 128, 256, 512};

  absl::StatusOr<double> peak = MeasureF32Peak(threads);
  if (!peak.ok()) {
    std::fprintf(stderr, "mlp: f32 peak: %s\n",
                 std::string(peak.status().message()).c_str());
    return 1;
  }
  std::vector<Row> rows;
  bool ok = true;
  for (const Mlp& mlp : mlps) {
    for (int64_t batch : batches) {
      Module module;
      absl::StatusOr<const Graph*> g = BuildMlp(module, mlp, batch);
      BenchConfig config;
      config.threads = threads;
      config.threading = threading;
      config.iters = iters;
      config.warmup = short_run ? 5 : 20;
      config.target_seconds = short_run ? 0.1 : 0.5;
      absl::StatusOr<BenchResult> r =
          g.ok() ? BenchGraph(module, **g, config)
                 : absl::StatusOr<BenchResult>(g.status());
      if (!r.ok()) {
        std::printf("%s batch %lld: error: %s\n", mlp.name.c_str(),
                    static_cast<long long>(batch),
                    std::string(r.status().message()).c_str());
        ok = false;
        continue;
      }
      ok = ok && r->agree;
      std::fprintf(stderr, "mlp: %s batch %lld done (%d runs per side)\n",
                   mlp.name.c_str(), static_cast<long long>(batch), r->iters);
      rows.push_back({mlp.name, batch, std::move(*r)});
    }
  }
  // The peak again, after the sweep; the larger sample is the machine's.
  absl::StatusOr<double> peak_after = MeasureF32Peak(threads);
  if (peak_after.ok() && *peak_after > *peak) *peak = *peak_after;

  std::printf("f32 FMA peak, %d thread%s: %.1f GFLOP/s (vfmadd231ps loop "
              "per thread, best of before/after the sweep)\n",
              threads, threads == 1 ? "" : "s", *peak);
  std::printf("%-6s %6s %10s %12s %8s %10s %10s %8s %10s %6s\n", "mlp",
              "batch", "hgc ms", "baseline ms", "speedup", "hgc GF/s",
              "base GF/s", "% peak", "compile ms", "check");
  for (const Row& row : rows) {
    const BenchResult& r = row.result;
    std::printf("%-6s %6lld %10.4f %12.4f %7.2fx %10.1f %10.1f %7.1f%% "
                "%10.1f %6s\n",
                row.mlp.c_str(), static_cast<long long>(row.batch), r.hgc_ms,
                r.baseline_ms, r.speedup(), r.hgc_gflops(),
                r.baseline_gflops(), 100 * r.hgc_gflops() / *peak,
                r.compile_ms, r.agree ? "PASS" : "FAIL");
  }

  double log_sum = 0;
  for (const Row& r : rows) log_sum += std::log(r.result.speedup());
  if (!rows.empty()) {
    std::printf("geomean speedup (hgc vs baseline, %zu workloads): %.2fx\n",
                rows.size(), std::exp(log_sum / rows.size()));
  }
  if (std::string e = WriteCsv(rows, *peak, csv); !e.empty()) {
    std::fprintf(stderr, "mlp: %s\n", e.c_str());
    return 1;
  }
  std::printf("csv: %s\n", csv.c_str());
  std::printf("%s\n", DrawChart(rows, mlps, *peak, threads, png).c_str());
  if (!ok) std::printf("mlp: FAIL (a workload failed or disagreed)\n");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace hgc

int main(int argc, char** argv) { return hgc::Main(argc, argv); }
