// What the compile caches save (docs/cache.md), through the C++ API:
//   bazel run -c opt //bench:compile_cache -- [FILE.graph] [--repeats=N]
// compiles FILE (testdata/models/bert_layer.graph by default) once with
// the in-process cache cleared, then N more times (each a hit), and
// prints the first compile and the median of the repeats in ms. Run it
// with HGC_CACHE_DIR set twice in a row to see the first compile of a
// process with a warm object cache.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "hgc/compile_cache.h"
#include "hgc/hgc.h"

namespace {

double NowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "testdata/models/bert_layer.graph";
  int repeats = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (absl::StartsWith(arg, "--repeats=")) {
      repeats = std::max(1, std::atoi(arg.c_str() + 10));
    } else {
      path = arg;
    }
  }
  // `bazel run` starts in the runfiles; the workspace is where it was run.
  if (const char* dir = std::getenv("BUILD_WORKSPACE_DIRECTORY");
      dir != nullptr && path[0] != '/') {
    path = std::string(dir) + "/" + path;
  }
  hgc::CompileCache& cache = hgc::CompileCache::Global();
  cache.Clear();
  const double start = NowMs();
  auto first = hgc::CompileFile(path, hgc::Options());
  const double first_ms = NowMs() - start;
  if (!first.ok()) {
    std::fprintf(stderr, "%s\n", std::string(first.status().message()).c_str());
    return 1;
  }
  std::vector<double> repeat_ms;
  for (int i = 0; i < repeats; ++i) {
    const double t = NowMs();
    auto again = hgc::CompileFile(path, hgc::Options());
    repeat_ms.push_back(NowMs() - t);
    if (!again.ok()) return 1;
  }
  std::sort(repeat_ms.begin(), repeat_ms.end());
  const hgc::CompileCache::Counters counters = cache.counters();
  std::printf("%s\n", path.c_str());
  std::printf("first compile:    %8.3f ms (HGC_CACHE_DIR %s)\n", first_ms,
              std::getenv("HGC_CACHE_DIR") ? "set" : "unset");
  std::printf("repeat (median):  %8.3f ms over %d (%lld hits)\n",
              repeat_ms[repeat_ms.size() / 2], repeats,
              static_cast<long long>(counters.hits));
  return 0;
}
