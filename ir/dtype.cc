#include "ir/dtype.h"

namespace hgc {

absl::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kBF16: return "bf16";
    case DType::kF16: return "f16";
    case DType::kS32: return "s32";
    case DType::kS8: return "s8";
    case DType::kU8: return "u8";
    case DType::kBool: return "bool";
  }
  return "?";
}

std::optional<DType> ParseDType(absl::string_view name) {
  for (DType dtype : kAllDTypes) {
    if (DTypeName(dtype) == name) return dtype;
  }
  return std::nullopt;
}

int64_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kS32: return 4;
    case DType::kBF16:
    case DType::kF16: return 2;
    case DType::kS8:
    case DType::kU8:
    case DType::kBool: return 1;
  }
  return 1;
}

bool IsFloat(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kBF16 || dtype == DType::kF16;
}

bool IsInteger(DType dtype) {
  return dtype == DType::kS32 || dtype == DType::kS8 || dtype == DType::kU8;
}

}  // namespace hgc
