// Arithmetic on host tensors: what the importer folds (int64 shape chains
// and small f32 constants), with ONNX's semantics.
#ifndef HGC_FRONTEND_ONNX_HOST_OPS_H_
#define HGC_FRONTEND_ONNX_HOST_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/onnx/host_tensor.h"

namespace hgc::onnx_import {

// The numpy broadcast of `a` and `b`; error when they do not broadcast.
absl::StatusOr<std::vector<int64_t>> BroadcastDims(
    const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// Whether a binary op of these operands folds on the host: both integer
// (or bool), or both FLOAT, and the result small.
bool FoldsOnHost(const HostTensor& a, const HostTensor& b);

// `op` (Add, Sub, Mul, Div, Max, Min, Equal, Greater, GreaterOrEqual, Less,
// LessOrEqual) of `a` and `b`, broadcast. Integer Div truncates; FLOAT math
// is done in f32, as the graph would.
absl::StatusOr<HostTensor> HostBinary(const std::string& op,
                                      const HostTensor& a, const HostTensor& b);
// Where(cond, a, b), broadcast.
absl::StatusOr<HostTensor> HostWhere(const HostTensor& cond,
                                     const HostTensor& a, const HostTensor& b);
// Cast to the ONNX element type `to`: floats to integers truncate toward
// zero (NaN gives 0) and saturate.
absl::StatusOr<HostTensor> HostCast(const HostTensor& x, int32_t to);
// `x` with new dims of the same element count.
HostTensor HostReshape(const HostTensor& x, std::vector<int64_t> dims);

// An empty tensor of `elem_type` with `dims` (zero-filled).
HostTensor MakeHost(int32_t elem_type, std::vector<int64_t> dims);
// Element i, which must be integral, as an int64 (for shapes, axes,
// indices). Error when `x` is a float tensor.
absl::StatusOr<std::vector<int64_t>> HostInts(const HostTensor& x,
                                              const std::string& what);

}  // namespace hgc::onnx_import

#endif  // HGC_FRONTEND_ONNX_HOST_OPS_H_
