// Shapes and tensor types.
#ifndef HGC_IR_TENSOR_TYPE_H_
#define HGC_IR_TENSOR_TYPE_H_

#include <cstdint>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/dtype.h"

namespace hgc {

// Dimensions of a tensor; rank 0 is a scalar.
using Shape = absl::InlinedVector<int64_t, 6>;

// The largest element count a tensor may have (design.md: 2^60), so that no
// byte-size computation in hgc can overflow int64.
inline constexpr int64_t kMaxElements = int64_t{1} << 60;

// The most dimensions a tensor may have. Without a bound, one reshape to a
// huge rank followed by many ops costs rank x ops (every op copies and
// infers its operand types), which a few MB of input make quadratic.
inline constexpr int64_t kMaxRank = 64;

// The product of `dims`, or InvalidArgument when there are more than
// kMaxRank dimensions, a dimension is negative or the product exceeds
// kMaxElements. Never overflows.
absl::StatusOr<int64_t> CheckedNumElements(absl::Span<const int64_t> dims);

// "[128, 512]"; "[]" for a scalar.
std::string ShapeToString(absl::Span<const int64_t> dims);

// A value-semantic tensor type: dtype and shape.
struct TensorType {
  DType dtype = DType::kF32;
  Shape shape;

  TensorType() = default;
  // A scalar (rank 0) of `dtype`.
  explicit TensorType(DType dtype) : dtype(dtype) {}
  TensorType(DType dtype, Shape shape) : dtype(dtype), shape(std::move(shape)) {}

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  // Element count; valid types (all built through the verifier) never
  // exceed kMaxElements.
  int64_t NumElements() const;
  int64_t SizeInBytes() const { return NumElements() * DTypeSize(dtype); }

  // "f32[128, 512]".
  std::string ToString() const;

  friend bool operator==(const TensorType& a, const TensorType& b) {
    return a.dtype == b.dtype && a.shape == b.shape;
  }
  friend bool operator!=(const TensorType& a, const TensorType& b) {
    return !(a == b);
  }
};

}  // namespace hgc

#endif  // HGC_IR_TENSOR_TYPE_H_
