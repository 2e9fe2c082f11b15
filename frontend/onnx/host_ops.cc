#include "frontend/onnx/host_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "ir/tensor_type.h"
#include "support/float16.h"
#include "support/status_macros.h"

namespace hgc::onnx_import {
namespace {

using onnx::TensorProto;

// The largest host result a fold of floats produces; larger ones are left
// to the graph.
constexpr int64_t kMaxFoldedFloats = 4096;

// The flat index into a tensor of `in_dims` that element `flat` of the
// broadcast result of `out_dims` reads.
int64_t BroadcastSource(const std::vector<int64_t>& out_dims,
                        const std::vector<int64_t>& in_dims, int64_t flat) {
  int64_t index = 0;
  int64_t in_stride = 1;
  const size_t offset = out_dims.size() - in_dims.size();
  for (size_t d = out_dims.size(); d-- > 0;) {
    const int64_t coord = flat % out_dims[d];
    flat /= out_dims[d];
    if (d < offset) continue;
    const int64_t in_dim = in_dims[d - offset];
    if (in_dim != 1) index += coord * in_stride;
    in_stride *= in_dim;
  }
  return index;
}

int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

bool IsComparison(const std::string& op) {
  return op == "Equal" || op == "Greater" || op == "GreaterOrEqual" ||
         op == "Less" || op == "LessOrEqual";
}

template <typename T>
absl::StatusOr<T> Apply(const std::string& op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Integers wrap, as the graph's integer arithmetic does.
    using U = std::make_unsigned_t<T>;
    if (op == "Add") return static_cast<T>(U(a) + U(b));
    if (op == "Sub") return static_cast<T>(U(a) - U(b));
    if (op == "Mul") return static_cast<T>(U(a) * U(b));
    if (op == "Div") {
      if (b == 0) return absl::InvalidArgumentError("integer division by zero");
      if (b == -1) return static_cast<T>(U(0) - U(a));
      return a / b;
    }
  } else {
    if (op == "Add") return a + b;
    if (op == "Sub") return a - b;
    if (op == "Mul") return a * b;
    if (op == "Div") return a / b;
  }
  if (op == "Max") return std::max(a, b);
  if (op == "Min") return std::min(a, b);
  if (op == "Equal") return T(a == b);
  if (op == "Greater") return T(a > b);
  if (op == "GreaterOrEqual") return T(a >= b);
  if (op == "Less") return T(a < b);
  if (op == "LessOrEqual") return T(a <= b);
  return absl::InternalError(absl::StrCat("no host fold for ", op));
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> BroadcastDims(
    const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t da =
        i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    const int64_t db =
        i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("shapes ", ShapeToString(a), " and ", ShapeToString(b),
                       " do not broadcast"));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool FoldsOnHost(const HostTensor& a, const HostTensor& b) {
  if (a.is_real() != b.is_real()) return false;
  if (a.is_real() && (a.elem_type != TensorProto::FLOAT ||
                      b.elem_type != TensorProto::FLOAT)) {
    return false;
  }
  absl::StatusOr<std::vector<int64_t>> dims = BroadcastDims(a.dims, b.dims);
  if (!dims.ok()) return false;
  const int64_t n = NumElements(*dims);
  return n <= (a.is_real() ? kMaxFoldedFloats : kMaxHostElements);
}

HostTensor MakeHost(int32_t elem_type, std::vector<int64_t> dims) {
  HostTensor t;
  t.elem_type = elem_type;
  t.dims = std::move(dims);
  const int64_t n = NumElements(t.dims);
  (t.is_real() ? t.reals.resize(n) : t.ints.resize(n));
  return t;
}

absl::StatusOr<HostTensor> HostBinary(const std::string& op,
                                      const HostTensor& a,
                                      const HostTensor& b) {
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                       BroadcastDims(a.dims, b.dims));
  const bool compare = IsComparison(op);
  HostTensor out = MakeHost(compare ? TensorProto::BOOL : a.elem_type, dims);
  const int64_t n = NumElements(dims);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ia = BroadcastSource(dims, a.dims, i);
    const int64_t ib = BroadcastSource(dims, b.dims, i);
    if (a.is_real()) {
      HGC_ASSIGN_OR_RETURN(float v,
                           Apply<float>(op, static_cast<float>(a.reals[ia]),
                                        static_cast<float>(b.reals[ib])));
      if (compare) {
        out.ints[i] = v != 0;
      } else {
        out.reals[i] = v;
      }
    } else {
      HGC_ASSIGN_OR_RETURN(out.ints[i],
                           Apply<int64_t>(op, a.ints[ia], b.ints[ib]));
    }
  }
  return out;
}

absl::StatusOr<HostTensor> HostWhere(const HostTensor& cond,
                                     const HostTensor& a, const HostTensor& b) {
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> ab, BroadcastDims(a.dims, b.dims));
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims(cond.dims, ab));
  absl::StatusOr<int64_t> count = CheckedNumElements(dims);
  if (!count.ok() || *count > kMaxHostElements) {
    return absl::UnimplementedError(
        "the result is too large to compute at import");
  }
  HostTensor out = MakeHost(a.elem_type, dims);
  const int64_t n = NumElements(dims);
  for (int64_t i = 0; i < n; ++i) {
    const bool c = cond.GetDouble(BroadcastSource(dims, cond.dims, i)) != 0;
    const HostTensor& src = c ? a : b;
    const int64_t j = BroadcastSource(dims, src.dims, i);
    if (out.is_real()) {
      out.reals[i] = src.reals[j];
    } else {
      out.ints[i] = src.ints[j];
    }
  }
  return out;
}

absl::StatusOr<HostTensor> HostCast(const HostTensor& x, int32_t to) {
  HostTensor out = MakeHost(to, x.dims);
  if (!IrDType(to) && to != TensorProto::INT64 && to != TensorProto::DOUBLE) {
    return absl::UnimplementedError(
        absl::StrCat("Cast to ", ElemTypeName(to), " is not supported"));
  }
  for (int64_t i = 0; i < x.size(); ++i) {
    const double v = x.GetDouble(i);
    switch (to) {
      case TensorProto::FLOAT:
        out.reals[i] = static_cast<float>(v);
        break;
      case TensorProto::DOUBLE:
        out.reals[i] = v;
        break;
      case TensorProto::FLOAT16:
        out.reals[i] = HalfToFloat(DoubleToHalf(v));
        break;
      case TensorProto::BFLOAT16:
        out.reals[i] = Bf16ToFloat(DoubleToBf16(v));
        break;
      case TensorProto::BOOL:
        out.ints[i] = v != 0;
        break;
      default: {
        if (!x.is_real()) {
          out.ints[i] = x.ints[i];
        } else if (std::isnan(v)) {
          out.ints[i] = 0;
        } else {
          const double t = std::trunc(v);
          out.ints[i] = t >= 9.2e18    ? std::numeric_limits<int64_t>::max()
                        : t <= -9.2e18 ? std::numeric_limits<int64_t>::min()
                                       : static_cast<int64_t>(t);
        }
        int64_t lo = std::numeric_limits<int64_t>::min();
        int64_t hi = std::numeric_limits<int64_t>::max();
        if (to == TensorProto::INT32) {
          lo = INT32_MIN;
          hi = INT32_MAX;
        }
        if (to == TensorProto::INT8) {
          lo = -128;
          hi = 127;
        }
        if (to == TensorProto::UINT8) {
          lo = 0;
          hi = 255;
        }
        out.ints[i] = std::clamp(out.ints[i], lo, hi);
      }
    }
  }
  return out;
}

HostTensor HostReshape(const HostTensor& x, std::vector<int64_t> dims) {
  HostTensor out = x;
  out.dims = std::move(dims);
  return out;
}

absl::StatusOr<std::vector<int64_t>> HostInts(const HostTensor& x,
                                              const std::string& what) {
  if (x.is_real()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " must be an integer tensor, found ", ElemTypeName(x.elem_type)));
  }
  return x.ints;
}

}  // namespace hgc::onnx_import
