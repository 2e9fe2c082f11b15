// concat and slice: the data-movement ops ONNX models need.
#include <cstdint>
#include <vector>

#include "ir/ops/op_helpers.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// numpy's PySlice_AdjustIndices for one dimension of length n: the first
// index read and how many are read. Bounds clamp into [0, n] for a positive
// step and [-1, n - 1] for a negative one, so nothing below overflows.
void ResolveDim(int64_t start, int64_t end, int64_t step, int64_t n,
                int64_t* first, int64_t* count) {
  auto clamp = [&](int64_t i) {
    if (i < 0) {
      i += n;  // i >= INT64_MIN and n <= 2^60: no overflow
      if (i < 0) return step < 0 ? int64_t{-1} : int64_t{0};
    } else if (i >= n) {
      return step < 0 ? n - 1 : n;
    }
    return i;
  };
  start = clamp(start);
  end = clamp(end);
  *first = start;
  // |step| as unsigned: -INT64_MIN does not fit an int64.
  const uint64_t stride = step < 0 ? uint64_t{0} - static_cast<uint64_t>(step)
                                   : static_cast<uint64_t>(step);
  const int64_t span = step < 0 ? start - end : end - start;
  *count = span <= 0 ? 0
                     : static_cast<int64_t>(
                           (static_cast<uint64_t>(span) - 1) / stride + 1);
}

}  // namespace

absl::StatusOr<int64_t> ConcatAxis(const Attribute* axis, int64_t rank) {
  if (rank == 0) return OpError("concat", "cannot join scalars");
  return NormalizeAxis("concat", axis->as_int(), rank);
}

absl::StatusOr<SliceDims> ResolveSlice(const Attribute* starts,
                                       const Attribute* ends,
                                       const Attribute* axes,
                                       const Attribute* steps,
                                       const Shape& input) {
  const int64_t rank = static_cast<int64_t>(input.size());
  const std::vector<int64_t> start_list = starts->as_int_list();
  const std::vector<int64_t> end_list = ends->as_int_list();
  const size_t n = start_list.size();
  if (end_list.size() != n) {
    return OpError("slice", absl::StrCat("starts has ", n, " entries but ends ",
                                         end_list.size()));
  }
  std::vector<int64_t> axis_list;
  if (axes != nullptr) {
    axis_list = axes->as_int_list();
    if (axis_list.size() != n) {
      return OpError("slice", absl::StrCat("starts has ", n,
                                           " entries but axes ",
                                           axis_list.size()));
    }
  } else {
    if (static_cast<int64_t>(n) > rank) {
      return OpError("slice", absl::StrCat("starts has ", n,
                                           " entries for rank ", rank));
    }
    for (size_t i = 0; i < n; ++i) axis_list.push_back(i);
  }
  std::vector<int64_t> step_list(n, 1);
  if (steps != nullptr) {
    step_list = steps->as_int_list();
    if (step_list.size() != n) {
      return OpError("slice", absl::StrCat("starts has ", n,
                                           " entries but steps ",
                                           step_list.size()));
    }
  }
  SliceDims dims;
  dims.start.assign(rank, 0);
  dims.step.assign(rank, 1);
  dims.count = input;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < n; ++i) {
    HGC_ASSIGN_OR_RETURN(int64_t d, NormalizeAxis("slice", axis_list[i], rank));
    if (seen[d]) {
      return OpError("slice", absl::StrCat("axis ", axis_list[i],
                                           " is repeated in axes ",
                                           axes->ToString()));
    }
    seen[d] = true;
    if (step_list[i] == 0) {
      return OpError("slice", absl::StrCat("steps ", steps->ToString(),
                                           " has a 0"));
    }
    dims.step[d] = step_list[i];
    ResolveDim(start_list[i], end_list[i], step_list[i], input[d],
               &dims.start[d], &dims.count[d]);
  }
  return dims;
}

namespace {

OpInfo ConcatInfo() {
  OpInfo info;
  info.name = "concat";
  info.min_operands = 1;
  info.max_operands = 1 << 20;
  info.attrs = {{"axis", AttrKind::kInt, std::nullopt, /*required=*/true}};
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    HGC_RETURN_IF_ERROR(RequireSameDType("concat", ctx));
    const TensorType& first = ctx.operand(0);
    HGC_ASSIGN_OR_RETURN(int64_t axis,
                         ConcatAxis(ctx.Find("axis"), first.rank()));
    Shape shape = first.shape;
    for (int i = 1; i < ctx.num_operands(); ++i) {
      const TensorType& x = ctx.operand(i);
      bool same = x.rank() == first.rank();
      for (int64_t d = 0; same && d < first.rank(); ++d) {
        same = d == axis || x.shape[d] == first.shape[d];
      }
      if (!same) {
        return OpError("concat",
                       absl::StrCat("operand ", i, " ", x.ToString(),
                                    " does not match operand 0 ",
                                    first.ToString(), " outside axis ", axis));
      }
      shape[axis] += x.shape[axis];  // each <= 2^60, at most 2^20 of them
    }
    absl::StatusOr<int64_t> count = CheckedNumElements(shape);
    if (!count.ok()) return OpError("concat", count.status().message());
    return One(TensorType(first.dtype, std::move(shape)));
  };
  return info;
}

OpInfo SliceInfo() {
  OpInfo info;
  info.name = "slice";
  info.min_operands = info.max_operands = 1;
  info.attrs = {{"starts", AttrKind::kIntList, std::nullopt, /*required=*/true},
                {"ends", AttrKind::kIntList, std::nullopt, /*required=*/true},
                {"axes", AttrKind::kIntList, std::nullopt},
                {"steps", AttrKind::kIntList, std::nullopt}};
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    const TensorType& x = ctx.operand(0);
    HGC_ASSIGN_OR_RETURN(
        SliceDims dims,
        ResolveSlice(ctx.Find("starts"), ctx.Find("ends"), ctx.Find("axes"),
                     ctx.Find("steps"), x.shape));
    return One(TensorType(x.dtype, std::move(dims.count)));
  };
  return info;
}

}  // namespace

void RegisterConcatSliceOps(OpRegistry& r) {
  r.Register(ConcatInfo());
  r.Register(SliceInfo());
}

}  // namespace hgc
