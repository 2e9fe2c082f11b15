// What the machine and the process's limits allow: threads and memory.
// Used to refuse, with a message, work that would otherwise abort (thread
// creation failing) or be killed (out of memory) part-way.
#ifndef HGC_SUPPORT_SYSTEM_LIMITS_H_
#define HGC_SUPPORT_SYSTEM_LIMITS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hgc {

// No pool is ever larger than this, whatever the machine.
inline constexpr int kMaxThreadsEver = 1024;

// The most threads one compiled graph may use here: 8 per CPU the process
// may run on (oversubscription is allowed, a runaway count is not), at most
// kMaxThreadsEver, and fewer when the cgroup's pids.max leaves less room.
int MaxThreads();

// OK when `num_threads` is in [1, MaxThreads()]; otherwise
// InvalidArgument "WHAT must be in [1, N] on this machine, got K (...)".
absl::Status CheckNumThreads(int64_t num_threads, absl::string_view what);

// Bytes the process may still allocate before it is refused or killed: the
// least of the cgroup (v2 memory.max, v1 memory.limit_in_bytes) headroom,
// RLIMIT_AS less the address space in use, and MemAvailable. nullopt when
// none of them can be read. `source` (optional) names the limit that
// decided it, e.g. "the cgroup memory limit".
std::optional<int64_t> AvailableMemoryBytes(std::string* source = nullptr);

// OK when `needed_bytes` fits in AvailableMemoryBytes() (or nothing is
// known); otherwise ResourceExhausted "WHAT needs N MiB (DETAIL), but only
// M MiB are available (SOURCE)".
absl::Status CheckMemoryBudget(int64_t needed_bytes, absl::string_view what,
                               absl::string_view detail = "");

// "1.5 GiB", "12 MiB", "800 bytes".
std::string FormatBytes(int64_t bytes);

}  // namespace hgc

#endif  // HGC_SUPPORT_SYSTEM_LIMITS_H_
