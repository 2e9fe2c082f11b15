// Tensor: a typed, 64-byte-aligned buffer of dense row-major data. Used for
// graph inputs and outputs, constants and the reference interpreter. Copies
// share the buffer (cheap); Clone() makes an independent copy.
#ifndef HGC_IR_TENSOR_H_
#define HGC_IR_TENSOR_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "ir/tensor_type.h"

namespace hgc {

class Tensor {
 public:
  Tensor() = default;

  // A zero-filled tensor of `type`. Fails (ResourceExhausted) when the size
  // exceeds `max_bytes` or memory cannot be allocated, never aborts.
  static absl::StatusOr<Tensor> Create(TensorType type,
                                       int64_t max_bytes = kDefaultMaxBytes);

  // The default cap on one tensor's size: 16 GiB.
  static constexpr int64_t kDefaultMaxBytes = int64_t{16} << 30;

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int64_t num_elements() const { return num_elements_; }
  int64_t size_in_bytes() const { return num_elements_ * DTypeSize(dtype()); }

  const uint8_t* raw() const { return data_.get(); }
  uint8_t* mutable_raw() { return data_.get(); }
  // Typed views; T must match the storage of dtype(): float for f32,
  // uint16_t for bf16/f16 (bit patterns), int32_t, int8_t, uint8_t, and
  // uint8_t (0/1) for bool.
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(data_.get()); }
  template <typename T>
  T* mutable_data() { return reinterpret_cast<T*>(data_.get()); }

  // Element i as a double (bf16/f16 decoded, bool as 0/1).
  double GetDouble(int64_t i) const;
  // Stores `v` into element i, rounding/saturating as `cast` does, once
  // (floats round to nearest even, bf16 / f16 directly from the double,
  // integers round half to even and saturate, NaN to an integer gives 0,
  // bool is v != 0). The reference interpreter stores every result so.
  void SetDouble(int64_t i, double v);

  // An independent copy of the data.
  Tensor Clone() const;

 private:
  TensorType type_;
  int64_t num_elements_ = 0;
  std::shared_ptr<uint8_t> data_;
};

// Row-major strides (in elements) of `shape`.
Shape RowMajorStrides(const Shape& shape);

}  // namespace hgc

#endif  // HGC_IR_TENSOR_H_
