// The pass manager: runs a list of passes over a module and does the
// cross-cutting work so that passes don't:
//   - verifies the module after every pass (on by default); a failure after
//     pass P is Internal("after P: <verifier message>"), a compiler bug;
//   - prints the IR after every pass or after the named ones, to the dump
//     stream, under an MLIR-style header
//       // -----// IR Dump After FoldConstants (fold-constants) //----- //
//     followed by the module as `.graph` text, which parses back;
//   - times every pass (and the verifier) and prints a report at the end;
//   - stops after the first run of a named pass (--stop-after, for bisecting
//     a pipeline).
#ifndef HGC_PASSES_PASS_MANAGER_H_
#define HGC_PASSES_PASS_MANAGER_H_

#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace hgc {

struct PassManagerOptions {
  // Run the verifier after each pass.
  bool verify_each = true;
  // Print the IR after every pass / after the passes with these arguments.
  bool print_ir_after_all = false;
  std::set<std::string> print_ir_after;
  // Print the timing report when Run ends (successfully or at stop_after).
  bool time_passes = false;
  // Stop after the first pass with this argument ("" = run all).
  std::string stop_after;
  // Where IR dumps and the timing report go (not owned; stderr in the
  // driver). nullptr discards them.
  std::ostream* dump_stream = nullptr;
};

// What one pass did in the last Run.
struct PassRecord {
  std::string name;      // CamelCase
  std::string argument;  // kebab-case
  bool changed = false;
  double seconds = 0;  // wall time of Run (not the verifier)
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {})
      : options_(std::move(options)) {}

  // Appends a pass to the pipeline.
  void AddPass(std::unique_ptr<Pass> pass) {
    passes_.push_back(std::move(pass));
  }
  // Constructs and appends a P; returns it for setting options.
  template <typename P, typename... Args>
  P* AddPass(Args&&... args) {
    auto pass = std::make_unique<P>(std::forward<Args>(args)...);
    P* raw = pass.get();
    passes_.push_back(std::move(pass));
    return raw;
  }

  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }
  const PassManagerOptions& options() const { return options_; }
  PassManagerOptions& mutable_options() { return options_; }

  // The pipeline as a string of arguments: "canonicalize,cse,dce".
  std::string PipelineString() const;

  // InvalidArgument when stop_after or print_ir_after name a pass that is
  // not in the pipeline (Run checks this first too).
  absl::Status ValidateOptions() const;

  // Runs the passes in order. Returns the first pass error (with its code,
  // its message prefixed by the pass argument) or the Internal error of a
  // failed verification. InvalidArgument, before any pass runs, when
  // stop_after or print_ir_after name a pass that is not in the pipeline.
  absl::Status Run(Module& module);

  // One record per pass that ran in the last Run, in order.
  const std::vector<PassRecord>& records() const { return records_; }
  // Seconds the verifier took in the last Run.
  double verifier_seconds() const { return verifier_seconds_; }

 private:
  void Dump(const Pass& pass, const Module& module) const;
  void PrintTiming(double total_seconds) const;

  PassManagerOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<PassRecord> records_;
  double verifier_seconds_ = 0;
};

// The header line printed before the IR after `pass`, without a newline:
// "// -----// IR Dump After FoldConstants (fold-constants) //----- //".
std::string IrDumpHeader(const Pass& pass);

}  // namespace hgc

#endif  // HGC_PASSES_PASS_MANAGER_H_
