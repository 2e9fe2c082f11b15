// Seeded random tensor contents for `hgc --run --check` and tests.
//
// Deterministic: the same (seed, stream, type) gives the same bits on every
// machine and every run, independent of thread count or of other tensors
// (each element is a pure function of seed, stream and element index, via
// SplitMix64). Streams are named by the value (its name, without '%') or by
// its parameter index, so adding a parameter does not reshuffle the others
// when names are used.
//
// Distributions, by dtype:
//   f32, bf16, f16  uniform on a 2^-24 grid in [float_min, float_max),
//                   default [-1, 1); bf16/f16 are stored rounded (to
//                   nearest even) from that f32 value, so the tensor holds
//                   exactly representable values. The default range is the
//                   same for every op: graphs taking log/sqrt/rsqrt of an
//                   input see NaN for the negative half unless the range is
//                   overridden (both sides of a check compute the same NaN).
//   s8              uniform integers in [-32, 32]
//   u8              uniform integers in [0, 64]
//   s32             uniform integers in [-1000, 1000]
//   bool            0 or 1 with equal probability
// The integer ranges are small on purpose: an int8 matmul with K = 4096
// stays far from s32 overflow, and integer add/mul rarely wrap.
#ifndef HGC_TENSOR_UTIL_RANDOM_FILL_H_
#define HGC_TENSOR_UTIL_RANDOM_FILL_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/tensor.h"

namespace hgc {

struct RandomFillOptions {
  // Range for floating-point dtypes: [float_min, float_max).
  double float_min = -1.0;
  double float_max = 1.0;
};

// The stream id of a value name (stable 64-bit FNV-1a, not absl::Hash, which
// is randomized per process).
uint64_t RandomStreamForName(absl::string_view name);
// The stream id of parameter `index` (distinct from every name's stream in
// practice: a different hash domain).
uint64_t RandomStreamForIndex(int64_t index);

// Overwrites every element of `tensor` with seeded random values.
void FillRandom(Tensor& tensor, uint64_t seed, uint64_t stream,
                const RandomFillOptions& options = {});

// A new tensor of `type` filled by FillRandom; ResourceExhausted above
// `max_bytes`.
absl::StatusOr<Tensor> RandomTensor(const TensorType& type, uint64_t seed,
                                    absl::string_view name,
                                    const RandomFillOptions& options = {},
                                    int64_t max_bytes = Tensor::kDefaultMaxBytes);
absl::StatusOr<Tensor> RandomTensor(const TensorType& type, uint64_t seed,
                                    int64_t index,
                                    const RandomFillOptions& options = {},
                                    int64_t max_bytes = Tensor::kDefaultMaxBytes);

}  // namespace hgc

#endif  // HGC_TENSOR_UTIL_RANDOM_FILL_H_
