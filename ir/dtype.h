// Element types of hgc tensors.
#ifndef HGC_IR_DTYPE_H_
#define HGC_IR_DTYPE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace hgc {

enum class DType : uint8_t { kF32, kBF16, kF16, kS32, kS8, kU8, kBool };

// All dtypes, in declaration order (for tests and tables).
inline constexpr DType kAllDTypes[] = {DType::kF32, DType::kBF16, DType::kF16,
                                       DType::kS32, DType::kS8,   DType::kU8,
                                       DType::kBool};

// The spelling used in `.graph` files: "f32", "bf16", ...
absl::string_view DTypeName(DType dtype);

// Parses a spelling produced by DTypeName; nullopt for anything else.
std::optional<DType> ParseDType(absl::string_view name);

// Bytes per element in memory (bool takes one byte).
int64_t DTypeSize(DType dtype);

// f32, bf16, f16.
bool IsFloat(DType dtype);
// s32, s8, u8 (bool is neither float nor integer).
bool IsInteger(DType dtype);

}  // namespace hgc

#endif  // HGC_IR_DTYPE_H_
