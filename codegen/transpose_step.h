// Transposes as allocation-free host steps.
//
// A `transpose` is pure data movement, so it runs as a strided copy from
// its operand's buffer to its result's: dims of the permuted input that are
// also contiguous in the output are merged first, the innermost run is
// copied with memcpy when it stays contiguous (e.g. attention's head split
// [B, S, H, D] -> [B, H, S, D] copies rows of D), and element by element
// otherwise. Any dtype (1, 2 or 4 bytes per element).
#ifndef HGC_CODEGEN_TRANSPOSE_STEP_H_
#define HGC_CODEGEN_TRANSPOSE_STEP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "runtime/executable.h"

namespace hgc {
namespace codegen {

// The copy plan of a transpose: output dims (outermost first) with the
// input element stride of each, after merging, and the element size.
struct TransposePlan {
  std::vector<int64_t> dims;
  std::vector<int64_t> in_strides;
  int64_t element_bytes = 0;
};

// The plan for transposing `input` (shape) by `perm` (a permutation of
// 0..rank-1; InvalidArgument otherwise).
absl::StatusOr<TransposePlan> PlanTranspose(const Shape& input,
                                            const std::vector<int64_t>& perm,
                                            int64_t element_bytes);

// Copies by `plan` from `in` to `out` (which must not overlap).
void RunTranspose(const TransposePlan& plan, const void* in, void* out);

// The host step for `op` (a verified transpose) reading `in` and writing
// `out`.
absl::StatusOr<Step> TransposeStep(const Op& op, BufferRef in, BufferRef out);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_TRANSPOSE_STEP_H_
