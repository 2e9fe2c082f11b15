#include "bench/compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "baseline/primitive_executor.h"
#include "hgc/session.h"
#include "ir/dtype.h"
#include "ir/op_kind.h"
#include "ir/tensor.h"
#include "reference/check.h"
#include "reference/reference_interpreter.h"
#include "runtime/executable.h"
#include "support/status_macros.h"
#include "tensor_util/random_fill.h"
#include "tensor_util/random_inputs.h"

namespace hgc {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double MatmulFlopsDepth(const Graph& graph, int depth) {
  double flops = 0;
  for (const auto& op : graph.ops()) {
    if (op->kind_id() == OpKind::kMatmul && op->num_operands() == 2) {
      const Shape& a = op->operand(0)->type().shape;
      const Attribute* ta = op->FindAttr("transpose_a");
      bool transpose_a = ta != nullptr && ta->is_bool() && ta->as_bool();
      if (a.size() < 2) continue;
      double k = static_cast<double>(transpose_a ? a[a.size() - 2] : a.back());
      double n = 1;
      for (int64_t d : op->result()->type().shape) n *= static_cast<double>(d);
      flops += 2.0 * n * k;
    } else if (op->kind_id() == OpKind::kFusion && depth < 64) {
      if (const Graph* g = FusionBody(*op)) {
        flops += MatmulFlopsDepth(*g, depth + 1);
      }
    }
  }
  return flops;
}

// Runs `fn` `count` times, appending each run's seconds to `samples`.
void TimeRuns(const std::function<absl::Status()>& fn, int count,
              std::vector<double>& samples, absl::Status& status) {
  for (int i = 0; i < count && status.ok(); ++i) {
    double start = NowSeconds();
    status = fn();
    samples.push_back(NowSeconds() - start);
  }
}

// Runs `exe` `runs` times timing each step; each step's median and the
// median of the per-run sums.
absl::Status ProfileSteps(Executable& exe, absl::Span<const void* const> inputs,
                          absl::Span<void* const> outputs, int runs,
                          BenchResult& result) {
  const std::vector<Step>& steps = exe.program().steps;
  std::vector<std::vector<double>> per_step(steps.size());
  std::vector<double> totals;
  std::vector<double> seconds(steps.size());
  for (int run = 0; run < runs; ++run) {
    std::fill(seconds.begin(), seconds.end(), 0.0);
    HGC_RETURN_IF_ERROR(
        exe.ExecuteProfiled(inputs, outputs, absl::MakeSpan(seconds)));
    double total = 0;
    for (size_t s = 0; s < steps.size(); ++s) {
      per_step[s].push_back(seconds[s]);
      total += seconds[s];
    }
    totals.push_back(total);
  }
  for (size_t s = 0; s < steps.size(); ++s) {
    StepProfile step;
    step.name = steps[s].name;
    step.kind = steps[s].host        ? "host"
                : steps[s].shared    ? "pool"
                : steps[s].on_caller ? "serial"
                                     : "native";
    step.median_ms = Median(per_step[s]) * 1e3;
    result.profile.push_back(std::move(step));
  }
  result.profile_runs = runs;
  result.profile_total_ms = Median(totals) * 1e3;
  return absl::OkStatus();
}

}  // namespace

double MatmulFlops(const Graph& graph) { return MatmulFlopsDepth(graph, 0); }

double Median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + mid, samples.end());
  double upper = samples[mid];
  if (samples.size() % 2 == 1) return upper;
  double lower = *std::max_element(samples.begin(), samples.begin() + mid);
  return 0.5 * (lower + upper);
}

namespace {

// The compiled graph, timed: the median of kCompileRuns compiles, as a
// single one on a shared machine can take twice as long.
absl::StatusOr<std::unique_ptr<Executable>> CompileTimed(
    const Module& module, const Graph& entry, const BenchConfig& config,
    BenchResult& result) {
  SessionOptions session_options;
  session_options.pipeline = config.pipeline.empty() ? "O2" : config.pipeline;
  session_options.compile_options.num_threads = config.threads;
  session_options.compile_options.threading = config.threading;
  constexpr int kCompileRuns = 3;
  std::vector<double> compile_seconds;
  std::unique_ptr<Executable> exe;
  for (int run = 0; run < kCompileRuns; ++run) {
    double start = NowSeconds();
    HGC_ASSIGN_OR_RETURN(exe,
                         CompileEntry(module, entry.name(), session_options));
    compile_seconds.push_back(NowSeconds() - start);
  }
  result.compile_ms = Median(compile_seconds) * 1e3;
  return exe;
}

// The float dtype `result` was computed in: a float output cast from a
// narrower float (an autocast graph's cast of its bf16 result to f32),
// possibly through reshapes and transposes, carries the narrower one's
// precision; anything else its own dtype.
DType ComputedDType(const Value* result) {
  const DType dtype = result->type().dtype;
  const Value* v = result;
  for (int depth = 0; depth < 64 && v->defining_op() != nullptr; ++depth) {
    const Op& op = *v->defining_op();
    if (op.kind_id() != OpKind::kCast && op.kind_id() != OpKind::kReshape &&
        op.kind_id() != OpKind::kTranspose) {
      break;
    }
    v = op.operand(0);
    const DType from = v->type().dtype;
    if (IsFloat(dtype) && IsFloat(from) && DTypeSize(from) < DTypeSize(dtype)) {
      return from;
    }
  }
  return dtype;
}

// The tolerance for `result`: the default of the dtype it was computed in,
// with the fields the caller gave (--atol, --rtol) replaced.
Tolerance OutputTolerance(const Value* result, const BenchConfig& config) {
  Tolerance t = DefaultTolerance(ComputedDType(result));
  if (config.atol.has_value()) t.atol = *config.atol;
  if (config.rtol.has_value()) t.rtol = *config.rtol;
  return t;
}

// Agreement of the first runs' outputs. Where hgc and the baseline differ,
// the reference interpreter judges both: oneDNN legitimately rounds
// otherwise (it keeps f32 between the post-ops it fuses, where the graph
// rounds each bf16 op), so two correct results may differ, but a side the
// interpreter rejects is wrong. A wrong hgc fails the check; so does a
// wrong baseline, since a speedup over wrong numbers means nothing.
absl::Status CheckAgreement(const Graph& entry,
                            const std::vector<Tensor>& params,
                            const std::vector<Tensor>& hgc_out,
                            const std::vector<Tensor>& base_out,
                            const BenchConfig& config, BenchResult& result) {
  result.agree = true;
  std::vector<Tolerance> tolerances;
  std::vector<size_t> differing;
  for (size_t i = 0; i < hgc_out.size(); ++i) {
    tolerances.push_back(OutputTolerance(entry.results()[i], config));
    HGC_ASSIGN_OR_RETURN(
        CompareResult cmp,
        CompareTensors(hgc_out[i], base_out[i], tolerances.back()));
    if (cmp.ok()) {
      result.check_lines.push_back(absl::StrCat("out", i, ": ", cmp.Summary()));
    } else {
      differing.push_back(i);
      result.check_lines.push_back(
          absl::StrCat("out", i,
                       ": hgc and baseline differ, the reference "
                       "interpreter judges both (",
                       cmp.Summary(), ")"));
    }
  }
  if (differing.empty()) return absl::OkStatus();
  absl::StatusOr<BoundedResults> reference =
      InterpretWithErrorBounds(entry, params);
  if (!reference.ok()) {
    result.agree = false;
    result.check_lines.push_back(
        absl::StrCat("reference interpreter: ", reference.status().ToString()));
    return absl::OkStatus();
  }
  HGC_ASSIGN_OR_RETURN(std::vector<CompareResult> hgc_judged,
                       CompareWithReference(*reference, hgc_out, tolerances));
  HGC_ASSIGN_OR_RETURN(std::vector<CompareResult> base_judged,
                       CompareWithReference(*reference, base_out, tolerances));
  for (size_t i : differing) {
    result.check_lines.push_back(absl::StrCat(
        "out", i,
        " (hgc vs reference interpreter): ", hgc_judged[i].Summary()));
    result.check_lines.push_back(absl::StrCat(
        "out", i,
        " (baseline vs reference interpreter): ", base_judged[i].Summary()));
    if (!hgc_judged[i].ok()) result.agree = false;
    if (!base_judged[i].ok()) {
      result.agree = false;
      result.baseline_wrong = true;
    }
  }
  return absl::OkStatus();
}

// A warm-up, which also sizes the timed loops, then alternating blocks per
// side; medians over all runs. OpenMP's threads are put to sleep after
// each baseline block (untimed, by `release_base`) so that they do not spin
// through the next hgc block.
absl::Status TimeAlternating(const std::function<absl::Status()>& run_hgc,
                             const std::function<absl::Status()>& run_base,
                             const std::function<absl::Status()>& release_base,
                             const BenchConfig& config, BenchResult& result) {
  std::vector<double> warm_hgc, warm_base;
  absl::Status status;
  TimeRuns(run_hgc, std::max(config.warmup, 1), warm_hgc, status);
  TimeRuns(run_base, std::max(config.warmup, 1), warm_base, status);
  HGC_RETURN_IF_ERROR(status);
  HGC_RETURN_IF_ERROR(release_base());
  int iters = config.iters;
  if (iters <= 0) {
    double per_run = std::max(Median(warm_hgc), Median(warm_base));
    double n = config.target_seconds / std::max(per_run, 1e-7);
    iters = static_cast<int>(std::clamp(n, 10.0, 100000.0));
  }
  result.iters = iters;
  std::vector<double> hgc_samples, base_samples;
  const int rounds = std::clamp(config.rounds, 1, iters);
  std::vector<double> round_ratios;
  for (int round = 0; round < rounds; ++round) {
    const int count = iters * (round + 1) / rounds - iters * round / rounds;
    std::vector<double> hgc_round, base_round;
    TimeRuns(run_hgc, count, hgc_round, status);
    TimeRuns(run_base, count, base_round, status);
    const double hgc_median = Median(hgc_round);
    if (hgc_median > 0) round_ratios.push_back(Median(base_round) / hgc_median);
    result.round_hgc_ms.push_back(hgc_median * 1e3);
    result.round_baseline_ms.push_back(Median(base_round) * 1e3);
    hgc_samples.insert(hgc_samples.end(), hgc_round.begin(), hgc_round.end());
    base_samples.insert(base_samples.end(), base_round.begin(),
                        base_round.end());
    if (status.ok()) status = release_base();
    if (config.round_probe) result.round_probes.push_back(config.round_probe());
  }
  HGC_RETURN_IF_ERROR(status);
  result.hgc_ms = Median(hgc_samples) * 1e3;
  result.baseline_ms = Median(base_samples) * 1e3;
  result.round_speedup = Median(round_ratios);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BenchResult> BenchGraph(const Module& module, const Graph& entry,
                                       const BenchConfig& config) {
  BenchResult result;
  result.graph = entry.name();
  result.threads = config.threads;
  result.flops = MatmulFlops(entry);

  // Same seeded inputs for both sides (as `hgc --run`: seed, param name).
  HGC_ASSIGN_OR_RETURN(std::vector<Tensor> params,
                       RandomInputs(entry, config.seed));
  for (int i = 0; i < entry.num_params(); ++i) {
    auto bound = config.bound_params.find(entry.param(i)->name());
    if (bound != config.bound_params.end()) params[i] = bound->second;
  }
  // The compiler (timed), then its constants (untimed).
  HGC_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe,
                       CompileTimed(module, entry, config, result));
  HGC_RETURN_IF_ERROR(exe->SetConstants(params));

  // The baseline, its weights reordered once in SetConstants.
  PrimitiveExecutor::Options base_options;
  base_options.num_threads = config.threads;
  HGC_ASSIGN_OR_RETURN(std::unique_ptr<PrimitiveExecutor> base,
                       PrimitiveExecutor::Create(entry, base_options));
  HGC_RETURN_IF_ERROR(base->SetConstants(params));
  const std::string summary = base->Summary();
  result.baseline_summary = summary.substr(0, summary.find('\n'));
  for (const PrimitiveExecutor::StepInfo& step : base->steps()) {
    absl::StrAppend(&result.baseline_steps,
                    result.baseline_steps.empty() ? "" : " | ",
                    step.description, " [", step.impl, "]");
    if (step.fallback) {
      result.baseline_fallbacks.push_back(
          absl::StrCat(step.op_label, ": ", step.fallback_reason));
    }
  }

  // Preallocated outputs: neither timed loop allocates.
  std::vector<Tensor> hgc_out, base_out;
  std::vector<void*> out_ptrs;
  for (const Value* r : entry.results()) {
    HGC_ASSIGN_OR_RETURN(Tensor a, Tensor::Create(r->type()));
    HGC_ASSIGN_OR_RETURN(Tensor b, Tensor::Create(r->type()));
    out_ptrs.push_back(a.mutable_raw());
    hgc_out.push_back(std::move(a));
    base_out.push_back(std::move(b));
  }
  std::vector<const void*> in_ptrs;
  for (const Tensor& t : params) in_ptrs.push_back(t.raw());
  std::function<absl::Status()> run_hgc = [&] {
    return exe->Execute(in_ptrs, out_ptrs);
  };
  std::function<absl::Status()> run_base = [&] {
    return base->RunInto(params, absl::MakeSpan(base_out));
  };
  // An untimed baseline run that leaves OpenMP's threads asleep.
  std::function<absl::Status()> release_base = [&] {
    return base->RunIntoAndReleaseThreads(params, absl::MakeSpan(base_out));
  };

  HGC_RETURN_IF_ERROR(run_hgc());
  HGC_RETURN_IF_ERROR(release_base());
  HGC_RETURN_IF_ERROR(
      CheckAgreement(entry, params, hgc_out, base_out, config, result));
  HGC_RETURN_IF_ERROR(
      TimeAlternating(run_hgc, run_base, release_base, config, result));
  if (config.profile) {
    HGC_RETURN_IF_ERROR(
        ProfileSteps(*exe, in_ptrs, out_ptrs, result.iters, result));
  }
  return result;
}

void PrintBenchResult(const BenchResult& r, std::ostream& out) {
  auto gflops = [&](double g) {
    return r.flops > 0 ? absl::StrFormat("%10.2f GFLOP/s", g)
                       : std::string("       n/a GFLOP/s (no matmuls)");
  };
  out << absl::StrFormat(
      "bench: @%s, %d thread%s, %d timed runs per side (median), %.4g "
      "MFLOP per run (2*M*N*K per matmul)\n",
      r.graph, r.threads, r.threads == 1 ? "" : "s", r.iters, r.flops / 1e6);
  out << absl::StrFormat("compile:  %10.3f ms\n", r.compile_ms);
  out << absl::StrFormat("hgc:      %10.4f ms  %s\n", r.hgc_ms,
                         gflops(r.hgc_gflops()));
  out << absl::StrFormat("baseline: %10.4f ms  %s  (%s)\n", r.baseline_ms,
                         gflops(r.baseline_gflops()), r.baseline_summary);
  for (const std::string& fallback : r.baseline_fallbacks) {
    out << "baseline fallback: " << fallback << "\n";
  }
  if (r.baseline_fallbacks.empty()) {
    out << absl::StrFormat(
        "speedup:  %10.2fx (baseline time / hgc time, median over rounds)\n",
        r.speedup());
  } else {
    // A ratio against the interpreter, not against what a framework would
    // run on oneDNN: no result.
    const size_t n = r.baseline_fallbacks.size();
    out << absl::StrFormat(
        "speedup:  %10s  (the baseline ran %d op%s on the reference "
        "interpreter: no oneDNN primitive for %s on this CPU; raw time ratio "
        "%.2fx)\n",
        "n/a", n, n == 1 ? "" : "s", n == 1 ? "it" : "them", r.speedup());
  }
  for (const std::string& line : r.check_lines) {
    out << "check " << line << "\n";
  }
  out << "check: " << (r.agree ? "PASS" : "FAIL")
      << " (hgc vs baseline, and both vs the reference interpreter where "
         "they differ)\n";
  if (r.baseline_wrong) {
    out << "check: the baseline's results are wrong (a bug in the primitive "
           "baseline): the speedup above compares with wrong numbers\n";
  }
  if (r.profile_runs > 0) PrintProfile(r, out);
}

void PrintProfile(const BenchResult& r, std::ostream& out) {
  out << absl::StrFormat(
      "profile: hgc's %d step%s, median of %d runs each (wall time on the "
      "calling thread: waking the pool and waiting for its slowest thread "
      "included)\n",
      r.profile.size(), r.profile.size() == 1 ? "" : "s", r.profile_runs);
  out << absl::StrFormat("  %4s  %-6s  %10s  %6s  %s\n", "#", "kind",
                         "median ms", "share", "step");
  const double total = r.profile_total_ms;
  for (size_t s = 0; s < r.profile.size(); ++s) {
    const StepProfile& step = r.profile[s];
    out << absl::StrFormat(
        "  %4d  %-6s  %10.4f  %5.1f%%  %s\n", s, step.kind, step.median_ms,
        total > 0 ? 100 * step.median_ms / total : 0.0, step.name);
  }
  out << absl::StrFormat("  %4s  %-6s  %10.4f  (median of the runs' sums)\n",
                         "", "total", total);
}

}  // namespace hgc
