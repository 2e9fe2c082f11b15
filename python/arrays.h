// Between numpy arrays and hgc's buffers: the numpy dtype of each hgc dtype
// and the conversions the Python module makes at its boundary.
#ifndef HGC_PYTHON_ARRAYS_H_
#define HGC_PYTHON_ARRAYS_H_

#include <string>
#include <vector>

#include "ir/tensor_type.h"
#include "pybind11/numpy.h"

namespace hgc {
namespace python {

// The numpy dtype that holds `dtype` at the module's boundary: float32 for
// f32 and bf16 (numpy has no bf16: bf16 values go in and out as float32,
// rounded to nearest even on the way in), float16, int32, int8, uint8,
// bool.
pybind11::dtype NumpyDtype(DType dtype);

// The numpy shape of `type`.
std::vector<pybind11::ssize_t> NumpyShape(const TensorType& type);

// An array holding `value` as `type`'s numpy dtype, C-contiguous, of
// exactly `type`'s shape: `value` itself when it already is one (no copy;
// `*copied` false), else a converted copy (numpy's 'same_kind' casting:
// float64 to float32 is fine, float to int is not). For bf16 a uint16
// array is taken as bf16 bit patterns (the result is uint16 then). Throws
// hgc.Error naming `what` on a shape or dtype it cannot take.
pybind11::array AsInputArray(pybind11::handle value, const TensorType& type,
                             const std::string& what, bool* copied);

// Checks that `out` can receive a result of `type` in place: a writeable,
// C-contiguous array of its numpy dtype and shape. Throws hgc.Error naming
// `what` otherwise.
pybind11::array CheckOutputArray(pybind11::handle out, const TensorType& type,
                                 const std::string& what);

// bf16 <-> float32 over `count` elements.
void Bf16FromFloat(const float* in, uint16_t* out, int64_t count);
void FloatFromBf16(const uint16_t* in, float* out, int64_t count);

}  // namespace python
}  // namespace hgc

#endif  // HGC_PYTHON_ARRAYS_H_
