// libFuzzer target for the whole compiler on `.graph` text, where the
// parser fuzzer (frontend/parser_fuzzer.cc) stops at the printer. Mutating
// the golden graphs reaches shapes, attributes and op mixes no recipe of the
// differential fuzzer writes. For every input:
//   - text that does not parse, or that the compiler refuses, must give a
//     formatted "FILE:LINE:COL: error:" InvalidArgument or an Unimplemented;
//   - a small graph that compiles must run at 1 and 2 threads on the
//     driver's seeded random inputs, give the same bits when run twice,
//     and agree with the reference interpreter as `hgc --run --check`
//     judges.
// Anything else traps, which libFuzzer reports as a crash.
//
//   bazel build --config=fuzz //fuzz:compile_fuzzer
//   bazel-bin/fuzz/compile_fuzzer -dict=frontend/graph.dict CORPUS
//       testdata/ops testdata/attention ...   (one line)
//
// Without --config=fuzz the same target builds with a small main() that
// runs the entry point over the files named on the command line.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "frontend/parser.h"
#include "fuzz/differential.h"
#include "hgc/hgc.h"
#include "ir/graph.h"
#include "reference/error_bound.h"
#include "support/source_location.h"
#include "tensor_util/random_inputs.h"

namespace hgc {
namespace {

// Graphs whose values hold more elements than this in all are compiled
// but not run, so that each input takes milliseconds, not seconds.
constexpr int64_t kMaxElementsToRun = int64_t{1} << 16;

[[noreturn]] void Fail(absl::string_view what, absl::string_view detail,
                       absl::string_view text) {
  std::fprintf(stderr, "compile_fuzzer: %.*s\n%.*s\n----- graph -----\n%.*s\n",
               static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data(),
               static_cast<int>(text.size()), text.data());
  __builtin_trap();
}

// An error the compiler may give for input: Unimplemented, or a located
// InvalidArgument already formatted as a diagnostic.
bool IsInputError(const absl::Status& status) {
  if (absl::IsUnimplemented(status)) return true;
  return absl::IsInvalidArgument(status) &&
         absl::StrContains(status.message(), ": error: ");
}

int64_t TotalElements(const Graph& graph) {
  int64_t total = 0;
  for (const auto& param : graph.params()) {
    total += param->type().NumElements();
  }
  for (const auto& op : graph.ops()) {
    for (int i = 0; i < op->num_results(); ++i) {
      total += op->result(i)->type().NumElements();
      if (total > kMaxElementsToRun) return total;
    }
  }
  return total;
}

// Compiles `text` at `threads`; when `reference` is given, runs it and
// judges it as the differential fuzzer does (CheckExecutions).
void CompileAndCheck(absl::string_view text, int threads,
                     absl::Span<const Tensor> inputs,
                     const BoundedResults* reference) {
  Options options;
  options.num_threads = threads;
  options.compile_threads = 1;
  absl::StatusOr<std::unique_ptr<CompiledGraph>> compiled =
      CompileText(text, options, "fuzz.graph");
  if (!compiled.ok()) {
    if (IsInputError(compiled.status())) return;
    Fail("compile error that is not an input error",
         compiled.status().ToString(), text);
  }
  if (reference == nullptr) return;
  std::string failed = CheckExecutions(**compiled, inputs, *reference);
  if (!failed.empty()) {
    Fail(absl::StrCat("threads ", threads, ": run"), failed, text);
  }
}

}  // namespace
}  // namespace hgc

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hgc;  // NOLINT: a C entry point
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  SourceManager sm;
  absl::StatusOr<Module> module = ParseModule(text, "fuzz.graph", sm);
  if (!module.ok() || module->graphs().empty()) return 0;
  const Graph& graph = *module->graphs().front();
  // The module parsed, so it verified: every graph compiles or is refused
  // with a diagnostic. Only small ones also run (the entry graph is the
  // first, as CompileText picks it).
  std::vector<Tensor> inputs;
  absl::StatusOr<BoundedResults> reference =
      absl::FailedPreconditionError("not run");
  if (TotalElements(graph) <= kMaxElementsToRun) {
    absl::StatusOr<std::vector<Tensor>> random = RandomInputs(graph, 1);
    if (random.ok()) {
      inputs = *std::move(random);
      reference = InterpretWithErrorBounds(graph, inputs);
    }
  }
  for (int threads : {1, 2}) {
    CompileAndCheck(text, threads, inputs,
                    reference.ok() ? &*reference : nullptr);
  }
  return 0;
}
