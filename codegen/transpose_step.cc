#include "codegen/transpose_step.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "ir/dtype.h"
#include "ir/ops/op_helpers.h"

namespace hgc {
namespace codegen {
namespace {

// Copies the block at dims[d..] (output contiguous) from `in`, elements of
// type T (the element size as a type, so the strided innermost copy is a
// plain load and store, not a memcpy call per element).
template <typename T>
void CopyDims(const TransposePlan& plan, size_t d, const uint8_t* in,
              uint8_t*& out) {
  const int64_t n = plan.dims[d];
  const int64_t stride = plan.in_strides[d] * sizeof(T);
  if (d + 1 == plan.dims.size()) {
    if (plan.in_strides[d] == 1) {
      std::memcpy(out, in, static_cast<size_t>(n * sizeof(T)));
      out += n * sizeof(T);
      return;
    }
    for (int64_t i = 0; i < n; ++i, in += stride, out += sizeof(T)) {
      std::memcpy(out, in, sizeof(T));  // constant size: one move
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i, in += stride) {
    CopyDims<T>(plan, d + 1, in, out);
  }
}

}  // namespace

absl::StatusOr<TransposePlan> PlanTranspose(const Shape& input,
                                            const std::vector<int64_t>& perm,
                                            int64_t element_bytes) {
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4 &&
      element_bytes != 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("transpose: no ", element_bytes, "-byte elements"));
  }
  const size_t rank = input.size();
  if (perm.size() != rank) {
    return absl::InvalidArgumentError("transpose: perm and rank differ");
  }
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * input[d];
  std::vector<bool> seen(rank, false);
  TransposePlan plan;
  plan.element_bytes = element_bytes;
  for (int64_t p : perm) {
    if (p < 0) p += static_cast<int64_t>(rank);
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p]) {
      return absl::InvalidArgumentError("transpose: perm is not a permutation");
    }
    seen[p] = true;
    const int64_t dim = input[p];
    if (dim == 0) {  // nothing to copy
      plan.dims = {0};
      plan.in_strides = {1};
      return plan;
    }
    if (dim == 1) continue;  // contributes no movement
    // Merge with the previous output dim when that one steps over exactly
    // this dim's extent in the input.
    if (!plan.dims.empty() && plan.in_strides.back() == strides[p] * dim) {
      plan.dims.back() *= dim;
      plan.in_strides.back() = strides[p];
      continue;
    }
    plan.dims.push_back(dim);
    plan.in_strides.push_back(strides[p]);
  }
  if (plan.dims.empty()) {  // a single element
    plan.dims = {1};
    plan.in_strides = {1};
  }
  return plan;
}

void RunTranspose(const TransposePlan& plan, const void* in, void* out) {
  if (plan.dims[0] == 0) return;
  uint8_t* cursor = static_cast<uint8_t*>(out);
  const uint8_t* src = static_cast<const uint8_t*>(in);
  switch (plan.element_bytes) {
    case 1:
      return CopyDims<uint8_t>(plan, 0, src, cursor);
    case 2:
      return CopyDims<uint16_t>(plan, 0, src, cursor);
    case 4:
      return CopyDims<uint32_t>(plan, 0, src, cursor);
    case 8:
      return CopyDims<uint64_t>(plan, 0, src, cursor);
    default:  // PlanTranspose admits no other sizes
      return;
  }
}

absl::StatusOr<Step> TransposeStep(const Op& op, BufferRef in, BufferRef out) {
  const TensorType& type = op.operand(0)->type();
  absl::StatusOr<std::vector<int64_t>> perm =
      TransposePerm(op.FindAttr("perm"), type.rank());
  if (!perm.ok()) return perm.status();
  absl::StatusOr<TransposePlan> plan =
      PlanTranspose(type.shape, *perm, DTypeSize(type.dtype));
  if (!plan.ok()) return plan.status();
  Step step;
  step.name = absl::StrCat("transpose.", op.result()->name());
  step.buffers = {in, out};
  step.host = [plan = *std::move(plan)](void* const* bufs) {
    RunTranspose(plan, bufs[0], bufs[1]);  // a planned copy cannot fail
    return absl::OkStatus();
  };
  return step;
}

}  // namespace codegen
}  // namespace hgc
