// The ops of torch's int64 shape chains (Shape, Size, Gather, Concat,
// Slice, Split, Range, ConstantOfShape), evaluated at import on host values, so
// that the shapes they compute become attributes (Reshape's shape). Concat,
// Slice and Split of tensors computed at run time become the IR's concat
// and slice ops (concat_slice.cc); on such tensors the others would need
// IR ops hgc does not have yet (gather): those are errors.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "frontend/onnx/concat_slice.h"
#include "frontend/onnx/host_ops.h"
#include "frontend/onnx/import_context.h"
#include "ir/tensor_type.h"
#include "support/status_macros.h"

namespace hgc::onnx_import {
namespace {

using onnx::TensorProto;

// Input i as a host tensor, or the error saying the op cannot run on
// tensors computed at run time.
absl::StatusOr<const HostTensor*> HostData(NodeContext& n, int i,
                                           const char* ir_op) {
  if (n.has_input(i) && !n.IsHost(i)) {
    return absl::UnimplementedError(
        absl::StrCat(n.node().op_type(), " of a tensor computed at run time ('",
                     n.input(i), "') is not supported yet: hgc has no ", ir_op,
                     " op, and only shape chains known at import fold"));
  }
  return n.Host(i);
}

HostTensor Int64Vector(const std::vector<int64_t>& values) {
  HostTensor t =
      MakeHost(TensorProto::INT64, {static_cast<int64_t>(values.size())});
  t.ints = values;
  return t;
}

int64_t Clamp(int64_t v, int64_t lo, int64_t hi) {
  return std::max(lo, std::min(v, hi));
}

// Copies element `from` of `src` into element `to` of `dst`.
void CopyElement(const HostTensor& src, int64_t from, HostTensor& dst,
                 int64_t to) {
  if (src.is_real()) {
    dst.reals[to] = src.reals[from];
  } else {
    dst.ints[to] = src.ints[from];
  }
}

// Row-major index of `coords` in `dims`.
int64_t FlatIndex(const std::vector<int64_t>& coords,
                  const std::vector<int64_t>& dims) {
  int64_t index = 0;
  for (size_t d = 0; d < dims.size(); ++d) index = index * dims[d] + coords[d];
  return index;
}

// Walks every coordinate of `dims` in row-major order.
bool NextCoords(std::vector<int64_t>& coords,
                const std::vector<int64_t>& dims) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (++coords[d] < dims[d]) return true;
    coords[d] = 0;
  }
  return false;
}

absl::StatusOr<int64_t> Axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace

absl::Status ConvertShape(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, n.ShapeOf(0));
  const int64_t rank = dims.size();
  HGC_ASSIGN_OR_RETURN(int64_t start, n.IntAttr("start", 0));
  HGC_ASSIGN_OR_RETURN(int64_t end, n.IntAttr("end", rank));
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = Clamp(start, 0, rank);
  end = Clamp(end, start, rank);
  n.SetOutputHost(0, Int64Vector(std::vector<int64_t>(dims.begin() + start,
                                                      dims.begin() + end)));
  return absl::OkStatus();
}

absl::Status ConvertSize(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, n.ShapeOf(0));
  HostTensor out = MakeHost(TensorProto::INT64, {});
  out.ints[0] = *CheckedNumElements(dims);
  n.SetOutputHost(0, std::move(out));
  return absl::OkStatus();
}

absl::Status ConvertGather(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(const HostTensor* data, HostData(n, 0, "gather"));
  HGC_ASSIGN_OR_RETURN(const HostTensor* indices, HostData(n, 1, "gather"));
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> index,
                       HostInts(*indices, "indices"));
  HGC_ASSIGN_OR_RETURN(int64_t axis, n.IntAttr("axis", 0));
  HGC_ASSIGN_OR_RETURN(axis, Axis(axis, data->dims.size()));
  const int64_t size = data->dims[axis];
  for (int64_t& i : index) {
    if (i < -size || i >= size) {
      return absl::InvalidArgumentError(absl::StrCat(
          "index ", i, " is out of range for a dimension of size ", size));
    }
    if (i < 0) i += size;
  }
  std::vector<int64_t> dims(data->dims.begin(), data->dims.begin() + axis);
  dims.insert(dims.end(), indices->dims.begin(), indices->dims.end());
  dims.insert(dims.end(), data->dims.begin() + axis + 1, data->dims.end());
  absl::StatusOr<int64_t> count = CheckedNumElements(dims);
  if (!count.ok() || *count > kMaxHostElements) {
    return absl::UnimplementedError(
        "the result is too large to compute at import");
  }
  HostTensor out = MakeHost(data->elem_type, dims);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data->dims[d];
  for (size_t d = axis + 1; d < data->dims.size(); ++d) inner *= data->dims[d];
  int64_t next = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : index) {
      for (int64_t k = 0; k < inner; ++k) {
        CopyElement(*data, (o * size + i) * inner + k, out, next++);
      }
    }
  }
  n.SetOutputHost(0, std::move(out));
  return absl::OkStatus();
}

absl::Status ConvertConcat(NodeContext& n) {
  if (!FoldsAtImport(n, 0, n.num_inputs() - 1)) return ConcatToIr(n);
  std::vector<const HostTensor*> parts;
  for (int i = 0; i < n.num_inputs(); ++i) {
    HGC_ASSIGN_OR_RETURN(const HostTensor* part, n.Host(i));
    parts.push_back(part);
  }
  if (parts.empty()) return absl::InvalidArgumentError("needs an input");
  if (n.Attr("axis") == nullptr) {
    return absl::InvalidArgumentError("'axis' is required");
  }
  HGC_ASSIGN_OR_RETURN(int64_t axis, n.IntAttr("axis", 0));
  std::vector<int64_t> dims = parts[0]->dims;
  HGC_ASSIGN_OR_RETURN(axis, Axis(axis, dims.size()));
  dims[axis] = 0;
  for (const HostTensor* part : parts) {
    std::vector<int64_t> other = part->dims;
    if (other.size() != dims.size() || part->elem_type != parts[0]->elem_type) {
      return absl::InvalidArgumentError("inputs differ in rank or type");
    }
    other[axis] = dims[axis];
    if (other != dims) {
      return absl::InvalidArgumentError("inputs differ outside the axis");
    }
    dims[axis] += part->dims[axis];
  }
  HostTensor out = MakeHost(parts[0]->elem_type, dims);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  int64_t next = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const HostTensor* part : parts) {
      const int64_t block = part->dims[axis] * inner;
      for (int64_t k = 0; k < block; ++k) {
        CopyElement(*part, o * block + k, out, next++);
      }
    }
  }
  n.SetOutputHost(0, std::move(out));
  return absl::OkStatus();
}

absl::Status ConvertSlice(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> in, n.ShapeOf(0));
  HGC_ASSIGN_OR_RETURN(SliceArgs args, ReadSliceArgs(n, in));
  if (!FoldsAtImport(n, 0, 0)) return SliceToIr(n, args);
  HGC_ASSIGN_OR_RETURN(const HostTensor* data, n.Host(0));
  const int64_t rank = data->dims.size();
  // Per dimension: first index, step and count (numpy's basic slicing).
  std::vector<int64_t> first(rank, 0), step(rank, 1), dims = data->dims;
  for (size_t i = 0; i < args.starts.size(); ++i) {
    const int64_t axis = args.axes[i];
    const int64_t size = data->dims[axis];
    // Dims are at most 2^60: larger steps act alike, and cannot overflow.
    const int64_t s = Clamp(args.steps[i], -kMaxElements, kMaxElements);
    int64_t b = args.starts[i], e = args.ends[i];
    if (b < 0) b = b < -size ? -1 : b + size;  // -1 clamps below
    if (e < 0) e = e < -size ? -1 : e + size;
    if (s > 0) {
      b = Clamp(b, 0, size);
      e = Clamp(e, 0, size);
      dims[axis] = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = Clamp(b, -1, size - 1);
      e = Clamp(e, -1, size - 1);
      dims[axis] = b > e ? (b - e - s - 1) / -s : 0;
    }
    first[axis] = b;
    step[axis] = s;
  }
  HostTensor out = MakeHost(data->elem_type, dims);
  if (out.size() > 0) {
    std::vector<int64_t> coords(rank, 0), source(rank);
    int64_t next = 0;
    do {
      for (int64_t d = 0; d < rank; ++d)
        source[d] = first[d] + coords[d] * step[d];
      CopyElement(*data, FlatIndex(source, data->dims), out, next++);
    } while (NextCoords(coords, dims));
  }
  n.SetOutputHost(0, std::move(out));
  return absl::OkStatus();
}

absl::Status ConvertSplit(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> in, n.ShapeOf(0));
  HGC_ASSIGN_OR_RETURN(int64_t axis, n.IntAttr("axis", 0));
  HGC_ASSIGN_OR_RETURN(axis, Axis(axis, in.size()));
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, SplitSizes(n, in[axis]));
  if (!FoldsAtImport(n, 0, 0)) return SplitToIr(n, axis, sizes);
  HGC_ASSIGN_OR_RETURN(const HostTensor* data, n.Host(0));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data->dims[d];
  for (size_t d = axis + 1; d < data->dims.size(); ++d) inner *= data->dims[d];
  int64_t offset = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<int64_t> dims = data->dims;
    dims[axis] = sizes[k];
    HostTensor out = MakeHost(data->elem_type, dims);
    int64_t next = 0;
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t base = (o * data->dims[axis] + offset) * inner;
      for (int64_t e = 0; e < sizes[k] * inner; ++e) {
        CopyElement(*data, base + e, out, next++);
      }
    }
    offset += sizes[k];
    n.SetOutputHost(static_cast<int>(k), std::move(out));
  }
  return absl::OkStatus();
}

absl::Status ConvertRange(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(const HostTensor* start, HostData(n, 0, "range"));
  HGC_ASSIGN_OR_RETURN(const HostTensor* limit, HostData(n, 1, "range"));
  HGC_ASSIGN_OR_RETURN(const HostTensor* delta, HostData(n, 2, "range"));
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1) {
    return absl::InvalidArgumentError("start, limit and delta must be scalars");
  }
  const double s = start->GetDouble(0), l = limit->GetDouble(0),
               d = delta->GetDouble(0);
  if (d == 0) return absl::InvalidArgumentError("delta is 0");
  const double count = std::max(std::ceil((l - s) / d), 0.0);
  if (!(count <= kMaxHostElements)) {
    return absl::InvalidArgumentError("the range is too long");
  }
  HostTensor out = MakeHost(start->elem_type, {static_cast<int64_t>(count)});
  for (int64_t i = 0; i < out.size(); ++i) {
    if (out.is_real()) {
      out.reals[i] = s + i * d;
    } else {
      out.ints[i] = start->ints[0] + i * delta->ints[0];
    }
  }
  n.SetOutputHost(0, std::move(out));
  return absl::OkStatus();
}

absl::Status ConvertConstantOfShape(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(const HostTensor* shape_tensor,
                       HostData(n, 0, "constant_of_shape"));
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                       HostInts(*shape_tensor, "the shape"));
  absl::StatusOr<int64_t> count = CheckedNumElements(dims);
  if (!count.ok()) return count.status();
  HostTensor value = MakeHost(TensorProto::FLOAT, {});
  if (const onnx::AttributeProto* attr = n.Attr("value")) {
    HGC_ASSIGN_OR_RETURN(value, DecodeHost(attr->t(), n.ctx().external()));
    if (value.size() != 1) {
      return absl::InvalidArgumentError("'value' must have one element");
    }
  }
  if (*count <= kMaxHostElements) {
    HostTensor out = MakeHost(value.elem_type, dims);
    for (int64_t i = 0; i < out.size(); ++i) CopyElement(value, 0, out, i);
    n.SetOutputHost(0, std::move(out));
    return absl::OkStatus();
  }
  std::optional<DType> dtype = IrDType(value.elem_type);
  if (!dtype) {
    return absl::UnimplementedError(absl::StrCat("a large ConstantOfShape of ",
                                                 ElemTypeName(value.elem_type),
                                                 " is not supported"));
  }
  HGC_ASSIGN_OR_RETURN(
      Value * out,
      n.builder().Splat(value.GetDouble(0),
                        TensorType(*dtype, Shape(dims.begin(), dims.end()))));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

}  // namespace hgc::onnx_import
