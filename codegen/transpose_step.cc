#include "codegen/transpose_step.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/runtime_helpers.h"
#include "ir/dtype.h"
#include "ir/ops/op_helpers.h"
#include "support/cpu_features.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

// The output dim the input walks contiguously, when the innermost output
// dim does not: then every output row gathers with a stride, and the copy
// is a batch of 2-D transposes (that dim by the innermost one). -1 if not.
int SwappedDim(const TransposePlan& plan) {
  const size_t last = plan.dims.size() - 1;
  if (plan.in_strides[last] == 1) return -1;
  for (size_t d = 0; d < last; ++d) {
    if (plan.in_strides[d] == 1) return static_cast<int>(d);
  }
  return -1;
}

// Rows of a 2-D transpose block one work item moves: a multiple of the
// 16 x 16 (AVX2: 8 x 8) register tile.
constexpr int64_t kBlockRows = 64;

// Fills the work split of `plan` (see TransposePlan).
void PlanWork(TransposePlan& plan) {
  // The project's ISA check: the CPU, the OS saving YMM / ZMM state,
  // HGC_MAX_ISA. hgc_transpose_f32 has AVX-512 and AVX2 code.
  const bool vector_tiles = IsaAvailable(Isa::kAvx2);
  const size_t rank = plan.dims.size();
  plan.out_strides.assign(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) {
    plan.out_strides[d] = plan.out_strides[d + 1] * plan.dims[d + 1];
  }
  plan.swapped =
      plan.element_bytes == 4 && vector_tiles ? SwappedDim(plan) : -1;
  plan.items = 1;
  for (size_t d = 0; d + 1 < rank; ++d) {
    if (static_cast<int>(d) == plan.swapped) continue;
    plan.outer.push_back(static_cast<int64_t>(d));
    plan.items *= plan.dims[d];
  }
  if (plan.swapped >= 0) {
    plan.chunks = (plan.dims[rank - 1] + kBlockRows - 1) / kBlockRows;
    plan.items *= plan.chunks;
  }
}

// Moves work item `item`: one outer index (its innermost run, or its 2-D
// block's chunk of rows).
template <typename T>
void MoveItem(const TransposePlan& plan, int64_t item, const T* in, T* out) {
  const size_t last = plan.dims.size() - 1;
  int64_t chunk = 0;
  if (plan.swapped >= 0) {
    chunk = item % plan.chunks;
    item /= plan.chunks;
  }
  int64_t in_off = 0, out_off = 0;
  for (size_t i = plan.outer.size(); i-- > 0;) {
    const int64_t d = plan.outer[i];
    const int64_t idx = item % plan.dims[d];
    item /= plan.dims[d];
    in_off += idx * plan.in_strides[d];
    out_off += idx * plan.out_strides[d];
  }
  const int64_t n = plan.dims[last];
  const int64_t stride = plan.in_strides[last];
  if constexpr (sizeof(T) == 4) {
    if (plan.swapped >= 0) {
      // Input rows r (the innermost output dim) of the swapped dim's
      // elements; output rows of the swapped dim, r its column.
      const int64_t r0 = chunk * kBlockRows;
      const int64_t rows = std::min(kBlockRows, n - r0);
      hgc_transpose_f32(
          reinterpret_cast<const float*>(in + in_off) + r0 * stride, stride,
          reinterpret_cast<float*>(out + out_off) + r0,
          plan.out_strides[plan.swapped], rows, plan.dims[plan.swapped]);
      return;
    }
  }
  const T* src = in + in_off;
  T* dst = out + out_off;
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
}

template <typename T>
void MoveShare(const TransposePlan& plan, const void* in, void* out, int part,
               int parts) {
  const int64_t begin = plan.items * part / parts;
  const int64_t end = plan.items * (part + 1) / parts;
  for (int64_t item = begin; item < end; ++item) {
    MoveItem<T>(plan, item, static_cast<const T*>(in), static_cast<T*>(out));
  }
}

}  // namespace

absl::StatusOr<TransposePlan> PlanStridedCopy(
    const Shape& dims, const std::vector<int64_t>& in_strides,
    int64_t element_bytes) {
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4 &&
      element_bytes != 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("copy: no ", element_bytes, "-byte elements"));
  }
  if (in_strides.size() != dims.size()) {
    return absl::InvalidArgumentError("copy: dims and strides differ");
  }
  TransposePlan plan;
  plan.element_bytes = element_bytes;
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t dim = dims[d];
    if (dim == 0) {  // nothing to copy
      plan.dims = {0};
      plan.in_strides = {1};
      PlanWork(plan);
      return plan;
    }
    if (dim == 1) continue;  // contributes no movement
    // Merge with the previous output dim when that one steps over exactly
    // this dim's extent in the input.
    if (!plan.dims.empty() && plan.in_strides.back() == in_strides[d] * dim) {
      plan.dims.back() *= dim;
      plan.in_strides.back() = in_strides[d];
      continue;
    }
    plan.dims.push_back(dim);
    plan.in_strides.push_back(in_strides[d]);
  }
  if (plan.dims.empty()) {  // a single element
    plan.dims = {1};
    plan.in_strides = {1};
  }
  PlanWork(plan);
  return plan;
}

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
  Shape dims;
  std::vector<int64_t> in_strides;
  for (int64_t p : perm) {
    if (p < 0) p += static_cast<int64_t>(rank);
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p]) {
      return absl::InvalidArgumentError("transpose: perm is not a permutation");
    }
    seen[p] = true;
    dims.push_back(input[p]);
    in_strides.push_back(strides[p]);
  }
  return PlanStridedCopy(dims, in_strides, element_bytes);
}

void RunTranspose(const TransposePlan& plan, const void* in, void* out,
                  int part, int parts) {
  if (plan.dims[0] == 0) return;
  switch (plan.element_bytes) {
    case 1:
      return MoveShare<uint8_t>(plan, in, out, part, parts);
    case 2:
      return MoveShare<uint16_t>(plan, in, out, part, parts);
    case 4:
      return MoveShare<uint32_t>(plan, in, out, part, parts);
    case 8:
      return MoveShare<uint64_t>(plan, in, out, part, parts);
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
  return MoveStep(
      absl::StrCat("transpose.", op.result()->name()), {in, out},
      type.SizeInBytes(),
      [plan = *std::move(plan)](void* const* bufs, int part, int parts) {
        RunTranspose(plan, bufs[0], bufs[1], part, parts);
      });
}

Step MoveStep(std::string name, std::vector<BufferRef> buffers, int64_t bytes,
              std::function<void(void* const*, int, int)> work) {
  Step step;
  step.name = std::move(name);
  step.buffers = std::move(buffers);
  if (bytes < kSharedCopyBytes) {
    step.host = [work = std::move(work)](void* const* bufs) {
      work(bufs, 0, 1);  // a planned move cannot fail
      return absl::OkStatus();
    };
  } else {
    step.shared = std::move(work);
  }
  return step;
}

Step CopyStep(std::string name, BufferRef from, BufferRef to, int64_t bytes) {
  // Each part copies its share of cache lines; buffers that overlap (an
  // output the caller passed twice, say) are moved by part 0 alone.
  return MoveStep(
      std::move(name), {from, to}, bytes,
      [bytes](void* const* bufs, int part, int parts) {
        const auto* from = static_cast<const uint8_t*>(bufs[0]);
        auto* to = static_cast<uint8_t*>(bufs[1]);
        if (from == to) return;
        const bool overlap = from < to + bytes && to < from + bytes;
        if (overlap) {
          if (part == 0) std::memmove(to, from, bytes);
          return;
        }
        const int64_t lines = (bytes + 63) / 64;
        const int64_t begin = std::min(bytes, lines * part / parts * 64);
        const int64_t end = std::min(bytes, lines * (part + 1) / parts * 64);
        if (end > begin) std::memcpy(to + begin, from + begin, end - begin);
      });
}

absl::StatusOr<Step> SliceStep(const Op& op, BufferRef in, BufferRef out) {
  const TensorType& type = op.operand(0)->type();
  HGC_ASSIGN_OR_RETURN(
      SliceDims slice,
      ResolveSlice(op.FindAttr("starts"), op.FindAttr("ends"),
                   op.FindAttr("axes"), op.FindAttr("steps"), type.shape));
  // Output dim d walks input dim d from start[d] by step[d] elements.
  const Shape row_major = RowMajorStrides(type.shape);
  std::vector<int64_t> in_strides;
  int64_t base = 0;
  for (size_t d = 0; d < row_major.size(); ++d) {
    in_strides.push_back(row_major[d] * slice.step[d]);
    if (slice.count[d] > 0) base += slice.start[d] * row_major[d];
  }
  const int64_t element_bytes = DTypeSize(type.dtype);
  HGC_ASSIGN_OR_RETURN(TransposePlan plan,
                       PlanStridedCopy(slice.count, in_strides, element_bytes));
  const int64_t offset_bytes = base * element_bytes;
  return MoveStep(
      absl::StrCat("slice.", op.result()->name()), {in, out},
      op.result()->type().SizeInBytes(),
      [plan = std::move(plan), offset_bytes](void* const* bufs, int part,
                                             int parts) {
        RunTranspose(plan, static_cast<const uint8_t*>(bufs[0]) + offset_bytes,
                     bufs[1], part, parts);
      });
}

absl::StatusOr<Step> ConcatStep(const Op& op, std::vector<BufferRef> ins,
                                BufferRef out) {
  const Shape& shape = op.result()->type().shape;
  HGC_ASSIGN_OR_RETURN(
      int64_t axis,
      ConcatAxis(op.FindAttr("axis"), static_cast<int64_t>(shape.size())));
  // Row-major: each index of the dims before `axis` (a row) takes one
  // contiguous block of every operand in turn.
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; ++d) rows *= shape[d];
  const int64_t element_bytes = DTypeSize(op.result()->type().dtype);
  std::vector<int64_t> block_bytes;
  int64_t row_bytes = 0;
  for (const Value* x : op.operands()) {
    int64_t bytes = element_bytes;
    for (size_t d = axis; d < shape.size(); ++d) bytes *= x->type().shape[d];
    block_bytes.push_back(bytes);
    row_bytes += bytes;
  }
  const size_t n = ins.size();
  ins.push_back(out);
  return MoveStep(
      absl::StrCat("concat.", op.result()->name()), std::move(ins),
      op.result()->type().SizeInBytes(),
      [block_bytes, row_bytes, rows, n](void* const* bufs, int part,
                                        int parts) {
        const int64_t begin = rows * part / parts;
        const int64_t end = rows * (part + 1) / parts;
        uint8_t* dst = static_cast<uint8_t*>(bufs[n]) + begin * row_bytes;
        for (int64_t row = begin; row < end; ++row) {
          for (size_t k = 0; k < n; ++k) {
            const int64_t bytes = block_bytes[k];
            if (bytes == 0) continue;
            std::memcpy(dst, static_cast<const uint8_t*>(bufs[k]) + row * bytes,
                        bytes);
            dst += bytes;
          }
        }
      });
}

}  // namespace codegen
}  // namespace hgc
