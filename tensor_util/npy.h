// numpy .npy files (format versions 1.0, 2.0 and 3.0, either byte order),
// the way hgc takes inputs and writes outputs.
//
// hgc's own dtypes: f32 '<f4', f16 '<f2', s32 '<i4', s8 '|i1', u8 '|u1',
// bool '|b1'. numpy has no bf16: bf16 tensors are written as f32 values.
// A file read for a parameter (ParseNpyAs) may hold any float dtype for a
// float parameter (f64, numpy's default, included) and any integer dtype
// for an integer parameter (int64, torch's and numpy's default, included):
// floats are rounded to the parameter's type once, to nearest even, and
// integers must fit it.
#ifndef HGC_TENSOR_UTIL_NPY_H_
#define HGC_TENSOR_UTIL_NPY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/tensor.h"

namespace hgc {

// Decodes the bytes of a .npy file holding one of hgc's dtypes. `name` is
// used in error messages. Errors (InvalidArgument): bad magic, unsupported
// version, malformed header, a dtype that is not hgc's (with its descr),
// a data size that does not match the shape. Fortran-order arrays are
// converted to row-major and big-endian data to the host's order.
absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes,
                                absl::string_view name);

// Decodes the bytes of a .npy file as the input of parameter `param_name`
// of `type`: float dtypes (f2, f4, f8) for an f32, bf16 or f16 parameter,
// rounded once to nearest even; integer dtypes (i1 to i8, u1 to u8) for an
// s32, s8 or u8 parameter, each value within the type's range; b1 for bool.
// The shape must be `type`'s. Errors name the parameter, its type and the
// file's dtype and shape (or the first value that does not fit).
absl::StatusOr<Tensor> ParseNpyAs(absl::string_view bytes,
                                  absl::string_view name,
                                  const TensorType& type,
                                  absl::string_view param_name);

// The largest .npy file ReadNpy reads: the largest tensor hgc creates
// (Tensor::kDefaultMaxBytes) and room for the header.
inline constexpr int64_t kMaxNpyFileSize = Tensor::kDefaultMaxBytes + (1 << 20);

// Reads and decodes a .npy file. The file must be a regular file of at most
// kMaxNpyFileSize bytes (support/file_io.h: a FIFO or device is refused
// without blocking, a directory is reported as one); NotFound when it does
// not exist.
absl::StatusOr<Tensor> ReadNpy(const std::string& path);

// Reads a .npy file as ReadNpy does (up to twice kMaxNpyFileSize, room for
// f64 data of the largest f32 tensor) and decodes it with ParseNpyAs.
absl::StatusOr<Tensor> ReadNpyAs(const std::string& path,
                                 const TensorType& type,
                                 absl::string_view param_name);

// Encodes `tensor` as a version 1.0 .npy file (bf16 becomes f32).
std::string SerializeNpy(const Tensor& tensor);

// Writes SerializeNpy(tensor) to `path` through a temporary file renamed
// when complete: a failed write leaves no partial file under `path`.
absl::Status WriteNpy(const std::string& path, const Tensor& tensor);

}  // namespace hgc

#endif  // HGC_TENSOR_UTIL_NPY_H_
