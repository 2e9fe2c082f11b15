// The attention-fusion pass's AttentionMatch, carried on its fusion op as
// attributes, so that codegen lowers what the pass decided instead of
// matching the body again. The attributes name body parameters and body
// ops by index (their order survives printing, parsing and cloning):
//
//   match_dims  = [batch, heads, group, seq_q, seq_kv, head_dim, head_dim_v]
//   match_q     = [param, offset, stride_b, stride_h, stride_i, stride_d]
//   match_k     = [param, offset, stride_b, stride_g, stride_j, stride_d]
//   match_v     = [param, offset, stride_b, stride_g, stride_j, stride_e]
//   match_out   = [offset, stride_b, stride_h, stride_i, stride_e]
//   match_ops   = [qk, softmax, pv]
//   match_q_ops, match_q_quant, match_k_quant, match_v_quant,
//   match_score_ops, match_prob_ops, match_out_ops
//               = the ops of each role in order (absent: none)
//
// docs/ops.md describes them. A `.graph` file may carry any values, so
// decoding checks them against the body: every rule MatchAttention applies
// to the roles it finds holds for the roles named, and the offsets and
// strides are those the body's reshapes and transposes give.
#ifndef HGC_ANALYSIS_ATTENTION_ATTRS_H_
#define HGC_ANALYSIS_ATTENTION_ATTRS_H_

#include "absl/status/statusor.h"
#include "analysis/attention_match.h"
#include "ir/attribute.h"
#include "ir/graph.h"

namespace hgc {

// Whether `attrs` holds any match_* attribute.
bool HasAttentionMatchAttrs(const AttrMap& attrs);

// `m` (a match of `body`) as match_* attributes; empty role lists are left
// out.
AttrMap EncodeAttentionMatch(const AttentionMatch& m, const Graph& body);

// The match `attrs` describe over `body`, or InvalidArgument saying which
// attribute is missing, malformed or inconsistent with the body.
absl::StatusOr<AttentionMatch> DecodeAttentionMatch(const AttrMap& attrs,
                                                    const Graph& body);

}  // namespace hgc

#endif  // HGC_ANALYSIS_ATTENTION_ATTRS_H_
