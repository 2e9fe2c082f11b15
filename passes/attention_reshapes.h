// attention-reshapes: moves the reshapes that regroup the leading dims of
// attention scores (batch x head, or batch x rows) out of the score chain,
// so that attention-fusion sees one block in one shape.
//
// HF CLIP, BLOOM and fairseq compute the scores as a 3-D bmm over B·H and
// view them as [B, H, S, S] around each mask (and back for softmax or for
// P·V); DeepSeek's MLA computes [B, S·H, T] (positions x heads as rows)
// and views it as [B, S, H, T] around its mask. attention-fusion takes
// neither. Such a block, matmul -> (reshape | score op)* -> softmax ->
// (reshape | cast)* -> matmul, is rebuilt with one prefix T (the dims
// before the keys: batch dims, then rows): the one with the fewest dims
// from which every prefix of the chain is a merge of consecutive dims
// (CLIP's [4, 7] <-> [2, 2, 7] gives [2, 2, 7]; an existing shape when one
// fits, so most ops keep theirs):
//   - the reshapes in the chain disappear;
//   - Q (the scores matmul's A) is reshaped to T and its features; K and V
//     (the matmuls' B) to T's batch dims, broadcast (1) over those that
//     come from the old rows (MLA's S), and P·V's result is reshaped back
//     to its old shape; a matmul whose result a score op adds to the
//     scores and nothing else reads (MLA's second product) is rebuilt the
//     same way;
//   - a side operand of a score op (a mask, a bias, a scale) is reshaped to
//     T when it must be (BLOOM's ALiBi [B·H, 1, S] becomes [B, H, 1, S]);
//     a literal constant is re-declared with the new shape.
// Going to T only ever splits an operand's dims, and a split is exact
// whether the operand is full or broadcast over the dim; merging would not
// be (a mask [2, 1, 1, S] has no [B·H] form), which is why T is the finest
// shape and not, say, softmax's. Every rewrite is a relabeling: the same
// elements in the same row-major order are computed by the same ops, so
// results are bit-identical.
//
// A block with no reshape in its chain is rebuilt too when its Q, K or V
// is a reshape merging finer batch dims, or P·V's result is read by one
// that splits them again (diffusers: heads split from [B, S, H·D],
// transposed and merged as [B·H, S, D]): those shapes join the candidates
// for T, and the block is rebuilt when T is finer than its own prefix. The merged views then disappear into reshapes of reshapes, and
// attention-fusion reads the transposed operands in place instead of
// copying each view.
//
// A block is left alone unless every value from the scores matmul to the
// P·V matmul has that single reader, every reshape in the chain keeps the
// last dim (keys) and only regroups the others, softmax is
// over the last axis, and T exists: prefixes [2, 6] and [3, 4] of one
// chain have none. The score ops walked are those attention-fusion takes
// (ScoreChainOperands: casts, unary and binary arithmetic, select).
//
// Preconditions: a verified module. Guarantees: the module verifies, graph
// signatures are unchanged, every value computed is the same; the P·V
// result keeps its name.
#ifndef HGC_PASSES_ATTENTION_RESHAPES_H_
#define HGC_PASSES_ATTENTION_RESHAPES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

// The dims an operand that broadcasts over batch dims `from` takes over
// batch dims `to` (same element count), so that it broadcasts to the same
// elements in the same row-major order; nullopt when no shape does.
// `dims` are right-aligned with `from` (missing leading dims are 1).
// Regrouping a full [8] into [2, 4] gives [2, 4], a broadcast [1] gives
// [1, 1]; merging [2, 1] from [2, 4] into [8] has no answer.
std::optional<std::vector<int64_t>> RegroupBatchDims(
    const std::vector<int64_t>& dims, const std::vector<int64_t>& from,
    const std::vector<int64_t>& to);

// Rewrites the attention blocks of one graph; returns how many.
absl::StatusOr<int> MoveAttentionReshapes(Graph& graph);

class AttentionReshapesPass : public Pass {
 public:
  absl::string_view name() const override { return "AttentionReshapes"; }
  absl::string_view argument() const override { return "attention-reshapes"; }
  absl::string_view description() const override {
    return "move reshapes that regroup batch x head dims (CLIP, BLOOM, "
           "fairseq) or batch x rows (MLA) out of attention score chains";
  }
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace hgc

#endif  // HGC_PASSES_ATTENTION_RESHAPES_H_
