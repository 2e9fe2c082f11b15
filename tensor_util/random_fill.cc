#include "tensor_util/random_fill.h"

#include "support/float16.h"

namespace hgc {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Element i's 64 random bits.
inline uint64_t Bits(uint64_t key, int64_t i) {
  return SplitMix64(key ^ SplitMix64(static_cast<uint64_t>(i)));
}

// Uniform integer in [lo, hi] (the tiny modulo bias is irrelevant here).
inline int64_t UniformInt(uint64_t bits, int64_t lo, int64_t hi) {
  uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  return lo + static_cast<int64_t>((bits >> 11) % span);
}

}  // namespace

uint64_t RandomStreamForName(absl::string_view name) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (char c : name) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

uint64_t RandomStreamForIndex(int64_t index) {
  return SplitMix64(0x1D8E4E27C47D124Full ^ static_cast<uint64_t>(index));
}

void FillRandom(Tensor& tensor, uint64_t seed, uint64_t stream,
                const RandomFillOptions& options) {
  const uint64_t key = SplitMix64(SplitMix64(seed) ^ stream);
  const int64_t n = tensor.num_elements();
  const double lo = options.float_min;
  const double width = options.float_max - options.float_min;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t bits = Bits(key, i);
    switch (tensor.dtype()) {
      case DType::kF32:
      case DType::kBF16:
      case DType::kF16: {
        // 24 random bits: u in [0, 1) exactly representable in f32.
        double u = static_cast<double>(bits >> 40) * (1.0 / 16777216.0);
        float v = static_cast<float>(lo + width * u);
        if (tensor.dtype() == DType::kF32) {
          tensor.mutable_data<float>()[i] = v;
        } else if (tensor.dtype() == DType::kBF16) {
          tensor.mutable_data<uint16_t>()[i] = FloatToBf16(v);
        } else {
          tensor.mutable_data<uint16_t>()[i] = FloatToHalf(v);
        }
        break;
      }
      case DType::kS32:
        tensor.mutable_data<int32_t>()[i] =
            static_cast<int32_t>(UniformInt(bits, -1000, 1000));
        break;
      case DType::kS8:
        tensor.mutable_data<int8_t>()[i] =
            static_cast<int8_t>(UniformInt(bits, -32, 32));
        break;
      case DType::kU8:
        tensor.mutable_data<uint8_t>()[i] =
            static_cast<uint8_t>(UniformInt(bits, 0, 64));
        break;
      case DType::kBool:
        tensor.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(bits >> 63);
        break;
    }
  }
}

absl::StatusOr<Tensor> RandomTensor(const TensorType& type, uint64_t seed,
                                    absl::string_view name,
                                    const RandomFillOptions& options,
                                    int64_t max_bytes) {
  absl::StatusOr<Tensor> t = Tensor::Create(type, max_bytes);
  if (!t.ok()) return t.status();
  FillRandom(*t, seed, RandomStreamForName(name), options);
  return t;
}

absl::StatusOr<Tensor> RandomTensor(const TensorType& type, uint64_t seed,
                                    int64_t index,
                                    const RandomFillOptions& options,
                                    int64_t max_bytes) {
  absl::StatusOr<Tensor> t = Tensor::Create(type, max_bytes);
  if (!t.ok()) return t.status();
  FillRandom(*t, seed, RandomStreamForIndex(index), options);
  return t;
}

}  // namespace hgc
