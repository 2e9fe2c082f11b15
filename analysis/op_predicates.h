// Small questions about one op or type that the attention analyses ask in
// the same way (what the match finds and what its checks accept must agree).
#ifndef HGC_ANALYSIS_OP_PREDICATES_H_
#define HGC_ANALYSIS_OP_PREDICATES_H_

#include "absl/strings/string_view.h"
#include "ir/graph.h"
#include "ir/tensor_type.h"

namespace hgc {

// Whether `op` is a reshape or a transpose: the same elements, relabelled.
bool IsRelabel(const Op& op);

// The bool attribute `name` of `op`; false when absent or not a bool.
bool BoolAttr(const Op& op, absl::string_view name);

// Whether `op` is a cast to a float dtype (f32, bf16 or f16).
bool IsFloatCast(const Op& op);

// Whether `type` broadcasts to `shape` without growing it.
bool BroadcastsTo(const TensorType& type, const Shape& shape);

}  // namespace hgc

#endif  // HGC_ANALYSIS_OP_PREDICATES_H_
