#include "ir/tensor_type.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hgc {

absl::StatusOr<int64_t> CheckedNumElements(absl::Span<const int64_t> dims) {
  if (static_cast<int64_t>(dims.size()) > kMaxRank) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor of rank ", dims.size(),
                     " exceeds the maximum rank of ", kMaxRank));
  }
  int64_t count = 1;
  bool has_zero = false;
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("negative dimension ", d, " in shape ",
                       ShapeToString(dims)));
    }
    if (d == 0) has_zero = true;
  }
  if (has_zero) return 0;
  for (int64_t d : dims) {
    // count * d > kMaxElements  <=>  count > kMaxElements / d (d > 0).
    if (count > kMaxElements / d) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor of shape ", ShapeToString(dims),
                       " has more than 2^60 elements"));
    }
    count *= d;
  }
  return count;
}

std::string ShapeToString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

int64_t TensorType::NumElements() const {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return count;
}

std::string TensorType::ToString() const {
  return absl::StrCat(DTypeName(dtype), ShapeToString(shape));
}

}  // namespace hgc
