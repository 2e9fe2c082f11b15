// The reference interpreter: the correctness oracle of the compiler (the
// driver's `--check`, `--bench`, the tests and the fuzzers compare compiled
// outputs against it), run on the graph as written. It evaluates every op
// with the portable kernels (runtime/portable/evaluate.h, which states the
// numerics every other component is checked against); these are its names
// for them. The same kernels run codegen's fallback steps and
// fold-constants, so a compiled step that fell back to them agrees with the
// oracle by construction (`--check` says how many did). Error bounds and
// the comparison are reference/error_bound.h and reference/check.h.
//
// Every result (and every scratch buffer) is held to
// InterpretOptions::max_tensor_bytes: a graph with huge shapes gives
// ResourceExhausted, never an out-of-memory abort. Bad inputs (wrong count or
// types, an unverified graph with a bad op) give InvalidArgument; nothing
// reachable from input aborts.
#ifndef HGC_REFERENCE_REFERENCE_INTERPRETER_H_
#define HGC_REFERENCE_REFERENCE_INTERPRETER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace hgc {

struct InterpretOptions {
  // The largest tensor (or scratch buffer) one op may allocate.
  int64_t max_tensor_bytes = Tensor::kDefaultMaxBytes;
};

// Executes `graph` on `inputs` (one per parameter, in order; each must have
// exactly its parameter's type, else InvalidArgument naming the parameter)
// and returns one Tensor per graph result: portable::EvaluateGraph.
absl::StatusOr<std::vector<Tensor>> Interpret(
    const Graph& graph, absl::Span<const Tensor> inputs,
    const InterpretOptions& options = {});

// Evaluates one op of a graph on `operands`; a `fusion` op interprets its
// body graph: portable::EvaluateOp.
absl::StatusOr<Tensor> EvaluateOp(const Op& op,
                                  absl::Span<const Tensor> operands,
                                  const InterpretOptions& options = {});

// Evaluates `kind(operands) {attrs}` without a graph: portable::EvaluateOp.
absl::StatusOr<Tensor> EvaluateOp(
    absl::string_view kind, absl::Span<const Tensor> operands,
    const AttrMap& attrs = {},
    const std::optional<TensorType>& result_type = std::nullopt,
    const InterpretOptions& options = {});

// Whether the interpreter can evaluate `kind` (fusion: through its body).
bool HasReferenceKernel(absl::string_view kind);

}  // namespace hgc

#endif  // HGC_REFERENCE_REFERENCE_INTERPRETER_H_
