// Recognition of attention blocks: softmax(f(Q·Kᵀ))·V in the forms
// frameworks export.
//
// MatchAttention analyses a graph that holds one attention block (the body
// of a `fusion {kind = "attention"}` op, made by the attention-fusion pass)
// and describes it in logical coordinates, so that a lowering can run it as
// one flash-style kernel without looking at how the graph spelled it:
//
//   Q(b, h, i, d)   query i of head h, feature d       i < seq_q,  d < head_dim
//   K(b, g, j, d)   key j of kv head g = h / group     j < seq_kv
//   V(b, g, j, e)   value feature e                    e < head_dim_v
//   S(b, h, i, j) = sum_d Q(b, h, i, d) * K(b, g, j, d)
//   P = softmax over j of score_ops(S)    (score_ops: scale, mask, cap, casts)
//   O(b, h, i, e) = sum_j prob_ops(P)(b, h, i, j) * V(b, g, j, e)
//
// Q, K and V are read in place through element strides over a body
// parameter (transposes, reshapes, head splits of a fused QKV projection
// and K given already transposed are all just strides and an offset), and
// O is written through strides into the body's result (a trailing
// transpose back to [B, S, H, D] and a reshape to [B, S, H·D] are strides
// too). A u8 or s8 parameter is read through its per-tensor dequantize
// (the QDQ form int8 exports write), which is elementwise and so commutes
// with those strides.
#ifndef HGC_ANALYSIS_ATTENTION_MATCH_H_
#define HGC_ANALYSIS_ATTENTION_MATCH_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"

namespace hgc {

// Where a logical 4-D tensor lives: element (x0, x1, x2, x3) is element
// offset + sum(x_i * strides[i]) of `param`, read as param's dtype. A dim
// the operand is broadcast over (K and V over the batch in MQA, say) and a
// dim of extent 1 have stride 0.
struct StridedOperand {
  const Value* param = nullptr;  // a parameter of the matched graph
  int64_t offset = 0;
  std::array<int64_t, 4> strides = {0, 0, 0, 0};
};

struct AttentionMatch {
  int64_t batch = 1;
  int64_t heads = 1;     // query heads
  int64_t group = 1;     // query heads per kv head (GQA / MQA; 1 for MHA)
  int64_t seq_q = 1;
  int64_t seq_kv = 1;
  int64_t head_dim = 1;  // d: Q and K features
  int64_t head_dim_v = 1;  // e: V and O features

  // Q(b, h, i, d), K(b, g, j, d), V(b, g, j, e).
  StridedOperand q, k, v;
  // Elementwise ops applied to Q before the scores matmul (a scale by
  // `mul` / `div` with a one-element constant or parameter), in order;
  // empty when none.
  // Their operand chain starts at the value q describes (reshapes and
  // transposes may stand between them: a scalar scale commutes with both).
  // K takes no ops: attention-k-scale moves a literal scale of K onto the
  // scores beforehand, and any other op on K stays outside the block, which
  // reads its result.
  std::vector<const Op*> q_ops;
  // The QDQ form: the ops on Q's, K's and V's paths from their parameter
  // (u8 or s8) through which the matmul reads them dequantized: a
  // per-tensor dequantize, then any (quantize, dequantize) pairs with the
  // same scale, zero point and type (ONNX Runtime's Q/DQ around a
  // transpose), which change nothing. Empty: the operand is read as stored
  // (f32, bf16 or f16). DequantizeOf gives their scale and zero point.
  std::vector<const Op*> q_quant, k_quant, v_quant;

  // The scores matmul. Its result S has a shape whose
  // row-major flattening over all dims but the last is the row index
  // (b * heads + h) * seq_q + i, and whose last dim is j.
  const Op* qk = nullptr;
  // Elementwise ops from S to softmax's operand, in graph order: scales
  // (a scalar or a tensor, constant or given at run time), masks (add, sub,
  // select, max, min), unary ops such as tanh soft-capping, casts. Their
  // other operands are scalar literal constants or body parameters that
  // broadcast to scores_shape.
  std::vector<const Op*> score_ops;
  const Op* softmax = nullptr;  // over the last axis
  // Elementwise ops from softmax's result to the P·V matmul's A operand
  // (casts to and from bf16 / f16; one per-tensor quantize to u8 or s8
  // directly followed by a dequantize with its scale and zero point), in
  // graph order.
  std::vector<const Op*> prob_ops;
  const Op* pv = nullptr;
  // Elementwise ops after P·V in graph order (casts to f32, bf16 or f16,
  // then at most one per-tensor quantize to u8 or s8), then strides:
  // O(b, h, i, e) is element offset + sum(x_i * out_strides[i]) of the
  // graph's result.
  std::vector<const Op*> out_ops;
  int64_t out_offset = 0;
  std::array<int64_t, 4> out_strides = {0, 0, 0, 0};
  const Value* result = nullptr;  // the graph's (single) result
};

// The scale and zero point of an operand's quantization ops (`quant`
// non-empty: their first op, a per-tensor dequantize).
struct OperandQuant {
  float scale = 1;
  int64_t zero_point = 0;
};
OperandQuant DequantizeOf(const std::vector<const Op*>& quant);

// Describes `graph` (one result; every op part of the attention block) or
// says, as Unimplemented, what does not fit. Shape ops that only relabel
// (reshape, transpose) are folded into strides wherever they appear
// between a parameter and Q/K/V, and between P·V and the result; the
// quantization ops (q_quant, k_quant, v_quant) are stepped over alike.
absl::StatusOr<AttentionMatch> MatchAttention(const Graph& graph);

// Which operands of `op` may carry the scores when `op` stands between the
// scores matmul and softmax: {0} for a cast or a unary op, {0, 1} for
// binary arithmetic (not a comparison), {1, 2} for select, {0} for a
// per-tensor quantize or dequantize, none for any other op.
// attention-fusion and attention-reshapes walk score chains by it;
// MatchAttention takes the same ops.
std::vector<int> ScoreChainOperands(const Op& op);

}  // namespace hgc

#endif  // HGC_ANALYSIS_ATTENTION_MATCH_H_
