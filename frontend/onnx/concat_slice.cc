#include "frontend/onnx/concat_slice.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "frontend/onnx/host_ops.h"
#include "ir/tensor_type.h"
#include "support/status_macros.h"

namespace hgc::onnx_import {
namespace {

absl::StatusOr<int64_t> Axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

// Input i's integers, which the IR needs as attributes: a tensor computed
// at run time has no value to put there.
absl::StatusOr<std::vector<int64_t>> KnownInts(NodeContext& n, int i,
                                               const char* what) {
  if (n.has_input(i) && !n.IsHost(i)) {
    return absl::UnimplementedError(absl::StrCat(
        "the ", what, " input '", n.input(i),
        "' is computed at run time; hgc needs it known at import (a "
        "constant, or a shape chain that folds), since the slice op takes "
        "its bounds as attributes"));
  }
  HGC_ASSIGN_OR_RETURN(const HostTensor* h, n.Host(i));
  return HostInts(*h, what);
}

// Attributes before opset 10, inputs from 10 on; axes and steps may be
// absent (nullopt).
absl::Status ReadSliceLists(NodeContext& n, SliceArgs& args,
                            std::optional<std::vector<int64_t>>& axes,
                            std::optional<std::vector<int64_t>>& steps) {
  if (n.opset() < 10) {
    HGC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> starts,
                         n.IntsAttr("starts"));
    HGC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> ends,
                         n.IntsAttr("ends"));
    HGC_ASSIGN_OR_RETURN(axes, n.IntsAttr("axes"));
    if (!starts || !ends) {
      return absl::InvalidArgumentError("'starts' and 'ends' are required");
    }
    args.starts = std::move(*starts);
    args.ends = std::move(*ends);
    return absl::OkStatus();
  }
  HGC_ASSIGN_OR_RETURN(args.starts, KnownInts(n, 1, "starts"));
  HGC_ASSIGN_OR_RETURN(args.ends, KnownInts(n, 2, "ends"));
  if (n.has_input(3)) {
    HGC_ASSIGN_OR_RETURN(axes, KnownInts(n, 3, "axes"));
  }
  if (n.has_input(4)) {
    HGC_ASSIGN_OR_RETURN(steps, KnownInts(n, 4, "steps"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SliceArgs> ReadSliceArgs(NodeContext& n,
                                        const std::vector<int64_t>& dims) {
  const int64_t rank = dims.size();
  SliceArgs args;
  std::optional<std::vector<int64_t>> axes, steps;
  HGC_RETURN_IF_ERROR(ReadSliceLists(n, args, axes, steps));
  const size_t count = args.starts.size();
  if (!axes) {
    axes.emplace();
    for (size_t i = 0; i < count; ++i) axes->push_back(i);
  }
  args.steps = steps ? *std::move(steps) : std::vector<int64_t>(count, 1);
  if (args.ends.size() != count || axes->size() != count ||
      args.steps.size() != count) {
    return absl::InvalidArgumentError(
        "starts, ends, axes and steps differ in length");
  }
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < count; ++i) {
    HGC_ASSIGN_OR_RETURN(int64_t axis, Axis((*axes)[i], rank));
    if (seen[axis]) {
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", (*axes)[i], " repeats in axes"));
    }
    seen[axis] = true;
    args.axes.push_back(axis);
    if (args.steps[i] == 0) return absl::InvalidArgumentError("a step is 0");
    // ONNX clamps a start before the first element to index 0 for a
    // negative step too (onnxruntime does the same): the slice reads
    // element 0, where numpy's start of -1 would read nothing.
    if (args.steps[i] < 0 && args.starts[i] < -dims[axis]) args.starts[i] = 0;
  }
  return args;
}

absl::StatusOr<std::vector<int64_t>> SplitSizes(NodeContext& n, int64_t size) {
  std::optional<std::vector<int64_t>> sizes;
  if (n.opset() < 13) {
    HGC_ASSIGN_OR_RETURN(sizes, n.IntsAttr("split"));
  } else if (n.has_input(1)) {
    HGC_ASSIGN_OR_RETURN(sizes, KnownInts(n, 1, "split"));
  }
  const int64_t parts = n.node().output_size();
  if (n.opset() >= 18 && n.Attr("num_outputs") != nullptr) {
    HGC_ASSIGN_OR_RETURN(int64_t num_outputs, n.IntAttr("num_outputs", 0));
    if (sizes) {
      return absl::InvalidArgumentError(
          "'num_outputs' and the split input are both given");
    }
    if (num_outputs != parts) {
      return absl::InvalidArgumentError(
          absl::StrCat("'num_outputs' is ", num_outputs, ", but the node has ",
                       parts, " outputs"));
    }
  }
  if (!sizes) {
    if (parts == 0) return absl::InvalidArgumentError("Split has no outputs");
    const int64_t part =
        n.opset() >= 18 ? (size + parts - 1) / parts : size / parts;
    if (n.opset() < 18 && size % parts != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot split a dimension of ", size, " into ", parts,
                       " equal parts"));
    }
    sizes.emplace();
    for (int64_t k = 0, left = size; k < parts; ++k, left -= part) {
      sizes->push_back(std::max<int64_t>(0, std::min(part, left)));
    }
  }
  int64_t total = 0;
  for (int64_t s : *sizes) {
    if (s < 0 || s > size) {
      return absl::InvalidArgumentError("a split size is out of range");
    }
    total += s;
  }
  if (total != size || static_cast<int64_t>(sizes->size()) != parts) {
    return absl::InvalidArgumentError(absl::StrCat(
        "split sizes must add up to ", size, " over ", parts, " outputs"));
  }
  return *sizes;
}

bool FoldsAtImport(NodeContext& n, int first, int last) {
  int64_t total = 0;
  for (int i = first; i <= last; ++i) {
    if (!n.IsHost(i)) return false;
    // A malformed initializer: the fold reports it.
    absl::StatusOr<std::vector<int64_t>> dims = n.ShapeOf(i);
    if (!dims.ok()) return true;
    absl::StatusOr<int64_t> count = CheckedNumElements(*dims);
    if (!count.ok()) return true;
    total += *count;
    if (total > kMaxHostElements) return false;
  }
  return true;
}

absl::Status ConcatToIr(NodeContext& n) {
  if (n.num_inputs() == 0) return absl::InvalidArgumentError("needs an input");
  if (n.Attr("axis") == nullptr) {
    return absl::InvalidArgumentError("'axis' is required");
  }
  HGC_ASSIGN_OR_RETURN(int64_t axis, n.IntAttr("axis", 0));
  std::vector<Value*> parts;
  for (int i = 0; i < n.num_inputs(); ++i) {
    HGC_ASSIGN_OR_RETURN(Value * part, n.Ir(i));
    parts.push_back(part);
  }
  HGC_ASSIGN_OR_RETURN(axis, Axis(axis, parts[0]->type().rank()));
  HGC_ASSIGN_OR_RETURN(Value * out, n.Create("concat", std::move(parts),
                                             {{"axis", Attribute::Int(axis)}}));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

absl::Status SliceToIr(NodeContext& n, const SliceArgs& args) {
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  AttrMap attrs = {{"starts", Attribute::IntList(args.starts)},
                   {"ends", Attribute::IntList(args.ends)}};
  // The defaults are left out, so the printed graph reads as the model.
  bool leading_axes = true;
  for (size_t i = 0; i < args.axes.size(); ++i) {
    leading_axes = leading_axes && args.axes[i] == static_cast<int64_t>(i);
  }
  if (!leading_axes) attrs.emplace("axes", Attribute::IntList(args.axes));
  if (std::any_of(args.steps.begin(), args.steps.end(),
                  [](int64_t s) { return s != 1; })) {
    attrs.emplace("steps", Attribute::IntList(args.steps));
  }
  HGC_ASSIGN_OR_RETURN(Value * out, n.Create("slice", {x}, std::move(attrs)));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

absl::Status SplitToIr(NodeContext& n, int64_t axis,
                       const std::vector<int64_t>& sizes) {
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  int64_t offset = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const int part = static_cast<int>(k);
    if (n.output_used(part)) {
      AttrMap attrs = {{"starts", Attribute::IntList({offset})},
                       {"ends", Attribute::IntList({offset + sizes[k]})}};
      if (axis != 0) attrs.emplace("axes", Attribute::IntList({axis}));
      HGC_ASSIGN_OR_RETURN(Value * out,
                           n.Create("slice", {x}, std::move(attrs)));
      n.SetOutput(part, out);
    }
    offset += sizes[k];
  }
  return absl::OkStatus();
}

}  // namespace hgc::onnx_import
