// Tensors the ONNX importer knows on the host: initializers, Constant
// nodes and the folded results of shape chains. ONNX's int64 has no IR
// dtype, so shape values live here until they become attributes.
#ifndef HGC_FRONTEND_ONNX_HOST_TENSOR_H_
#define HGC_FRONTEND_ONNX_HOST_TENSOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/dtype.h"
#include "ir/tensor.h"
#include "onnx/onnx_pb.h"

namespace hgc::onnx_import {

// A tensor of any ONNX element type hgc reads, held as int64 values (for
// integer and bool types) or doubles (for floating types, each exactly
// the stored value).
struct HostTensor {
  int32_t elem_type = onnx::TensorProto::FLOAT;
  std::vector<int64_t> dims;
  std::vector<int64_t> ints;
  std::vector<double> reals;

  bool is_real() const;
  int64_t size() const;
  double GetDouble(int64_t i) const {
    return is_real() ? reals[i] : static_cast<double>(ints[i]);
  }
};

// The most elements a tensor may have to be decoded as a HostTensor (for
// folding and literal constants); larger ones go straight to a Tensor.
inline constexpr int64_t kMaxHostElements = int64_t{1} << 20;

// Whether `elem_type` is a floating-point ONNX type.
bool IsRealType(int32_t elem_type);
// The IR dtype of an ONNX element type; nullopt for int64 and the types
// hgc has no dtype for.
std::optional<DType> IrDType(int32_t elem_type);
// "FLOAT", "INT64", ... for messages.
std::string ElemTypeName(int32_t elem_type);

// Reads the bytes of external data files, only from regular files inside
// one directory, each file once.
class ExternalData {
 public:
  // `dir` empty: every external tensor is refused.
  explicit ExternalData(std::string dir) : dir_(std::move(dir)) {}
  // `length` bytes at `offset` of `location` (length < 0: to the end).
  absl::StatusOr<std::string> Read(const std::string& location, int64_t offset,
                                   int64_t length);

 private:
  std::string dir_;
  std::map<std::string, std::string> files_;
};

// The raw little-endian bytes, or typed values, of `proto` checked against
// its dims and decoded. Errors say what does not match.
absl::StatusOr<HostTensor> DecodeHost(const onnx::TensorProto& proto,
                                      ExternalData& external);
// `proto` decoded into an IR tensor (its element type must have an IR
// dtype).
absl::StatusOr<Tensor> DecodeTensor(const onnx::TensorProto& proto,
                                    ExternalData& external);
// `host` as an IR tensor of `dtype`.
absl::StatusOr<Tensor> ToTensor(const HostTensor& host, DType dtype);

// Checks what can be checked of `proto` without reading external data:
// a supported element type, valid dims, and as much data as they need.
absl::Status CheckTensorData(const onnx::TensorProto& proto);

// The dims of `proto`, checked (non-negative, at most 2^60 elements).
absl::StatusOr<std::vector<int64_t>> CheckedDims(
    const onnx::TensorProto& proto);

}  // namespace hgc::onnx_import

#endif  // HGC_FRONTEND_ONNX_HOST_TENSOR_H_
