// numpy .npy files (format versions 1.0, 2.0 and 3.0, little-endian), the
// way hgc takes inputs and writes outputs.
//
// dtypes: f32 '<f4', f16 '<f2', s32 '<i4', s8 '|i1', u8 '|u1', bool '|b1'.
// numpy has no bf16: bf16 tensors are written as f32 values, and an f32 file
// given for a bf16 parameter is rounded to bf16 (ConformToType).
#ifndef HGC_SUPPORT_NPY_H_
#define HGC_SUPPORT_NPY_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/tensor.h"

namespace hgc {

// Decodes the bytes of a .npy file. `name` is used in error messages.
// Errors (InvalidArgument): bad magic, unsupported version, malformed
// header, unsupported dtype (with its descr), big-endian data, a data size
// that does not match the shape. Fortran-order arrays are converted to
// row-major.
absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes,
                                absl::string_view name);

// The largest .npy file ReadNpy reads: the largest tensor hgc creates
// (Tensor::kDefaultMaxBytes) and room for the header.
inline constexpr int64_t kMaxNpyFileSize = Tensor::kDefaultMaxBytes + (1 << 20);

// Reads and decodes a .npy file. The file must be a regular file of at most
// kMaxNpyFileSize bytes (support/file_io.h: a FIFO or device is refused
// without blocking, a directory is reported as one); NotFound when it does
// not exist.
absl::StatusOr<Tensor> ReadNpy(const std::string& path);

// Encodes `tensor` as a version 1.0 .npy file (bf16 becomes f32).
std::string SerializeNpy(const Tensor& tensor);

// Writes SerializeNpy(tensor) to `path` through a temporary file renamed
// when complete: a failed write leaves no partial file under `path`.
absl::Status WriteNpy(const std::string& path, const Tensor& tensor);

// Checks that `tensor` (read from a file for the parameter `param_name`) has
// exactly `type`, except that f32 data for a bf16 type is rounded to bf16.
// The error names the parameter, the expected and the found type.
absl::StatusOr<Tensor> ConformToType(const Tensor& tensor,
                                     const TensorType& type,
                                     absl::string_view param_name);

}  // namespace hgc

#endif  // HGC_SUPPORT_NPY_H_
