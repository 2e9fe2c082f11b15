// Judging computed outputs against the reference interpreter: the one
// model shared by `hgc --run --check`, `hgc --bench` and the API tests.
//
// Output i of `outputs` matches the reference's value e when, element by
// element (tensor_util/tensor_compare.h),
//   |actual - e| <= atol + rtol * |e| + E
// with (atol, rtol) the output dtype's defaults (DefaultTolerance) or the
// caller's, and E the reference's error bound of that element
// (reference/error_bound.h: what summation order and one rounding per op,
// propagated through the graph, allow a correct implementation). NaN
// matches NaN and infinities match only themselves, except where E is
// infinite (a correct result may be anything there). E applies to every
// output but bool: an integer computed from floats may be off by the steps
// E counts, one computed from integers alone has E = 0; s8 and u8 also
// keep their default atol of one step.
#ifndef HGC_REFERENCE_CHECK_H_
#define HGC_REFERENCE_CHECK_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "reference/error_bound.h"
#include "reference/reference_interpreter.h"
#include "tensor_util/tensor_compare.h"

namespace hgc {

// Runs the reference interpreter (with error bounds) on `graph` and
// `inputs`, and compares each of `outputs` with its result. `tolerances`
// holds one Tolerance per output, or is empty for each output dtype's
// default. InvalidArgument when the outputs do not fit the graph's results;
// the interpreter's errors as they are.
absl::StatusOr<std::vector<CompareResult>> CompareWithReference(
    const Graph& graph, absl::Span<const Tensor> inputs,
    absl::Span<const Tensor> outputs,
    absl::Span<const Tolerance> tolerances = {},
    const InterpretOptions& options = {});

// The same against reference results already computed (one reference run
// judging several executions).
absl::StatusOr<std::vector<CompareResult>> CompareWithReference(
    const BoundedResults& expected, absl::Span<const Tensor> outputs,
    absl::Span<const Tolerance> tolerances = {});

}  // namespace hgc

#endif  // HGC_REFERENCE_CHECK_H_
