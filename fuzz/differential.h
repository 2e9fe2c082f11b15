// Differential testing of the compiler against the reference interpreter on
// random graphs (fuzz/graph_generator.h).
//
// For each seed: generate a graph, print it as `.graph` text and parse it
// back (the printer/parser round trip is part of the test), make inputs
// (the driver's seeded random inputs, `hgc --run --seed SEED`, or special
// values), interpret the graph as parsed, then compile the text through the
// C++ API (hgc/hgc.h, pipeline O2) at each thread count, execute it twice,
// and compare every output with the interpreter's as the driver's `--check`
// does (reference/check.h: the tolerance plus the reference's error bound
// for what was summed and rounded). The two executions must
// agree bit for bit. A graph the compiler refuses as Unimplemented is
// counted, not failed.
//
// A failure writes `<out_dir>/fuzz_<seed>.graph` (with a comment giving the
// seed, the reason and the command that reproduces it) and, in the
// special-values mode, its inputs as `fuzz_<seed>_<param>.npy`.
#ifndef HGC_FUZZ_DIFFERENTIAL_H_
#define HGC_FUZZ_DIFFERENTIAL_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "fuzz/graph_generator.h"
#include "hgc/hgc.h"
#include "ir/tensor.h"
#include "reference/error_bound.h"

namespace hgc {

struct FuzzOptions {
  uint64_t first_seed = 1;
  int64_t count = 100;
  // Every n-th graph (seed % n == 0) runs in the special-values mode; 0
  // never, 1 always.
  int special_every = 4;
  std::vector<int> thread_counts = {1, 2};
  // Special-values graphs may have dimensions of size 0.
  bool empty_tensors = true;
  // Restricts the graphs to one kind.
  bool fixed_kind = false;
  GraphKind kind = GraphKind::kMixed;
  // Where failing graphs go; empty: not written.
  std::string out_dir;
  // Stop after this many failures (0: never).
  int64_t max_failures = 0;
  // Run each graph in a child process, so that a crash is reported as that
  // graph's failure and the run goes on; otherwise a crash ends the run
  // after writing the graph.
  bool fork = true;
  // Print every graph's seed and kind before running it.
  bool verbose = false;
};

struct FuzzStats {
  int64_t graphs = 0;
  int64_t special = 0;
  int64_t failures = 0;
  int64_t unimplemented = 0;
  int64_t outputs_compared = 0;
  std::vector<uint64_t> failing_seeds;
  // Graphs per kind, indexed by GraphKind.
  std::vector<int64_t> per_kind = std::vector<int64_t>(std::size(kAllGraphKinds));
};

// Binds `inputs` as constants, runs `compiled` twice and judges it as
// `hgc --run --check` does: the two runs must agree bit for bit, and the
// first with `reference` (the interpreter's values and error bounds for
// the same inputs) within --check's tolerances. Returns the empty string on
// success, else what failed; counts the non-empty outputs compared.
std::string CheckExecutions(CompiledGraph& compiled,
                            absl::Span<const Tensor> inputs,
                            const BoundedResults& reference,
                            int64_t* outputs_compared = nullptr);

// Runs options.count seeds from options.first_seed. Progress and failures
// go to `log`.
FuzzStats RunFuzz(const FuzzOptions& options, std::ostream& log);

// Runs one seed; returns the empty string on success, else what failed.
// `text` receives the graph's `.graph` text.
std::string RunOneSeed(uint64_t seed, const FuzzOptions& options,
                       std::string* text, bool* unimplemented,
                       GraphKind* kind, int64_t* outputs_compared);

// The `.graph` text of the graph RunOneSeed runs for `seed`.
std::string GraphText(uint64_t seed, const FuzzOptions& options);

}  // namespace hgc

#endif  // HGC_FUZZ_DIFFERENTIAL_H_
