#include "ir/ops/op_helpers.h"

namespace hgc {

absl::StatusOr<int64_t> NormalizeAxis(absl::string_view op, int64_t axis,
                                      int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return OpError(op, absl::StrCat("axis ", axis, " is out of range for rank ",
                                    rank));
  }
  return axis < 0 ? axis + rank : axis;
}

absl::Status RequireSameDType(absl::string_view op, const InferContext& ctx,
                              int first) {
  for (int i = first + 1; i < ctx.num_operands(); ++i) {
    if (ctx.operand(i).dtype != ctx.operand(first).dtype) {
      return OpError(op, absl::StrCat("operands must have the same dtype, found ",
                                      ctx.operand(first).ToString(), " and ",
                                      ctx.operand(i).ToString()));
    }
  }
  return absl::OkStatus();
}

}  // namespace hgc
