// Converters of the ops that only rearrange: Transpose, Reshape, Flatten,
// Squeeze and Unsqueeze. On a host tensor (a shape chain) they fold.
#include "absl/strings/str_cat.h"
#include "frontend/onnx/host_ops.h"
#include "frontend/onnx/import_context.h"
#include "ir/tensor_type.h"
#include "support/status_macros.h"

namespace hgc::onnx_import {
namespace {

// Defines output 0 as input 0 with `dims`: folded when the input is known
// at import and small, else a reshape op.
absl::Status ReshapeTo(NodeContext& n, const std::vector<int64_t>& dims) {
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> in, n.ShapeOf(0));
  absl::StatusOr<int64_t> count = CheckedNumElements(dims);
  if (!count.ok() || *count != *CheckedNumElements(in)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot reshape ", ShapeToString(in), " to ", ShapeToString(dims)));
  }
  if (n.IsHost(0) && *count <= kMaxHostElements) {
    HGC_ASSIGN_OR_RETURN(const HostTensor* x, n.Host(0));
    n.SetOutputHost(0, HostReshape(*x, dims));
    return absl::OkStatus();
  }
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  HGC_ASSIGN_OR_RETURN(Value * out, n.Reshape(x, dims));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

// The axes of Squeeze / Unsqueeze: an attribute before opset 13, an input
// from 13 on. nullopt when absent.
absl::StatusOr<std::optional<std::vector<int64_t>>> AxesOf(NodeContext& n) {
  if (n.opset() < 13) return n.IntsAttr("axes");
  if (!n.has_input(1)) return std::optional<std::vector<int64_t>>();
  HGC_ASSIGN_OR_RETURN(const HostTensor* h, n.Host(1));
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, HostInts(*h, "axes"));
  return std::optional<std::vector<int64_t>>(std::move(axes));
}

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace

absl::Status ConvertTranspose(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  HGC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> perm,
                       n.IntsAttr("perm"));
  if (!perm) {
    perm.emplace();
    for (int64_t i = x->type().rank(); i-- > 0;) perm->push_back(i);
  }
  HGC_ASSIGN_OR_RETURN(
      Value * out,
      n.Create("transpose", {x}, {{"perm", Attribute::IntList(*perm)}}));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

absl::Status ConvertReshape(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> in, n.ShapeOf(0));
  if (!n.has_input(1))
    return absl::InvalidArgumentError("input #1 is required");
  if (!n.IsHost(1)) {
    return absl::UnimplementedError(absl::StrCat(
        "the shape input '", n.input(1),
        "' is computed at run time; hgc "
        "needs it known at import (a constant, or a shape chain that folds)"));
  }
  HGC_ASSIGN_OR_RETURN(const HostTensor* h, n.Host(1));
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> shape, HostInts(*h, "shape"));
  HGC_ASSIGN_OR_RETURN(int64_t allowzero, n.IntAttr("allowzero", 0));
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (i >= in.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("shape entry ", i,
                         " is 0 (copy), but the input has rank ", in.size()));
      }
      shape[i] = in[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) {
        return absl::InvalidArgumentError("shape has more than one -1");
      }
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape entry ", shape[i], " is negative"));
    } else {
      if (shape[i] > 0 && known > kMaxElements / shape[i]) {
        return absl::InvalidArgumentError("shape has too many elements");
      }
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    const int64_t total = *CheckedNumElements(in);
    if (known == 0 || total % known != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot reshape ", ShapeToString(in), " to ", ShapeToString(shape)));
    }
    shape[infer] = total / known;
  }
  return ReshapeTo(n, shape);
}

absl::Status ConvertFlatten(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> in, n.ShapeOf(0));
  const int64_t rank = in.size();
  HGC_ASSIGN_OR_RETURN(int64_t axis, n.IntAttr("axis", 1));
  if (axis < -rank || axis > rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= in[i];
  return ReshapeTo(n, {outer, inner});
}

absl::Status ConvertSqueeze(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> in, n.ShapeOf(0));
  HGC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, AxesOf(n));
  std::vector<bool> drop(in.size(), false);
  if (!axes) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  } else {
    for (int64_t a : *axes) {
      HGC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, in.size()));
      if (in[axis] != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("cannot squeeze axis ", a, " of size ", in[axis]));
      }
      drop[axis] = true;
    }
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!drop[i]) out.push_back(in[i]);
  }
  return ReshapeTo(n, out);
}

absl::Status ConvertUnsqueeze(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> in, n.ShapeOf(0));
  HGC_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes, AxesOf(n));
  if (!axes) return absl::InvalidArgumentError("axes are required");
  const int64_t rank = in.size() + axes->size();
  std::vector<bool> insert(rank, false);
  for (int64_t a : *axes) {
    HGC_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, rank));
    if (insert[axis]) {
      return absl::InvalidArgumentError(absl::StrCat("axis ", a, " repeats"));
    }
    insert[axis] = true;
  }
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(insert[i] ? 1 : in[next++]);
  return ReshapeTo(n, out);
}

}  // namespace hgc::onnx_import
