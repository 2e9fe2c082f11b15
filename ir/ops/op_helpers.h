// Small helpers shared by the op definitions in ir/ops/.
#ifndef HGC_IR_OPS_OP_HELPERS_H_
#define HGC_IR_OPS_OP_HELPERS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/op_registry.h"

namespace hgc {

inline absl::Status OpError(absl::string_view op, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("'", op, "': ", message));
}

inline std::vector<TensorType> One(TensorType t) { return {std::move(t)}; }

// Normalizes `axis` (negative counts from the end) into [0, rank).
absl::StatusOr<int64_t> NormalizeAxis(absl::string_view op, int64_t axis,
                                      int64_t rank);

// Requires every operand to have the dtype of operand 0.
absl::Status RequireSameDType(absl::string_view op, const InferContext& ctx,
                              int first = 0);

// Which dimensions a reduce_* op with attribute `axes` (nullptr when
// absent, meaning all) reduces; errors for out-of-range or repeated axes.
absl::StatusOr<std::vector<bool>> ReducedAxes(absl::string_view op,
                                              const Attribute* axes,
                                              int64_t rank);

// The permutation a transpose with attribute `perm` (nullptr when absent,
// meaning reversed dims) applies, normalized to non-negative entries.
absl::StatusOr<std::vector<int64_t>> TransposePerm(const Attribute* perm,
                                                   int64_t rank);

// The shape a reshape of `input` with attribute `shape` gives (one -1 allowed).
absl::StatusOr<Shape> ReshapeTarget(absl::Span<const int64_t> input,
                                    const std::vector<int64_t>& shape);

// The join axis of a concat with attribute `axis` over operands of `rank`.
absl::StatusOr<int64_t> ConcatAxis(const Attribute* axis, int64_t rank);

// What a slice reads, per dimension d of the input: output element j of
// dim d is input index start[d] + j * step[d], for j < count[d] (count is
// the output shape).
struct SliceDims {
  std::vector<int64_t> start;
  std::vector<int64_t> step;
  Shape count;
};

// Resolves a slice's `starts`, `ends`, `axes` and `steps` attributes
// (nullptr when absent) against `input` as numpy's basic slicing does:
// negative bounds count from the end, out-of-range bounds clamp, a negative
// step walks backwards. Axes default to the first starts.size() dims.
absl::StatusOr<SliceDims> ResolveSlice(const Attribute* starts,
                                       const Attribute* ends,
                                       const Attribute* axes,
                                       const Attribute* steps,
                                       const Shape& input);

}  // namespace hgc

#endif  // HGC_IR_OPS_OP_HELPERS_H_
