// The sweep's report (bench/sweep.h): the table, the geomean line, the
// baseline's fallbacks, the CSV and the gnuplot chart.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "bench/sweep.h"

namespace hgc {
namespace bench {
namespace {

// Why a row is left out of the geomean and printed as n/a.
constexpr char kNotComparableReason[] =
    "the baseline ran ops on the reference interpreter, no oneDNN primitive "
    "on this CPU";

std::string Pad(const KeyColumn& k, const std::string& s) {
  return k.left ? absl::StrFormat("%-*s", k.width, s)
                : absl::StrFormat("%*s", k.width, s);
}

// "%NAME = KIND: REASON" (compare.h's baseline_fallbacks) as KIND and
// REASON; a line of another form is its own kind, with no reason.
std::pair<std::string, std::string> SplitFallback(absl::string_view line) {
  const size_t colon = line.find(": ");
  absl::string_view label = line.substr(0, colon);
  absl::string_view reason =
      colon == absl::string_view::npos ? "" : line.substr(colon + 2);
  const size_t eq = label.rfind(" = ");
  if (eq != absl::string_view::npos) label = label.substr(eq + 3);
  return {std::string(label), std::string(reason)};
}

// One line of the speedup chart: speedup per batch of `workload`'s
// comparable rows, then hgc's % of peak per batch of all its rows.
std::pair<std::string, std::string> ChartData(const std::vector<SweepRow>& rows,
                                              const std::string& workload) {
  std::string speedup, pct;
  for (const SweepRow& r : rows) {
    if (r.sweep_case->workload != workload) continue;
    if (Comparable(r)) {
      absl::StrAppend(&speedup, r.sweep_case->batch, " ", r.result.speedup(),
                      "\n");
    }
    absl::StrAppend(&pct, r.sweep_case->batch, " ", r.hgc_pct_peak, "\n");
  }
  return {speedup, pct};
}

}  // namespace

bool Comparable(const SweepRow& row) {
  return row.result.baseline_fallbacks.empty();
}

SweepGeomean GeomeanSpeedup(const std::vector<SweepRow>& rows) {
  SweepGeomean g;
  double log_sum = 0;
  for (const SweepRow& r : rows) {
    if (!Comparable(r)) {
      ++g.left_out;
      continue;
    }
    log_sum += std::log(r.result.speedup());
    ++g.counted;
  }
  if (g.counted > 0) g.speedup = std::exp(log_sum / g.counted);
  return g;
}

std::string GeomeanLine(const std::vector<SweepRow>& rows) {
  const SweepGeomean g = GeomeanSpeedup(rows);
  if (g.left_out == 0) {
    return absl::StrFormat(
        "geomean speedup (hgc vs baseline, %d workloads): "
        "%.2fx",
        g.counted, g.speedup);
  }
  const std::string counts = absl::StrFormat(
      "hgc vs baseline, %d of %d workloads; %d left out: %s", g.counted,
      g.counted + g.left_out, g.left_out, kNotComparableReason);
  if (g.counted == 0) {
    return absl::StrCat("geomean speedup (", counts,
                        "): none, no workload is comparable");
  }
  return absl::StrFormat("geomean speedup (%s): %.2fx", counts, g.speedup);
}

std::vector<std::string> BaselineFallbackLines(
    const std::vector<SweepRow>& rows) {
  struct Group {
    std::string kind, reason;
    int ops = 0;
    // The cases' batches per workload, workloads in order of appearance.
    std::vector<std::pair<std::string, std::vector<int64_t>>> cases;
  };
  std::vector<Group> groups;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const SweepRow& row : rows) {
    for (const std::string& line : row.result.baseline_fallbacks) {
      std::pair<std::string, std::string> key = SplitFallback(line);
      auto [it, added] = index.emplace(key, groups.size());
      if (added) groups.push_back({key.first, key.second});
      Group& g = groups[it->second];
      ++g.ops;
      const std::string& workload = row.sweep_case->workload;
      auto c = std::find_if(g.cases.begin(), g.cases.end(),
                            [&](const auto& e) { return e.first == workload; });
      if (c == g.cases.end()) c = g.cases.insert(c, {workload, {}});
      std::vector<int64_t>& batches = c->second;
      if (batches.empty() || batches.back() != row.sweep_case->batch) {
        batches.push_back(row.sweep_case->batch);
      }
    }
  }
  std::vector<std::string> lines;
  for (const Group& g : groups) {
    std::vector<std::string> cases;
    for (const auto& [workload, batches] : g.cases) {
      cases.push_back(
          absl::StrCat(workload, " batch ", absl::StrJoin(batches, ", ")));
    }
    lines.push_back(absl::StrCat("baseline fallback: ", g.ops, " ", g.kind,
                                 " op", g.ops == 1 ? "" : "s", " (",
                                 absl::StrJoin(cases, "; "), ")",
                                 g.reason.empty() ? "" : ": ", g.reason));
  }
  return lines;
}

void PrintSweepTable(const SweepSpec& spec, const std::vector<SweepRow>& rows) {
  std::string header;
  for (const KeyColumn& k : spec.keys) {
    absl::StrAppend(&header, Pad(k, k.header), " ");
  }
  std::printf("%s%10s %12s %8s %10s %10s %8s %9s %10s %6s\n", header.c_str(),
              "hgc ms", "baseline ms", "speedup", "hgc GF/s", "base GF/s",
              "% peak", "peak GF/s", "compile ms", "check");
  bool footnote = false;
  for (const SweepRow& row : rows) {
    const BenchResult& r = row.result;
    std::string keys;
    for (size_t i = 0; i < spec.keys.size(); ++i) {
      absl::StrAppend(&keys, Pad(spec.keys[i], row.sweep_case->keys[i]), " ");
    }
    const std::string speedup = Comparable(row)
                                    ? absl::StrFormat("%7.2fx", r.speedup())
                                    : std::string("    n/a*");
    footnote = footnote || !Comparable(row);
    std::printf("%s%10.4f %12.4f %8s %10.1f %10.1f %7.1f%% %9.1f %10.1f %6s\n",
                keys.c_str(), r.hgc_ms, r.baseline_ms, speedup.c_str(),
                r.hgc_gflops(), r.baseline_gflops(), row.hgc_pct_peak, row.peak,
                r.compile_ms, r.agree ? "PASS" : "FAIL");
  }
  if (footnote) {
    std::printf(
        "* not comparable: the baseline ran ops on the reference interpreter "
        "(no oneDNN primitive on this CPU; see the baseline fallback lines), "
        "where a framework would call oneDNN; the CSV keeps the raw time "
        "ratio\n");
  }
  if (!rows.empty()) std::printf("%s\n", GeomeanLine(rows).c_str());
  for (const std::string& line : BaselineFallbackLines(rows)) {
    std::printf("%s\n", line.c_str());
  }
}

std::string WriteSweepCsv(const SweepSpec& spec,
                          const std::vector<SweepRow>& rows,
                          const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return absl::StrCat("cannot write ", path);
  std::vector<std::string> key_names;
  for (const KeyColumn& k : spec.keys) key_names.push_back(k.csv);
  std::fprintf(f,
               "%s,threads,hgc_ms,baseline_ms,speedup,baseline_fallbacks,"
               "hgc_gflops,baseline_gflops,hgc_pct_peak,baseline_pct_peak,"
               "peak_gflops,compile_ms,agree\n",
               absl::StrJoin(key_names, ",").c_str());
  for (const SweepRow& r : rows) {
    const BenchResult& b = r.result;
    std::fprintf(
        f, "%s,%d,%.5f,%.5f,%.4f,%zu,%.3f,%.3f,%.2f,%.2f,%.2f,%.2f,%d\n",
        absl::StrJoin(r.sweep_case->keys, ",").c_str(), b.threads, b.hgc_ms,
        b.baseline_ms, b.speedup(), b.baseline_fallbacks.size(), b.hgc_gflops(),
        b.baseline_gflops(), r.hgc_pct_peak, r.baseline_pct_peak, r.peak,
        b.compile_ms, b.agree ? 1 : 0);
  }
  const bool write_failed = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || write_failed) {
    return absl::StrCat("cannot write ", path);
  }
  return "";
}

std::string DrawSweepChart(const SweepSpec& spec,
                           const std::vector<SweepRow>& rows, int threads,
                           PeakInstruction peak, const std::string& png) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    return "gnuplot not found (Debian: gnuplot-nox, see ./configure): "
           "chart skipped";
  }
  const SweepGeomean g = GeomeanSpeedup(rows);
  std::string script = absl::StrCat(
      "set terminal pngcairo size 960,540 noenhanced\n", "set output '", png,
      "'\n",
      // A note under the title when speedups are left out (in double
      // quotes, where gnuplot reads \n).
      absl::StrFormat(
          "set title \"hgc vs oneDNN primitives, %s, %d "
          "thread%s%s\"\n",
          spec.chart_title, threads, threads == 1 ? "" : "s",
          g.left_out == 0
              ? ""
              : absl::StrFormat("\\nno speedup for %d of %d cases: their "
                                "baseline ran ops on the reference interpreter",
                                g.left_out, g.counted + g.left_out)),
      "set xlabel 'batch'\nset logscale x 2\nset xtics (",
      absl::StrJoin(spec.chart_batches, ","), ")\n",
      // A margin around the batches, so that the end points show.
      absl::StrFormat("set xrange [%g:%g]\n", spec.chart_batches.front() / 1.3,
                      spec.chart_batches.back() * 1.3),
      "set ylabel 'speedup (baseline time / hgc time)'\n",
      absl::StrFormat("set y2label 'hgc %% of %s peak'\n",
                      PeakInstructionName(peak)),
      "set y2tics\nset ytics nomirror\n"
      "set yrange [0:*]\nset y2range [0:100]\nset grid\n"
      "set key below\n");
  std::string plot = "plot ";
  int plotted = 0;
  for (size_t w = 0; w < spec.workloads.size(); ++w) {
    const std::string& name = spec.workloads[w];
    auto [speedup, pct] = ChartData(rows, name);
    // gnuplot refuses to plot an empty data block (a --short sweep may
    // leave a workload out; a workload may have no comparable row).
    if (!speedup.empty()) {
      absl::StrAppend(&script, "$s", w, " << EOD\n", speedup, "EOD\n");
      absl::StrAppend(&plot, plotted++ ? ", " : "", "$s", w,
                      " using 1:2 with linespoints lw 2 title '", name,
                      " speedup'");
    }
    if (!pct.empty()) {
      absl::StrAppend(&script, "$p", w, " << EOD\n", pct, "EOD\n");
      absl::StrAppend(&plot, plotted++ ? ", " : "", "$p", w,
                      " using 1:2 axes x1y2 with linespoints dt 2 title '",
                      name, " % of peak'");
    }
  }
  if (plotted == 0) return "no results: chart skipped";
  absl::StrAppend(&script, plot, ", 1 with lines lc 'gray' notitle\n");
  FILE* p = popen("gnuplot", "w");
  if (p == nullptr) return "cannot start gnuplot: chart skipped";
  std::fputs(script.c_str(), p);
  int rc = pclose(p);
  if (rc != 0) return absl::StrCat("gnuplot failed (status ", rc, ")");
  return absl::StrCat("chart: ", png);
}

}  // namespace bench
}  // namespace hgc
