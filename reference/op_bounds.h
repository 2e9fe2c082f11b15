// The error-bound rules per op, for reference/error_bound.cc's graph walk
// (internal to //reference:reference_interpreter).
#ifndef HGC_REFERENCE_OP_BOUNDS_H_
#define HGC_REFERENCE_OP_BOUNDS_H_

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "reference/reference_interpreter.h"

namespace hgc {
namespace reference {

// E of one op's result `r` from its operands' values `xs` and bounds `es`
// (an empty tensor: exact). Fusion ops are the graph walk's business.
absl::StatusOr<Tensor> OpBound(const Op& op, absl::Span<const Tensor> xs,
                               absl::Span<const Tensor> es, const Tensor& r,
                               const InterpretOptions& options);

// `e` re-judged against `value` element by element (infinite or NaN
// values get no bound), or empty when every element is exact.
Tensor FinishBound(Tensor e, const Tensor& value);

}  // namespace reference
}  // namespace hgc

#endif  // HGC_REFERENCE_OP_BOUNDS_H_
