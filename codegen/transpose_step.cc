#include "codegen/transpose_step.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "ir/dtype.h"
#include "ir/ops/op_helpers.h"

namespace hgc {
namespace codegen {
namespace {

// Copies the block at dims[d..] (output contiguous) from `in`.
void CopyDims(const TransposePlan& plan, size_t d, const uint8_t* in,
              uint8_t*& out) {
  const int64_t es = plan.element_bytes;
  const int64_t n = plan.dims[d];
  const int64_t stride = plan.in_strides[d] * es;
  if (d + 1 == plan.dims.size()) {
    if (plan.in_strides[d] == 1) {
      std::memcpy(out, in, static_cast<size_t>(n * es));
      out += n * es;
      return;
    }
    for (int64_t i = 0; i < n; ++i, in += stride, out += es) {
      std::memcpy(out, in, static_cast<size_t>(es));
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i, in += stride) CopyDims(plan, d + 1, in, out);
}

}  // namespace

absl::StatusOr<TransposePlan> PlanTranspose(const Shape& input,
                                            const std::vector<int64_t>& perm,
                                            int64_t element_bytes) {
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
  CopyDims(plan, 0, static_cast<const uint8_t*>(in), cursor);
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
    RunTranspose(plan, bufs[0], bufs[1]);
  };
  return step;
}

}  // namespace codegen
}  // namespace hgc
