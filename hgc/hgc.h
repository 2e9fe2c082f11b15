// hgc's public C++ API: compile a graph once, execute it many times.
//
//   #include "hgc/hgc.h"
//
//   hgc::Options options;
//   options.num_threads = 4;
//   absl::StatusOr<std::unique_ptr<hgc::CompiledGraph>> compiled =
//       hgc::CompileFile("model.graph", options);
//   if (!compiled.ok()) { std::cerr << compiled.status().message(); ... }
//   (*compiled)->SetConstants(weights);            // once (one per param)
//   (*compiled)->Execute({x.raw()}, {y.mutable_raw()});  // many times
//
// Contract (this header is the stable facade; everything it includes from
// ir/ is the IR the facade accepts and the tensor/type vocabulary):
//
// * Input: `.graph` text (CompileText), a file (CompileFile), or a Module
//   built in C++ with hgc::Builder (Compile). The entry graph is
//   Options::graph, or the module's first graph when empty.
// * Errors are absl::Status. For text and file input every error located in
//   the source (syntax, types, unknown ops, ...) is InvalidArgument whose
//   message is already formatted: "FILE:LINE:COL: error: MESSAGE", the
//   source line and a caret (support/diagnostics.h), ready to print. Errors
//   for modules built in C++ carry the plain message.
// * The compiled graph does not refer to the input text or Module after
//   compilation returns: the caller may destroy them.
// * Buffers are caller-owned, dense row-major, of exactly the types in
//   param_types() / result_types() (bf16/f16 as 16-bit patterns, bool as one
//   byte 0/1). Execute never keeps a pointer after it returns.
// * Const parameters (`const` in the text, is_const in the builder) are bound
//   once with SetConstants; the compiler may prepack them then. Execute
//   ignores the entries of const parameters in `inputs` (they may be null).
// * Repeat compiles: a process keeps the compiled graphs it made
//   (hgc/compile_cache.h, docs/cache.md): compiling the same module again,
//   value names aside, with the same options returns a new CompiledGraph
//   that shares the generated code but has constants, scratch and threads
//   of its own; compiles of one graph running at once compile it once.
//   HGC_COMPILE_CACHE=0 turns this off; HGC_CACHE_DIR=DIR keeps the object
//   code on disk for other processes too.
// * Thread safety: after SetConstants, any number of threads may call
//   Execute on one CompiledGraph at once (each call gets its own scratch
//   arena; they share one persistent pool of Options::num_threads workers,
//   or each runs its own OpenMP team with Threading::kOpenMP).
//   SetConstants must not run concurrently with Execute.
#ifndef HGC_HGC_HGC_H_
#define HGC_HGC_HGC_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/builder.h"  // IWYU pragma: export (hgc::Builder)
#include "ir/graph.h"    // IWYU pragma: export (hgc::Module, hgc::Graph)
#include "ir/tensor.h"   // IWYU pragma: export (hgc::Tensor, TensorType)
#include "runtime/threading.h"  // IWYU pragma: export (hgc::Threading)

namespace hgc {

class Executable;

// How to compile.
struct Options {
  // Worker threads each Execute runs on: 1 to MaxThreads()
  // (support/system_limits.h: 8 per CPU, at most 1024, fewer under a
  // cgroup pids limit); InvalidArgument otherwise.
  int num_threads = 1;
  // Whose threads: hgc's own persistent pool (kOwnPool, the default), or
  // the caller's OpenMP runtime (kOpenMP: each parallel step is an
  // `omp parallel num_threads(num_threads)` region, so hgc shares the
  // threads and the OMP_PROC_BIND binding of a framework that uses OpenMP;
  // a call from inside a parallel region runs on the team OpenMP gives).
  Threading threading = Threading::kOwnPool;
  // Threads that optimize and generate the code while compiling, each
  // taking a share of the steps: 0 (the default) for one per hardware
  // thread, at most 8; otherwise 1 to 64 (InvalidArgument beyond). The
  // results are the same, bit for bit, whatever the count.
  int compile_threads = 0;
  // The graph pass pipeline (passes/pipelines.h): "O2" (default, the full
  // pipeline), "O0", or a pass list such as "canonicalize,fusion,dce".
  std::string pipeline = "O2";
  // The entry graph's name, without '@'; empty means the module's first.
  std::string graph;
};

// A compiled entry graph: owns its generated code, its constant cache and
// its thread pool. Create it with CompileText / CompileFile / Compile.
class CompiledGraph {
 public:
  ~CompiledGraph();
  CompiledGraph(const CompiledGraph&) = delete;
  CompiledGraph& operator=(const CompiledGraph&) = delete;

  // The entry graph's name (without '@').
  const std::string& name() const { return name_; }
  // Parameter names (without '%'), types and const-ness, in order.
  const std::vector<std::string>& param_names() const { return param_names_; }
  const std::vector<TensorType>& param_types() const { return param_types_; }
  const std::vector<bool>& param_is_const() const { return param_is_const_; }
  // Result types, in order.
  const std::vector<TensorType>& result_types() const { return result_types_; }
  int num_params() const { return static_cast<int>(param_types_.size()); }
  int num_results() const { return static_cast<int>(result_types_.size()); }
  int num_threads() const;
  // Whether the graph has const parameters (SetConstants is then required).
  bool has_constants() const;

  // Binds the const parameters. `params` has one entry per parameter; the
  // entries of non-const parameters are ignored (may be empty tensors /
  // null pointers). Each const entry must have exactly its parameter's type
  // (InvalidArgument naming the parameter otherwise). The data are copied:
  // the caller may free or reuse the buffers afterwards. May be called again
  // to rebind (not concurrently with Execute).
  absl::Status SetConstants(absl::Span<const Tensor> params);
  absl::Status SetConstants(absl::Span<const void* const> params);

  // Runs the graph: `inputs` has one pointer per parameter (const entries
  // ignored, may be null), `outputs` one per result, each pointing at a
  // buffer of result_types()[i]'s size. InvalidArgument for wrong counts or
  // a null non-const input or output; FailedPrecondition when constants are
  // required and not bound. Safe to call from several threads at once. A
  // call allocates a scratch arena only when none is free (the first call,
  // or more concurrent calls than before), and fallback steps (run by the
  // reference interpreter, counted by --stats) allocate their tensors on
  // every call; a graph without them runs allocation-free after that.
  absl::Status Execute(absl::Span<const void* const> inputs,
                       absl::Span<void* const> outputs) const;

  // Convenience (allocates the outputs): `inputs` one tensor per parameter
  // (const entries may be empty), each non-const of exactly its type.
  absl::StatusOr<std::vector<Tensor>> Execute(
      absl::Span<const Tensor> inputs) const;

 private:
  friend absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(
      const Module& module, const Options& options);
  CompiledGraph() = default;

  std::string name_;
  std::vector<std::string> param_names_;
  std::vector<TensorType> param_types_;
  std::vector<bool> param_is_const_;
  std::vector<TensorType> result_types_;
  std::unique_ptr<Executable> executable_;
};

// Compiles the entry graph of `module` (built with hgc::Builder or parsed).
// The module is verified first; errors keep their messages (and source
// locations as status payloads, support/diagnostics.h).
absl::StatusOr<std::unique_ptr<CompiledGraph>> Compile(const Module& module,
                                                       const Options& options);

// Parses `text` (named `filename` in diagnostics) and compiles its entry
// graph. Errors are formatted "FILE:LINE:COL: error: ..." with the line and
// a caret.
absl::StatusOr<std::unique_ptr<CompiledGraph>> CompileText(
    absl::string_view text, const Options& options,
    absl::string_view filename = "<input>");

// Reads and compiles the `.graph` file at `path` (diagnostics as
// CompileText's; an unreadable file is NotFound / InvalidArgument naming it).
absl::StatusOr<std::unique_ptr<CompiledGraph>> CompileFile(
    const std::string& path, const Options& options);

}  // namespace hgc

#endif  // HGC_HGC_HGC_H_
