// Names of generated code for `perf`.
//
// perf names a sample in code that has no ELF image (JIT code) from
// perf-<pid>.map in the system's temporary directory (P_tmpdir), one line
// per function: "START SIZE NAME" in hex.
// With HGC_PERF_MAP=1 in the environment, hgc writes that file: every
// Xbyak microkernel under its descriptor string and every function the
// LLVM JIT loads under its symbol name. So
//   HGC_PERF_MAP=1 perf record -g hgc FILE.graph --bench
//   perf report
// attributes time to `brgemm:avx2:f32f32f32:M64N384K128:...` and to the
// step functions instead of to bare addresses.
#ifndef HGC_SUPPORT_PERF_MAP_H_
#define HGC_SUPPORT_PERF_MAP_H_

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace hgc {

class PerfMap {
 public:
  // The process's map, opened on first use, when HGC_PERF_MAP is set to
  // anything but "" or "0"; null otherwise, or when the file cannot be
  // opened (profiling is best effort and never fails a compile).
  static PerfMap* FromEnvironment();

  // Where perf looks for this process's map: P_tmpdir/perf-<pid>.map.
  static std::string ProcessMapPath();

  // A map appending to `path`. Internal when it cannot be opened.
  static absl::StatusOr<std::unique_ptr<PerfMap>> Open(const std::string& path);

  ~PerfMap();
  PerfMap(const PerfMap&) = delete;
  PerfMap& operator=(const PerfMap&) = delete;

  // Appends one line for `size` bytes of code at `start` and flushes it, so
  // that the map is complete even when the process is killed. Thread-safe.
  // Line breaks in `name` become spaces.
  void Record(const void* start, size_t size, absl::string_view name);

 private:
  explicit PerfMap(std::FILE* file) : file_(file) {}

  absl::Mutex mu_;
  std::FILE* file_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hgc

#endif  // HGC_SUPPORT_PERF_MAP_H_
