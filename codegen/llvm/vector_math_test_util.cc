#include "codegen/llvm/vector_math_test_util.h"

#include <cmath>
#include <cstring>

#include "codegen/llvm/array_kernel.h"
#include "gtest/gtest.h"

namespace hgc {
namespace codegen {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
int64_t Ordinal(float f) {
  int32_t i = static_cast<int32_t>(Bits(f));
  return i < 0 ? int64_t{INT32_MIN} - i : i;
}
float FromOrdinal(int64_t o) {
  return FromBits(
      static_cast<uint32_t>(o < 0 ? static_cast<int32_t>(int64_t{INT32_MIN} - o)
                                  : static_cast<int32_t>(o)));
}
int64_t UlpDistance(float got, float want) {
  if (std::isnan(got) || std::isnan(want)) {
    return std::isnan(got) && std::isnan(want) ? 0 : int64_t{1} << 40;
  }
  int64_t d = Ordinal(got) - Ordinal(want);
  return d < 0 ? -d : d;
}

std::vector<float> Apply(Emitter emit, const std::vector<float>& xs, int width,
                         absl::string_view max_isa) {
  absl::StatusOr<ArrayKernel> kernel = ArrayKernel::Create(
      {Elem::kF32}, Elem::kF32,
      [emit](llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& in) {
        return emit(b, in[0]);
      },
      width, max_isa);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  std::vector<float> ys(xs.size());
  if (kernel.ok()) kernel->Run({xs.data()}, ys.data(), xs.size());
  return ys;
}

double GeluErf(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

}  // namespace codegen
}  // namespace hgc
