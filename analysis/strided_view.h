// Strided views of a parameter, the arithmetic MatchAttention uses to see
// Q, K, V and the output through reshapes and transposes: a view is an
// offset and one stride per dim, and a reshape keeps a view when numpy's
// no-copy reshape rule allows it.
#ifndef HGC_ANALYSIS_STRIDED_VIEW_H_
#define HGC_ANALYSIS_STRIDED_VIEW_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace hgc {
namespace strided_view {

// A value seen as elements of a parameter: element x of the value is element
// offset + sum(x_i * strides[i]) of `param`.
struct View {
  const Value* param = nullptr;
  int64_t offset = 0;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

// `v` itself, row-major.
View Contiguous(const Value* v);

// `view` read in row-major order as `shape` (a reshape), when strides can
// express it (numpy's no-copy reshape rule); nullopt otherwise. Both shapes
// have the same (non-zero) number of elements.
std::optional<View> Reshape(const View& view, const std::vector<int64_t>& shape);

// The single stride that steps through dims [lo, hi) of (sizes, strides)
// flattened row-major, or nullopt when there is none. Dims of size 1 are
// skipped; an all-broadcast range (stride 0) merges to stride 0.
// The view of `relabel`'s result (a reshape or transpose) given `operand`,
// the view of its operand; nullopt when strides cannot express it.
std::optional<View> Forward(const View& operand, const Op& relabel);

// The view of `relabel`'s operand given `result`, the view of its result
// inside some memory (the output side: P·V seen through what follows it);
// nullopt when strides cannot express it.
std::optional<View> Backward(const View& result, const Op& relabel);

std::optional<int64_t> MergeDims(const std::vector<int64_t>& sizes,
                                 const std::vector<int64_t>& strides,
                                 size_t lo, size_t hi);

}  // namespace strided_view
}  // namespace hgc

#endif  // HGC_ANALYSIS_STRIDED_VIEW_H_
