#include "ir/tensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "support/aligned_buffer.h"
#include "support/float16.h"

namespace hgc {
namespace {

// Round half to even, then saturate to [lo, hi]; NaN gives 0.
int64_t RoundSaturate(double v, double lo, double hi) {
  if (std::isnan(v)) return 0;
  if (v <= lo) return static_cast<int64_t>(lo);
  if (v >= hi) return static_cast<int64_t>(hi);
  return static_cast<int64_t>(std::nearbyint(v));  // default mode: to even
}

}  // namespace

absl::StatusOr<Tensor> Tensor::Create(TensorType type, int64_t max_bytes) {
  absl::StatusOr<int64_t> count = CheckedNumElements(type.shape);
  if (!count.ok()) return count.status();
  int64_t bytes = *count * DTypeSize(type.dtype);
  if (bytes > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("tensor ", type.ToString(), " needs ", bytes,
                     " bytes, more than the limit of ", max_bytes));
  }
  std::shared_ptr<uint8_t> memory = AllocateZeroedBuffer(bytes);
  if (memory == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory allocating ", type.ToString()));
  }
  Tensor t;
  t.type_ = std::move(type);
  t.num_elements_ = *count;
  t.data_ = std::move(memory);
  return t;
}

double Tensor::GetDouble(int64_t i) const {
  switch (dtype()) {
    case DType::kF32:
      return data<float>()[i];
    case DType::kBF16:
      return Bf16ToFloat(data<uint16_t>()[i]);
    case DType::kF16:
      return HalfToFloat(data<uint16_t>()[i]);
    case DType::kS32:
      return data<int32_t>()[i];
    case DType::kS8:
      return data<int8_t>()[i];
    case DType::kU8:
      return data<uint8_t>()[i];
    case DType::kBool:
      return data<uint8_t>()[i] != 0 ? 1.0 : 0.0;
  }
  return 0;
}

void Tensor::SetDouble(int64_t i, double v) {
  switch (dtype()) {
    case DType::kF32:
      mutable_data<float>()[i] = static_cast<float>(v);
      break;
    case DType::kBF16:
      mutable_data<uint16_t>()[i] = DoubleToBf16(v);
      break;
    case DType::kF16:
      mutable_data<uint16_t>()[i] = DoubleToHalf(v);
      break;
    case DType::kS32:
      mutable_data<int32_t>()[i] = static_cast<int32_t>(
          RoundSaturate(v, std::numeric_limits<int32_t>::min(),
                        std::numeric_limits<int32_t>::max()));
      break;
    case DType::kS8:
      mutable_data<int8_t>()[i] =
          static_cast<int8_t>(RoundSaturate(v, -128, 127));
      break;
    case DType::kU8:
      mutable_data<uint8_t>()[i] =
          static_cast<uint8_t>(RoundSaturate(v, 0, 255));
      break;
    case DType::kBool:
      mutable_data<uint8_t>()[i] = (v != 0) ? 1 : 0;
      break;
  }
}

Tensor Tensor::Clone() const {
  if (!data_) return *this;
  Tensor copy = *Create(type_, std::numeric_limits<int64_t>::max());
  std::memcpy(copy.mutable_raw(), raw(), size_in_bytes());
  return copy;
}

Shape RowMajorStrides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t stride = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

}  // namespace hgc
