#include "support/system_limits.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace hgc {
namespace {

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A number in a file such as memory.max; nullopt for "max" or unreadable.
std::optional<int64_t> ReadNumber(const std::string& path) {
  std::optional<std::string> text = ReadSmallFile(path);
  int64_t v;
  if (!text.has_value() ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &v)) {
    return std::nullopt;
  }
  return v;
}

// "KEY VALUE" lines (memory.stat) or "Key:   VALUE kB" lines (meminfo).
std::optional<int64_t> ReadKeyed(const std::string& path,
                                 absl::string_view key) {
  std::optional<std::string> text = ReadSmallFile(path);
  if (!text.has_value()) return std::nullopt;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    std::vector<absl::string_view> parts =
        absl::StrSplit(line, absl::ByAnyChar(" \t:"), absl::SkipEmpty());
    int64_t v;
    if (parts.size() >= 2 && parts[0] == key &&
        absl::SimpleAtoi(parts[1], &v)) {
      return parts.size() >= 3 && parts[2] == "kB" ? v * 1024 : v;
    }
  }
  return std::nullopt;
}

// The directories of this process's cgroup for `controller` ("" for the v2
// unified hierarchy), most specific first: the path from /proc/self/cgroup
// and the mount's root (which is the process's own cgroup inside a cgroup
// namespace).
std::vector<std::string> CgroupDirs(absl::string_view controller) {
  std::string base = controller.empty()
                         ? "/sys/fs/cgroup"
                         : absl::StrCat("/sys/fs/cgroup/", controller);
  std::vector<std::string> dirs;
  if (std::optional<std::string> text = ReadSmallFile("/proc/self/cgroup")) {
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      std::vector<absl::string_view> f = absl::StrSplit(line, ':');
      if (f.size() != 3) continue;
      bool match = controller.empty() && f[0] == "0" && f[1].empty();
      for (absl::string_view c : absl::StrSplit(f[1], ',')) {
        if (!controller.empty() && c == controller) match = true;
      }
      if (match && f[2] != "/") dirs.push_back(absl::StrCat(base, f[2]));
    }
  }
  dirs.push_back(base);
  return dirs;
}

// limit - (usage - reclaimable page cache) of the first cgroup directory
// with a numeric limit.
std::optional<int64_t> CgroupHeadroom(absl::string_view controller,
                                      absl::string_view limit_file,
                                      absl::string_view usage_file,
                                      absl::string_view cache_key) {
  for (const std::string& dir : CgroupDirs(controller)) {
    std::optional<int64_t> limit =
        ReadNumber(absl::StrCat(dir, "/", limit_file));
    // cgroup v1 spells "no limit" as a number near 2^63.
    if (!limit.has_value() || *limit >= (int64_t{1} << 60)) continue;
    int64_t usage = ReadNumber(absl::StrCat(dir, "/", usage_file)).value_or(0);
    int64_t cache =
        ReadKeyed(absl::StrCat(dir, "/memory.stat"), cache_key).value_or(0);
    return std::max<int64_t>(0, *limit - std::max<int64_t>(0, usage - cache));
  }
  return std::nullopt;
}

int CpuCount() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// Tasks the pids cgroup still allows, if it limits them.
std::optional<int64_t> PidsHeadroom() {
  for (const std::string& controller : {std::string(""), std::string("pids")}) {
    for (const std::string& dir : CgroupDirs(controller)) {
      std::optional<int64_t> max = ReadNumber(dir + "/pids.max");
      if (!max.has_value()) continue;
      int64_t current = ReadNumber(dir + "/pids.current").value_or(0);
      return std::max<int64_t>(0, *max - current);
    }
  }
  return std::nullopt;
}

}  // namespace

int MaxThreads() {
  int64_t n = std::min<int64_t>(kMaxThreadsEver, int64_t{8} * CpuCount());
  // The pool's workers are tasks of this cgroup too (the caller is one
  // already); leave a few for whatever else the process starts.
  if (std::optional<int64_t> pids = PidsHeadroom()) {
    n = std::min<int64_t>(n, *pids - 4 + 1);
  }
  return static_cast<int>(std::max<int64_t>(1, n));
}

absl::Status CheckNumThreads(int64_t num_threads, absl::string_view what) {
  int max = MaxThreads();
  if (num_threads >= 1 && num_threads <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " must be in [1, ", max, "] on this machine, got ",
                   num_threads, " (at most 8 threads per CPU, ", CpuCount(),
                   " CPUs, and what the cgroup's pids limit leaves)"));
}

std::optional<int64_t> AvailableMemoryBytes(std::string* source) {
  std::optional<int64_t> best;
  auto consider = [&](std::optional<int64_t> v, const char* name) {
    if (!v.has_value() || (best.has_value() && *v >= *best)) return;
    best = v;
    if (source != nullptr) *source = name;
  };
  consider(CgroupHeadroom("", "memory.max", "memory.current", "inactive_file"),
           "the cgroup memory limit");
  consider(CgroupHeadroom("memory", "memory.limit_in_bytes",
                          "memory.usage_in_bytes", "total_inactive_file"),
           "the cgroup memory limit");
  struct rlimit as;
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    int64_t used = ReadKeyed("/proc/self/status", "VmSize").value_or(0);
    consider(std::max<int64_t>(0, static_cast<int64_t>(as.rlim_cur) - used),
             "the address-space limit, ulimit -v");
  }
  consider(ReadKeyed("/proc/meminfo", "MemAvailable"),
           "MemAvailable in /proc/meminfo");
  return best;
}

absl::Status CheckMemoryBudget(int64_t needed_bytes, absl::string_view what,
                               absl::string_view detail) {
  std::string source;
  std::optional<int64_t> available = AvailableMemoryBytes(&source);
  if (!available.has_value() || needed_bytes <= *available) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      what, " needs ", FormatBytes(needed_bytes),
      detail.empty() ? "" : absl::StrCat(" (", detail, ")"), ", but only ",
      FormatBytes(*available), " are available (", source, ")"));
}

std::string FormatBytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30)) {
    return absl::StrFormat("%.1f GiB", bytes / double(int64_t{1} << 30));
  }
  if (bytes >= (int64_t{1} << 20)) {
    return absl::StrFormat("%.1f MiB", bytes / double(int64_t{1} << 20));
  }
  return absl::StrCat(bytes, " bytes");
}

}  // namespace hgc
