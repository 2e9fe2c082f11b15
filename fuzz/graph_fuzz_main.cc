// graph_fuzz: differential fuzzing of the compiler against the reference
// interpreter on random graphs (fuzz/differential.h).
//
//   bazel run -c opt //fuzz:graph_fuzz -- --count=20000 --seed=1
//
// Flags:
//   --count=N          graphs to run (default 1000)
//   --seed=S           the first seed; graph i uses seed S + i (default 1)
//   --special_every=N  every graph whose seed is a multiple of N runs on
//                      special values (default 4; 0 never, 1 always)
//   --threads=1,2      the thread counts each graph is compiled for
//   --kind=K           only graphs of kind K (elementwise, matmul, mlp,
//                      rowwise, shapes, bf16, int8, attention, mixed)
//   --out_dir=DIR      where failing graphs are written (default
//                      fuzz_failures, relative to the directory Bazel ran in)
//   --max_failures=N   stop after N failures (default 0: never)
//   --noempty          no dimensions of size 0 in special-values graphs
//   --nofork           run graphs in this process (a crash ends the run)
//   --verbose          print each seed before running it
//   --print            only print the graphs (no compile, no run)
// Exits 1 when any graph failed.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "fuzz/differential.h"

namespace {

int Usage(const std::string& bad) {
  std::cerr << "graph_fuzz: error: bad flag '" << bad
            << "' (see fuzz/graph_fuzz_main.cc for the flags)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  hgc::FuzzOptions options;
  options.count = 1000;
  options.out_dir = "fuzz_failures";
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    options.out_dir = std::string(wd) + "/fuzz_failures";
  }
  bool print_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos) value = arg.substr(eq + 1);
    const std::string name = arg.substr(0, eq);
    if (name == "--count") {
      if (!absl::SimpleAtoi(value, &options.count) || options.count < 0)
        return Usage(arg);
    } else if (name == "--seed") {
      if (!absl::SimpleAtoi(value, &options.first_seed)) return Usage(arg);
    } else if (name == "--special_every") {
      if (!absl::SimpleAtoi(value, &options.special_every) ||
          options.special_every < 0)
        return Usage(arg);
    } else if (name == "--threads") {
      options.thread_counts.clear();
      for (absl::string_view t : absl::StrSplit(value, ',')) {
        int n;
        if (!absl::SimpleAtoi(t, &n) || n < 1) return Usage(arg);
        options.thread_counts.push_back(n);
      }
    } else if (name == "--kind") {
      if (!hgc::ParseGraphKind(value, &options.kind)) return Usage(arg);
      options.fixed_kind = true;
    } else if (name == "--out_dir") {
      options.out_dir = value;
    } else if (name == "--max_failures") {
      if (!absl::SimpleAtoi(value, &options.max_failures)) return Usage(arg);
    } else if (name == "--noempty") {
      options.empty_tensors = false;
    } else if (name == "--nofork") {
      options.fork = false;
    } else if (name == "--print") {
      print_only = true;
    } else if (name == "--verbose") {
      options.verbose = true;
    } else {
      return Usage(arg);
    }
  }
  if (print_only) {
    for (int64_t n = 0; n < options.count; ++n) {
      const uint64_t seed = options.first_seed + static_cast<uint64_t>(n);
      std::cout << "// seed " << seed << "\n"
                << hgc::GraphText(seed, options) << "\n";
    }
    return 0;
  }
  hgc::FuzzStats stats = hgc::RunFuzz(options, std::cerr);
  std::cout << "graph_fuzz: " << stats.graphs << " graphs (seeds "
            << options.first_seed << ".."
            << options.first_seed + stats.graphs - 1 << ", " << stats.special
            << " on special values), " << stats.outputs_compared
            << " outputs compared, " << stats.unimplemented
            << " not compiled (unimplemented), " << stats.failures
            << " failures\n  by kind:";
  for (hgc::GraphKind k : hgc::kAllGraphKinds) {
    std::cout << " " << hgc::GraphKindName(k) << " "
              << stats.per_kind[static_cast<int>(k)];
  }
  std::cout << "\n";
  if (!stats.failing_seeds.empty()) {
    std::cout << "  failing seeds:";
    for (uint64_t s : stats.failing_seeds) std::cout << " " << s;
    std::cout << "\n";
  }
  return stats.failures == 0 ? 0 : 1;
}
