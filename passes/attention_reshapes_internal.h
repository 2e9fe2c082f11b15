// Internal to attention-reshapes (passes/attention_reshapes.h): the dims
// helpers and the attention block shared by the two files that split the
// pass. Not a public API: only attention_reshapes.cc and
// attention_reshapes_rebuild.cc include this header.
//
//   attention_reshapes.cc          finding a block (BlockFinder), the prefix
//                                  to rebuild it in (TargetBatch) and the
//                                  pass's sweeps
//   attention_reshapes_rebuild.cc  the operands' shapes in that prefix
//                                  (RegroupBatchDims) and the rebuild
#ifndef HGC_PASSES_ATTENTION_RESHAPES_INTERNAL_H_
#define HGC_PASSES_ATTENTION_RESHAPES_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/graph_utils.h"
#include "ir/graph.h"
#include "ir/tensor_type.h"

namespace hgc {
namespace attention_reshapes_internal {

using Dims = std::vector<int64_t>;

// All dims but the last two (the batch dims of a matmul operand or of the
// scores).
inline Dims BatchDims(const Shape& shape) {
  return Dims(shape.begin(), shape.end() - std::min<size_t>(2, shape.size()));
}

// All dims but the last (batch dims and rows of a matmul result or of the
// scores: what a regroup may change, keys staying the last dim).
inline Dims PrefixDims(const Shape& shape) {
  return Dims(shape.begin(), shape.end() - std::min<size_t>(1, shape.size()));
}

// The last two dims.
inline Dims MatrixDims(const Shape& shape) {
  return Dims(shape.end() - std::min<size_t>(2, shape.size()), shape.end());
}

// `a` followed by `b`.
inline Dims Concat(Dims a, const Dims& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The product of `dims` (1 for none).
inline int64_t Product(const Dims& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= d;
  return p;
}

// One attention block: the ops from the scores matmul to the P·V matmul.
struct Block {
  // The scores matmul first (operand -1), each op with the operand that
  // reads the previous one's result.
  std::vector<ChainLink> links;
  bool has_reshape = false;
  // Finer batch shapes the block's operands come from and its result goes
  // to: Q, K or V as reshapes merging batch dims ([2, 4, S, D] viewed as
  // [8, S, D], diffusers' 3-D attention), P·V's result read by the reshape
  // back. Rebuilding the block in such a shape lets attention-fusion read
  // the operands in place instead of copying each merged view.
  std::vector<Dims> hints;
  // Matmuls whose result a score op adds to the scores and nothing else
  // reads (MLA's q_nope·k_nopeᵀ + q_pe·k_peᵀ): rebuilt with the block.
  std::vector<const Op*> side_matmuls;
};

// Rebuilds `block` with prefix `target` (its batch dims, then rows),
// inserting before its P·V, when every operand the new shape needs
// regroups exactly; false, changing nothing, when one does not.
absl::StatusOr<bool> RebuildIfFeasible(Graph& graph, const Block& block,
                                       Dims target);

}  // namespace attention_reshapes_internal
}  // namespace hgc

#endif  // HGC_PASSES_ATTENTION_RESHAPES_INTERNAL_H_
