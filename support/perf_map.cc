#include "support/perf_map.h"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"

namespace hgc {

PerfMap* PerfMap::FromEnvironment() {
  static PerfMap* const map = []() -> PerfMap* {
    const char* env = std::getenv("HGC_PERF_MAP");
    if (env == nullptr || absl::string_view(env).empty() ||
        absl::string_view(env) == "0") {
      return nullptr;
    }
    absl::StatusOr<std::unique_ptr<PerfMap>> opened = Open(ProcessMapPath());
    return opened.ok() ? opened->release() : nullptr;
  }();
  return map;
}

// The name and place are perf's convention, not a choice of ours; P_tmpdir
// is the C library's temporary directory, the one perf reads.
std::string PerfMap::ProcessMapPath() {
  return absl::StrCat(P_tmpdir, "/perf-", getpid(), ".map");
}

absl::StatusOr<std::unique_ptr<PerfMap>> PerfMap::Open(
    const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot open the perf map '", path, "'"));
  }
  return std::unique_ptr<PerfMap>(new PerfMap(file));
}

PerfMap::~PerfMap() {
  absl::MutexLock lock(&mu_);
  std::fclose(file_);
}

void PerfMap::Record(const void* start, size_t size, absl::string_view name) {
  std::string line = absl::StrCat(absl::Hex(reinterpret_cast<uintptr_t>(start)),
                                  " ", absl::Hex(size), " ", name, "\n");
  for (size_t i = 0; i + 1 < line.size(); ++i) {
    if (line[i] == '\n' || line[i] == '\r') line[i] = ' ';
  }
  absl::MutexLock lock(&mu_);
  std::fputs(line.c_str(), file_);
  std::fflush(file_);
}

}  // namespace hgc
