// The pass interface (an XLA/MLIR blend, see the project's style guide).
//
// A pass rewrites a Module in place and says whether it changed anything.
// It has two names: name() in CamelCase for humans (IR dump headers, timing
// reports) and argument() in kebab-case for pipelines and flags
// (`--pipeline=canonicalize,fusion{max-ops=8}`). Options arrive as text from
// the `{key=value}` part of a pipeline and are parsed by SetOption into the
// pass's own options struct. Cross-cutting work (verification, IR dumps,
// timing, --stop-after) belongs to the PassManager, never to a pass.
#ifndef HGC_PASSES_PASS_H_
#define HGC_PASSES_PASS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"

namespace hgc {

// One option a pass accepts, for --list-passes and error messages.
struct PassOptionInfo {
  std::string name;         // kebab-case key, e.g. "max-elements"
  std::string type;         // "bool", "int"
  std::string value;        // the current value, as text
  std::string description;  // one line
};

class Pass {
 public:
  virtual ~Pass() = default;

  // CamelCase name, e.g. "FoldConstants".
  virtual absl::string_view name() const = 0;
  // kebab-case pipeline argument, e.g. "fold-constants". Unique among the
  // registered passes.
  virtual absl::string_view argument() const = 0;
  // One line saying what the pass does, for --list-passes.
  virtual absl::string_view description() const = 0;

  // The options this pass takes, with their current values.
  virtual std::vector<PassOptionInfo> options() const { return {}; }
  // Sets option `key` from `value` (text from a pipeline string).
  // InvalidArgument for an unknown key or an unparsable value. The default
  // accepts no options.
  virtual absl::Status SetOption(absl::string_view key,
                                 absl::string_view value);

  // Runs the pass over `module`. Returns whether the module changed; an
  // error means the pass could not do its job (the module may be partly
  // rewritten but must still verify). The PassManager verifies after it.
  virtual absl::StatusOr<bool> Run(Module& module) = 0;
};

// Helpers for SetOption implementations. Each returns InvalidArgument naming
// the pass and the key when `value` does not parse.
absl::Status UnknownPassOption(const Pass& pass, absl::string_view key);
// "true"/"false"/"1"/"0".
absl::StatusOr<bool> ParseBoolOption(const Pass& pass, absl::string_view key,
                                     absl::string_view value);
// A decimal integer in [min, max].
absl::StatusOr<int64_t> ParseIntOption(const Pass& pass, absl::string_view key,
                                       absl::string_view value, int64_t min,
                                       int64_t max);

}  // namespace hgc

#endif  // HGC_PASSES_PASS_H_
