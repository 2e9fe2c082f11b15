// Transposes, slices and concats as allocation-free host steps.
//
// A `transpose` is pure data movement, so it runs as a strided copy from
// its operand's buffer to its result's: dims of the permuted input that are
// also contiguous in the output are merged first, the innermost run is
// copied with memcpy when it stays contiguous (e.g. attention's head split
// [B, S, H, D] -> [B, H, S, D] copies rows of D). Otherwise, when another
// output dim is contiguous in the input ([B, S, D] -> [B, D, S]), 4-byte
// elements are moved as a batch of 2-D transposes in 16 x 16 AVX-512
// register tiles (8 x 8 AVX2 ones without AVX-512); other cases go element
// by element. A slice is the same strided copy (its strides the input's
// times the steps, negative ones walking backwards), a concat one memcpy
// per operand and row. Any dtype (1, 2, 4 or
// 8 bytes per element). A big step runs on every thread of the pool, each
// moving an even share of the rows (or blocks).
#ifndef HGC_CODEGEN_TRANSPOSE_STEP_H_
#define HGC_CODEGEN_TRANSPOSE_STEP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "runtime/executable.h"

namespace hgc {
namespace codegen {

// The copy plan of a transpose: output dims (outermost first) with the
// input element stride of each, after merging, and the element size; then
// how the copy splits into independent work items, so that running it
// allocates nothing: every index of the outer dims (all but the innermost,
// and but `swapped`, the input-contiguous dim, when 4-byte elements go by
// 2-D blocks), times `chunks` row chunks of a block.
struct TransposePlan {
  std::vector<int64_t> dims;
  std::vector<int64_t> in_strides;
  int64_t element_bytes = 0;
  std::vector<int64_t> out_strides;  // of every dim, in elements
  std::vector<int64_t> outer;        // the outer dims, outermost first
  int swapped = -1;
  int64_t chunks = 1;
  int64_t items = 0;
};

// The plan for transposing `input` (shape) by `perm` (a permutation of
// 0..rank-1; InvalidArgument otherwise).
absl::StatusOr<TransposePlan> PlanTranspose(const Shape& input,
                                            const std::vector<int64_t>& perm,
                                            int64_t element_bytes);

// Copies by `plan` from `in` to `out` (which must not overlap): the work
// items of part `part` of `parts` (an even share; all by default).
void RunTranspose(const TransposePlan& plan, const void* in, void* out,
                  int part = 0, int parts = 1);

// Copies from this size on run on every thread of the pool; smaller ones
// on the calling thread, where waking the pool would cost more.
inline constexpr int64_t kSharedCopyBytes = int64_t{256} << 10;

// The plan for copying into a row-major output of `dims` the input
// element at sum idx[d] * in_strides[d] (in elements; strides may be
// negative: the caller offsets the input pointer) for each output index.
absl::StatusOr<TransposePlan> PlanStridedCopy(
    const Shape& dims, const std::vector<int64_t>& in_strides,
    int64_t element_bytes);

// A step named `name` over `buffers` that moves `bytes` by `work` (part
// `part` of `parts`): shared by the pool's threads from kSharedCopyBytes
// on, and below that a host step doing it whole (part 0 of 1) on the
// calling thread.
Step MoveStep(std::string name, std::vector<BufferRef> buffers, int64_t bytes,
              std::function<void(void* const*, int, int)> work);

// A MoveStep copying `bytes` from `from` to `to` (the same buffer: nothing;
// overlapping buffers: a memmove on one thread).
Step CopyStep(std::string name, BufferRef from, BufferRef to, int64_t bytes);

// The step for `op` (a verified transpose) reading `in` and writing `out`:
// shared host code, each thread moving its share of the work items (a host
// step below kSharedCopyBytes).
absl::StatusOr<Step> TransposeStep(const Op& op, BufferRef in, BufferRef out);

// The same for a verified slice (a strided copy from its first element)
// and a verified concat (`ins`: its operands' buffers; a block of each
// operand per index of the dims before the axis).
absl::StatusOr<Step> SliceStep(const Op& op, BufferRef in, BufferRef out);
absl::StatusOr<Step> ConcatStep(const Op& op, std::vector<BufferRef> ins,
                                BufferRef out);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_TRANSPOSE_STEP_H_
