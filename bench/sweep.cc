#include "bench/sweep.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "bench/isa_peak.h"
#include "runtime/thread_pool.h"

namespace hgc {
namespace bench {

const char* SweepDtypeName(SweepDtype dtype) {
  switch (dtype) {
    case SweepDtype::kF32:
      return "f32";
    case SweepDtype::kBf16:
      return "bf16";
    case SweepDtype::kInt8:
      return "int8";
  }
  return "?";
}

PeakInstruction SweepPeakInstruction(SweepDtype dtype) {
  std::vector<PeakInstruction> candidates;
  switch (dtype) {
    case SweepDtype::kF32:
      break;
    case SweepDtype::kBf16:
      candidates = {PeakInstruction::kTdpbf16ps, PeakInstruction::kVdpbf16ps};
      break;
    case SweepDtype::kInt8:
      // The AVX2 kernel's exact vpmaddwd + vpaddd where there is no VNNI.
      candidates = {PeakInstruction::kTdpbusd, PeakInstruction::kVpdpbusd,
                    PeakInstruction::kVpmaddwdYmm};
      break;
  }
  for (PeakInstruction instr : candidates) {
    if (PeakMeter::Create(instr).ok()) return instr;
  }
  return F32PeakInstruction();
}

absl::StatusOr<SweepArgs> ParseSweepArgs(int argc, char** argv,
                                         const std::string& name) {
  // Under `bazel run`, relative paths mean the user's directory.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY")) {
    if (chdir(dir) != 0) {
      std::fprintf(stderr, "%s: cannot enter %s\n", name.c_str(), dir);
    }
  }
  SweepArgs args;
  bool bad = false;
  for (int i = 1; i < argc && !bad; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--short") {
      args.short_run = true;
    } else if (absl::ConsumePrefix(&arg, "--dtype=")) {
      bad = true;
      for (SweepDtype d :
           {SweepDtype::kF32, SweepDtype::kBf16, SweepDtype::kInt8}) {
        if (arg == SweepDtypeName(d)) {
          args.dtype = d;
          bad = false;
        }
      }
    } else if (absl::ConsumePrefix(&arg, "--threads=")) {
      bad = !absl::SimpleAtoi(arg, &args.threads) || args.threads < 1;
    } else if (arg == "--threading=pool" || arg == "--threading=openmp") {
      args.threading = arg == "--threading=openmp" ? Threading::kOpenMP
                                                   : Threading::kOwnPool;
    } else if (absl::ConsumePrefix(&arg, "--iters=")) {
      bad = !absl::SimpleAtoi(arg, &args.iters) || args.iters < 1;
    } else if (absl::ConsumePrefix(&arg, "--csv=")) {
      args.csv = std::string(arg);
    } else if (absl::ConsumePrefix(&arg, "--png=")) {
      args.png = std::string(arg);
    } else {
      bad = true;
    }
  }
  if (bad) {
    std::fprintf(stderr,
                 "usage: %s [--threads=N] [--threading=pool|openmp] "
                 "[--dtype=f32|bf16|int8] [--short] [--iters=N] [--csv=FILE] "
                 "[--png=FILE]\n",
                 name.c_str());
    return absl::InvalidArgumentError("bad flag");
  }
  if (args.csv.empty()) {
    args.csv = args.dtype == SweepDtype::kF32
                   ? name + ".csv"
                   : absl::StrCat(name, "_", SweepDtypeName(args.dtype), ".csv");
  }
  if (args.png.empty()) {
    args.png = absl::EndsWith(args.csv, ".csv")
                   ? args.csv.substr(0, args.csv.size() - 4)
                   : args.csv;
    args.png += ".png";
  }
  return args;
}

absl::StatusOr<double> MeasurePeak(PeakInstruction instr, int threads,
                                   int samples, double seconds) {
  cpu_set_t process;
  CPU_ZERO(&process);
  for (int cpu : ProcessCpus()) CPU_SET(cpu, &process);
  std::vector<std::unique_ptr<PeakMeter>> meters;
  for (int t = 0; t < threads; ++t) {
    absl::StatusOr<std::unique_ptr<PeakMeter>> m =
        PeakMeter::Create(instr);
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
      std::vector<double> rates;
      for (int i = 0; i < samples; ++i) {
        rates.push_back(meters[t]->Sample(seconds));
      }
      gflops[t] = Median(rates);
    });
  }
  for (std::thread& w : workers) w.join();
  double total = 0;
  for (double g : gflops) total += g;
  return total;
}

void SetPeakShares(SweepRow& row, double fallback_peak) {
  const BenchResult& r = row.result;
  row.peak = r.round_probes.empty() ? fallback_peak : Median(r.round_probes);
  // GFLOP/s = flops / (ms * 1e-3) / 1e9; as a % of `peak`.
  auto pct = [&r](double ms, double peak) {
    return ms > 0 ? r.flops / ms / peak / 1e4 : 0;
  };
  std::vector<double> hgc, baseline;
  for (size_t i = 0; i < r.round_probes.size(); ++i) {
    const double peak = r.round_probes[i];
    if (peak <= 0 || i >= r.round_hgc_ms.size()) continue;
    hgc.push_back(pct(r.round_hgc_ms[i], peak));
    baseline.push_back(pct(r.round_baseline_ms[i], peak));
  }
  if (hgc.empty()) {
    // No samples: the overall rates over the one peak.
    row.hgc_pct_peak = row.peak > 0 ? 100 * r.hgc_gflops() / row.peak : 0;
    row.baseline_pct_peak =
        row.peak > 0 ? 100 * r.baseline_gflops() / row.peak : 0;
    return;
  }
  row.hgc_pct_peak = Median(hgc);
  row.baseline_pct_peak = Median(baseline);
}

int RunSweep(const SweepSpec& spec, const SweepArgs& args,
             const std::vector<SweepCase>& cases,
             const std::function<void(const SweepRow&)>& on_row) {
  const char* name = spec.name.c_str();
  const PeakInstruction instr = SweepPeakInstruction(args.dtype);
  absl::StatusOr<double> peak = MeasurePeak(instr, args.threads);
  if (!peak.ok()) {
    std::fprintf(stderr, "%s: peak: %s\n", name,
                 std::string(peak.status().message()).c_str());
    return 1;
  }
  std::vector<SweepRow> rows;
  bool ok = true;
  for (const SweepCase& c : cases) {
    Module module;
    absl::StatusOr<const Graph*> g = c.build(module);
    BenchConfig config;
    config.threads = args.threads;
    config.threading = args.threading;
    config.iters = args.iters;
    config.warmup = spec.warmup;
    config.target_seconds = spec.target_seconds;
    // Three 20 ms loops per thread: about 60 ms a round.
    config.round_probe = [&args, instr] {
      absl::StatusOr<double> p = MeasurePeak(instr, args.threads, 3, 0.02);
      return p.ok() ? *p : 0.0;
    };
    absl::StatusOr<BenchResult> r =
        g.ok() ? BenchGraph(module, **g, config)
               : absl::StatusOr<BenchResult>(g.status());
    if (!r.ok()) {
      std::printf("%s batch %lld: error: %s\n", c.workload.c_str(),
                  static_cast<long long>(c.batch),
                  std::string(r.status().message()).c_str());
      ok = false;
      continue;
    }
    ok = ok && r->agree;
    std::fprintf(stderr, "%s: %s batch %lld done (%d runs per side)\n", name,
                 c.workload.c_str(), static_cast<long long>(c.batch),
                 r->iters);
    rows.push_back({&c, std::move(*r)});
    SetPeakShares(rows.back(), *peak);
    if (on_row) on_row(rows.back());
  }
  absl::StatusOr<double> peak_after = MeasurePeak(instr, args.threads);
  double lowest = 0, highest = 0;
  for (const SweepRow& row : rows) {
    lowest = lowest == 0 ? row.peak : std::min(lowest, row.peak);
    highest = std::max(highest, row.peak);
  }
  std::printf(
      "%s sweep; peak of %s, %d thread%s (one loop per thread, all at once): "
      "%.1f GOP/s before the sweep, %.1f after, %.1f-%.1f over the cases "
      "(sampled after each round; %% peak is the median over a case's rounds "
      "of its GFLOP/s over the peak sampled after the round)\n",
      SweepDtypeName(args.dtype), PeakInstructionName(instr), args.threads,
      args.threads == 1 ? "" : "s", *peak,
      peak_after.ok() ? *peak_after : 0.0, lowest, highest);
  PrintSweepTable(spec, rows);
  if (std::string e = WriteSweepCsv(spec, rows, args.csv); !e.empty()) {
    std::fprintf(stderr, "%s: %s\n", name, e.c_str());
    return 1;
  }
  std::printf("csv: %s\n", args.csv.c_str());
  std::printf(
      "%s\n",
      DrawSweepChart(spec, rows, args.threads, instr, args.png).c_str());
  if (!ok) std::printf("%s: FAIL (a workload failed or disagreed)\n", name);
  return ok ? 0 : 1;
}

}  // namespace bench
}  // namespace hgc
