#include "analysis/op_predicates.h"

#include <cstdint>

#include "ir/attribute.h"
#include "ir/dtype.h"

namespace hgc {

bool IsRelabel(const Op& op) {
  return op.kind_id() == OpKind::kReshape || op.kind_id() == OpKind::kTranspose;
}

bool BoolAttr(const Op& op, absl::string_view name) {
  const Attribute* a = op.FindAttr(name);
  return a != nullptr && a->is_bool() && a->as_bool();
}

bool IsFloatCast(const Op& op) {
  const Attribute* to = op.FindAttr("to");
  return op.kind_id() == OpKind::kCast && to != nullptr && to->is_dtype() &&
         IsFloat(to->as_dtype());
}

bool BroadcastsTo(const TensorType& type, const Shape& shape) {
  if (type.rank() > static_cast<int64_t>(shape.size())) return false;
  for (int64_t i = 1; i <= type.rank(); ++i) {
    int64_t d = type.shape[type.rank() - i];
    if (d != 1 && d != shape[shape.size() - i]) return false;
  }
  return true;
}

}  // namespace hgc
