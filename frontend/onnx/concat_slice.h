// Concat, Slice and Split: their parameters, read once for both ways of
// converting them (folded on host values in shape_folding.cc, or the IR's
// concat and slice ops for tensors computed at run time).
#ifndef HGC_FRONTEND_ONNX_CONCAT_SLICE_H_
#define HGC_FRONTEND_ONNX_CONCAT_SLICE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/onnx/import_context.h"

namespace hgc::onnx_import {

// A Slice node's parameters, one entry per sliced axis: axes in [0, rank),
// none repeated; steps nonzero (1 by default); starts adjusted where ONNX's
// clamping differs from numpy's (below), so that numpy's basic slicing of
// these values, which both the fold and the IR's slice op do, is ONNX's.
struct SliceArgs {
  std::vector<int64_t> starts;
  std::vector<int64_t> ends;
  std::vector<int64_t> axes;
  std::vector<int64_t> steps;
};

// Reads starts, ends, axes and steps (attributes before opset 10, inputs
// from 10 on) for an input of dims `dims`. The inputs must be known at
// import: the slice op takes them as attributes.
absl::StatusOr<SliceArgs> ReadSliceArgs(NodeContext& n,
                                        const std::vector<int64_t>& dims);

// The sizes Split cuts a dimension of `size` into, one per output: given
// (an attribute before opset 13, an input from 13), else equal parts (from
// opset 18 the last may be smaller; `num_outputs` must match the outputs).
absl::StatusOr<std::vector<int64_t>> SplitSizes(NodeContext& n, int64_t size);

// Whether inputs [first, last] are all known at import and hold at most
// kMaxHostElements elements together: then the op folds on the host.
bool FoldsAtImport(NodeContext& n, int first, int last);

// The IR forms, for inputs computed at run time (or too large to fold).
// Concat joins every input along the `axis` attribute.
absl::Status ConcatToIr(NodeContext& n);
absl::Status SliceToIr(NodeContext& n, const SliceArgs& args);
// One slice of input 0 along `axis` per used output.
absl::Status SplitToIr(NodeContext& n, int64_t axis,
                       const std::vector<int64_t>& sizes);

}  // namespace hgc::onnx_import

#endif  // HGC_FRONTEND_ONNX_CONCAT_SLICE_H_
