// The memory one execution of a graph needs, checked against what the
// process may use before anything is allocated, so that a graph too large
// for the machine is refused with a message instead of being killed by the
// kernel half a minute later.
#ifndef HGC_ANALYSIS_MEMORY_BUDGET_H_
#define HGC_ANALYSIS_MEMORY_BUDGET_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"

namespace hgc {

struct MemoryEstimate {
  int64_t arena_bytes = 0;  // intermediates (analysis/buffer_planning.h)
  // Literal constants (those in fusion bodies written as lists too) and
  // const-only values.
  int64_t constant_bytes = 0;
  int64_t param_bytes = 0;   // every parameter, const ones included
  int64_t result_bytes = 0;  // every returned value
  // The sum, saturated at INT64_MAX (never overflows).
  int64_t total() const;
};

// The bytes an execution of `graph` holds at its peak: its arena, its
// constant cache, its parameters and its results. (Per-thread scratch and
// the generated code are small next to these and not counted.)
MemoryEstimate EstimateMemory(const Graph& graph);

// ResourceExhausted, located at the graph's declaration, when `bytes` does
// not fit in what the process may use (support/system_limits.h):
// "@g needs 12.0 GiB (arena ..., constants ..., inputs ..., outputs ...),
// but only 3.1 GiB are available (MemAvailable in /proc/meminfo)".
// `extra_bytes` is added for work beside the execution, listed in the
// message as `extra_what` (e.g. "reference check" for --check's reference
// interpreter).
absl::Status CheckMemoryBudget(const Graph& graph, int64_t extra_bytes = 0,
                               absl::string_view extra_what = "other");

}  // namespace hgc

#endif  // HGC_ANALYSIS_MEMORY_BUDGET_H_
