#include "python/arrays.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "python/errors.h"
#include "support/float16.h"

namespace hgc {
namespace python {

namespace py = pybind11;

py::dtype NumpyDtype(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kBF16:
      return py::dtype::of<float>();
    case DType::kF16:
      return py::dtype("float16");
    case DType::kS32:
      return py::dtype::of<int32_t>();
    case DType::kS8:
      return py::dtype::of<int8_t>();
    case DType::kU8:
      return py::dtype::of<uint8_t>();
    case DType::kBool:
      return py::dtype::of<bool>();
  }
  throw Error("unknown dtype");
}

std::vector<py::ssize_t> NumpyShape(const TensorType& type) {
  return std::vector<py::ssize_t>(type.shape.begin(), type.shape.end());
}

namespace {

std::string DtypeName(const py::dtype& d) {
  return py::str(py::object(d)).cast<std::string>();
}

std::string ShapeText(const py::array& a) {
  std::vector<py::ssize_t> dims(a.shape(), a.shape() + a.ndim());
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

bool HasShape(const py::array& a, const TensorType& type) {
  if (a.ndim() != static_cast<py::ssize_t>(type.shape.size())) return false;
  for (size_t i = 0; i < type.shape.size(); ++i) {
    if (a.shape(i) != type.shape[i]) return false;
  }
  return true;
}

}  // namespace

py::array AsInputArray(py::handle value, const TensorType& type,
                       const std::string& what, bool* copied) {
  py::module_ numpy = py::module_::import("numpy");
  py::array a = py::isinstance<py::array>(value)
                    ? py::reinterpret_borrow<py::array>(value)
                    : py::array(numpy.attr("asarray")(value));
  // bf16 takes float32 values, or uint16 arrays as bf16 bit patterns (as
  // onnx.numpy_helper holds bf16 data).
  const py::dtype want = type.dtype == DType::kBF16 &&
                                 a.dtype().equal(py::dtype::of<uint16_t>())
                             ? py::dtype::of<uint16_t>()
                             : NumpyDtype(type.dtype);
  if (!HasShape(a, type)) {
    throw Error(absl::StrCat(what, ": expected shape ",
                             type.ToString(), ", got ",
                             DtypeName(a.dtype()), ShapeText(a)));
  }
  const bool same_dtype = a.dtype().equal(want);
  if (!same_dtype &&
      !numpy.attr("can_cast")(a.dtype(), want, "same_kind").cast<bool>()) {
    throw Error(absl::StrCat(what, ": cannot take ",
                             DtypeName(a.dtype()), " data for ",
                             type.ToString(), " (expected ",
                             DtypeName(want), ")"));
  }
  *copied = !same_dtype || !(a.flags() & py::array::c_style);
  if (!*copied) return a;
  return numpy.attr("ascontiguousarray")(a, want);
}

py::array CheckOutputArray(py::handle out, const TensorType& type,
                           const std::string& what) {
  if (!py::isinstance<py::array>(out)) {
    throw Error(absl::StrCat(what, ": out= takes numpy arrays"));
  }
  py::array a = py::reinterpret_borrow<py::array>(out);
  const py::dtype want = NumpyDtype(type.dtype);
  if (!a.dtype().equal(want) || !HasShape(a, type) ||
      !(a.flags() & py::array::c_style) || !a.writeable()) {
    throw Error(absl::StrCat(
        what, ": out= needs a writeable C-contiguous ",
        DtypeName(want), " array of shape ", type.ToString(),
        ", got ", DtypeName(a.dtype()), ShapeText(a)));
  }
  return a;
}

void Bf16FromFloat(const float* in, uint16_t* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = FloatToBf16(in[i]);
}

void FloatFromBf16(const uint16_t* in, float* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = Bf16ToFloat(in[i]);
}

}  // namespace python
}  // namespace hgc
