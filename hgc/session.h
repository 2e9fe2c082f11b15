// A compile session: the one path from a Module (parsed or built) to an
// Executable that the C++ API (hgc/hgc.h), the `hgc` driver and the
// benchmarks (bench/compare.h) share. A session builds and checks the pass
// pipeline, takes the module, runs the passes over it, plans the entry
// graph's memory and compiles the entry graph; between the stages the
// caller can look at the module as it stands (the driver's --emit=ir and
// --stats), and the pass manager's printing options (print-after-pass,
// --time-passes) write to the stream the caller gives.
//
//   HGC_ASSIGN_OR_RETURN(CompileSession session,
//                        CompileSession::Create(options));  // bad pipeline?
//   HGC_RETURN_IF_ERROR(session.Load(std::move(module), "mlp"));
//   HGC_RETURN_IF_ERROR(session.RunPasses());
//   ... session.module(), session.entry(), session.PlanMemory() ...
//   HGC_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, session.Compile());
//
// CompileEntry does all of it on a copy of a module the caller keeps.
#ifndef HGC_HGC_SESSION_H_
#define HGC_HGC_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "analysis/buffer_planning.h"
#include "analysis/memory_budget.h"
#include "codegen/compile.h"
#include "ir/graph.h"
#include "passes/pass_manager.h"
#include "runtime/executable.h"

namespace hgc {

struct SessionOptions {
  // The graph pipeline (passes/pipelines.h): "O2", "O0", or a pass list
  // such as "canonicalize,fusion,dce"; empty runs no passes.
  std::string pipeline = "O2";
  // How the passes are verified, printed (after all or the named ones),
  // timed and stopped, and the stream the dumps and timings go to
  // (nullptr discards them).
  PassManagerOptions pass_options;
  // How Compile() compiles the entry graph: threads, threading, and the
  // texts and statistics it fills in (--emit=llvm/asm/loops, --stats).
  CompileOptions compile_options;
};

// The entry graph's memory after the passes (the driver's --stats): its
// arena plan and what one execution holds at its peak.
struct MemoryPlan {
  BufferPlan buffers;
  MemoryEstimate estimate;
};

class CompileSession {
 public:
  // Builds the pass manager for options.pipeline and checks it before any
  // module is read: InvalidArgument for a syntax error, an unknown pass or
  // option, or print_ir_after / stop_after naming a pass not in it.
  static absl::StatusOr<CompileSession> Create(SessionOptions options);

  CompileSession(CompileSession&&) = default;
  CompileSession& operator=(CompileSession&&) = default;

  // Takes `module` as the session's own (the passes rewrite it) with
  // entry graph `entry_name` (SelectEntryGraph: empty for the first).
  absl::Status Load(Module module, absl::string_view entry_name);

  const SessionOptions& options() const { return options_; }
  // Whether the pipeline has passes (none for an empty pipeline).
  bool has_passes() const { return !pass_manager_.passes().empty(); }

  // Runs the pipeline over the module (nothing without passes), then finds
  // the entry graph again by name: Internal when the passes removed it.
  // Pass errors keep their codes and source locations.
  absl::Status RunPasses();

  // The module and its entry graph as they stand: as loaded before
  // RunPasses, as the passes left them after. Require Load.
  const Module& module() const { return module_; }
  const Graph& entry() const { return *entry_; }
  // What each pass did in the last RunPasses.
  const std::vector<PassRecord>& pass_records() const {
    return pass_manager_.records();
  }

  // The entry graph's arena plan and memory estimate.
  MemoryPlan PlanMemory() const;
  // ResourceExhausted when one execution of the entry graph, with
  // `extra_bytes` beside it (named `extra_what` in the message), does not
  // fit in what the process may use (analysis/memory_budget.h).
  absl::Status CheckMemoryBudget(int64_t extra_bytes = 0,
                                 absl::string_view extra_what = "other") const;

  // Compiles the entry graph with the session's compile options, or with
  // `options` (codegen/compile.h; Unimplemented for a graph the compiler
  // does not handle).
  absl::StatusOr<std::unique_ptr<Executable>> Compile() const;
  absl::StatusOr<std::unique_ptr<Executable>> Compile(
      const CompileOptions& options) const;

 private:
  explicit CompileSession(SessionOptions options);

  SessionOptions options_;
  PassManager pass_manager_;
  Module module_;
  std::string entry_name_;
  const Graph* entry_ = nullptr;
};

// The graph named `name` (a leading '@' ignored) of `module`, or its first
// graph when `name` is empty. InvalidArgument for a module without graphs
// or without that graph, listing the module's graphs ("no graph named @g in
// SOURCE (it has: @a, @b)" when `source` names where the module came from,
// "no graph named @g (the module has: @a, @b)" otherwise).
absl::StatusOr<const Graph*> SelectEntryGraph(const Module& module,
                                              absl::string_view name,
                                              absl::string_view source = "");

// A session over a copy of `module` (which the caller keeps unchanged):
// the pipeline, then the compile of `entry_name` with
// options.compile_options.
absl::StatusOr<std::unique_ptr<Executable>> CompileEntry(
    const Module& module, absl::string_view entry_name,
    const SessionOptions& options);

}  // namespace hgc

#endif  // HGC_HGC_SESSION_H_
