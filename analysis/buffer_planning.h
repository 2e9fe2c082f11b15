// buffer-planning (an analysis): places every intermediate of a graph in
// one arena, reusing memory by lifetime.
//
// Intermediates are the results of the graph's ops except literal constants
// and const-only ops (both live in the executable's constant cache) and the
// returned values (they go to the caller's output buffers). A value is live
// from its defining op through its last reader (op positions, inclusive; a
// value nobody reads lives at its definition only), so an op's operands and
// result never share memory. Sizes are rounded up to kBufferAlignment and
// every offset is a multiple of it.
//
// Placement is greedy best-fit by size (TFLite's "greedy by size"): largest
// buffer first; each goes into the smallest gap, among the buffers already
// placed whose lifetimes overlap its own, that holds it, else above them.
// O(n^2 log n) in the number of intermediates.
#ifndef HGC_ANALYSIS_BUFFER_PLANNING_H_
#define HGC_ANALYSIS_BUFFER_PLANNING_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "ir/graph.h"

namespace hgc {

inline constexpr int64_t kBufferAlignment = 64;

struct BufferPlan {
  // Bytes of the one arena holding every intermediate.
  int64_t arena_size = 0;
  // The sum of the intermediates' (aligned) sizes: the arena size without
  // reuse. arena_size <= sum_of_intermediates.
  int64_t sum_of_intermediates = 0;
  // Arena offset of each intermediate.
  absl::flat_hash_map<const Value*, int64_t> offsets;
  // Aligned size and live range [first, last] (op positions) of each.
  struct Buffer {
    int64_t size = 0;
    int64_t first = 0;
    int64_t last = 0;
  };
  absl::flat_hash_map<const Value*, Buffer> buffers;
};

// Plans the intermediates of `graph` (the entry graph of a compiled module;
// fusion bodies are codegen's tile-local business).
BufferPlan PlanBuffers(const Graph& graph);

// Checks `plan` against itself: aligned offsets, every buffer inside the
// arena, and no two buffers with overlapping lifetimes overlapping in
// memory. Internal error naming the two values otherwise.
absl::Status ValidateBufferPlan(const BufferPlan& plan);

}  // namespace hgc

#endif  // HGC_ANALYSIS_BUFFER_PLANNING_H_
