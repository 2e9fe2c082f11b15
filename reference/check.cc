#include "reference/check.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "reference/error_bound.h"
#include "support/status_macros.h"

namespace hgc {

absl::StatusOr<std::vector<CompareResult>> CompareWithReference(
    const BoundedResults& expected, absl::Span<const Tensor> outputs,
    absl::Span<const Tolerance> tolerances) {
  if (!tolerances.empty() && tolerances.size() != outputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        tolerances.size(), " tolerances for ", outputs.size(), " outputs"));
  }
  if (expected.values.size() != outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the graph has ", expected.values.size(), " results, but ",
                     outputs.size(), " outputs were given"));
  }
  std::vector<CompareResult> results;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tolerance tolerance = tolerances.empty()
                                    ? DefaultTolerance(outputs[i].dtype())
                                    : tolerances[i];
    HGC_ASSIGN_OR_RETURN(CompareResult r,
                         CompareTensors(outputs[i], expected.values[i],
                                        tolerance, &expected.bounds[i]));
    results.push_back(std::move(r));
  }
  return results;
}

absl::StatusOr<std::vector<CompareResult>> CompareWithReference(
    const Graph& graph, absl::Span<const Tensor> inputs,
    absl::Span<const Tensor> outputs, absl::Span<const Tolerance> tolerances,
    const InterpretOptions& options) {
  HGC_ASSIGN_OR_RETURN(BoundedResults expected,
                       InterpretWithErrorBounds(graph, inputs, options));
  if (expected.values.size() != outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph @", graph.name(), " has ", expected.values.size(),
                     " results, but ", outputs.size(), " outputs were given"));
  }
  return CompareWithReference(expected, outputs, tolerances);
}

}  // namespace hgc
