// Named pipelines and pipeline strings.
//
//   O0  verify only: the graph runs as written.
//   O2  the full graph pipeline (passes/pipelines.cc says why each pass is
//       where it is).
//
// A pipeline string (passes/pipeline_parser.h) may mix pass arguments and
// pipeline names: "O2", "canonicalize,cse", "O0,fusion{max-ops=4}".
#ifndef HGC_PASSES_PIPELINES_H_
#define HGC_PASSES_PIPELINES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "passes/pass_manager.h"
#include "passes/pass_registry.h"

namespace hgc {

// Appends the named pipelines' passes to `pm`.
void AddO0Pipeline(PassManager& pm);
void AddO2Pipeline(PassManager& pm);

// The names of the named pipelines, in order ("O0", "O2").
std::vector<std::string> NamedPipelines();
bool IsNamedPipeline(absl::string_view name);
// The passes of a named pipeline as a pipeline string.
std::string DescribeNamedPipeline(absl::string_view name);

// Parses `text` and appends its passes to `pm`: named pipelines expand in
// place, other names are created from `registry` and given their options.
// InvalidArgument for syntax errors, unknown passes, options on a named
// pipeline, and unknown or bad options.
absl::Status AddPipeline(absl::string_view text, const PassRegistry& registry,
                         PassManager& pm);

// Runs pipeline `text` (as AddPipeline parses it) on `module` in a pass
// manager with `options`: how the driver, the C++ API and --bench run the
// graph passes before codegen lowers the result.
absl::Status RunPipeline(absl::string_view text, const PassRegistry& registry,
                         Module& module, PassManagerOptions options = {});

}  // namespace hgc

#endif  // HGC_PASSES_PIPELINES_H_
