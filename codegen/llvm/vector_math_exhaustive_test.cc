// Exhaustive accuracy checks of the vector math functions: every float of a
// range through the JIT-compiled function, against the double-precision
// reference rounded to f32. Kept out of vector_math_test, whose sampled
// sweeps take seconds, because these take about half a minute.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "codegen/llvm/vector_math.h"
#include "codegen/llvm/vector_math_test_util.h"
#include "gtest/gtest.h"

namespace hgc {
namespace codegen {
namespace {

// Every float in [-15, 8] (outside, gelu is 0 or -0, x, or NaN:
// vector_math_test's sweep covers them), with the max error per region.
TEST(VectorMathExhaustiveTest, GeluErf) {
  const struct {
    float lo, hi;
  } regions[] = {{-15.0f, -13.2f}, {-13.2f, -3.0f}, {-3.0f, -0.5f},
                 {-0.5f, 0.0f},    {0.0f, 0.5f},    {0.5f, 3.0f},
                 {3.0f, 8.0f}};
  int64_t worst = 0;
  for (const auto& region : regions) {
    int64_t max_ulp = 0, at_max = 0;
    float worst_x = 0;
    const int64_t end = Ordinal(region.hi);
    std::vector<float> xs;
    for (int64_t o = Ordinal(region.lo); o < end;) {
      xs.clear();
      for (; o < end && xs.size() < (1u << 24); ++o) {
        xs.push_back(FromOrdinal(o));
      }
      const std::vector<float> ys = Apply(EmitGeluErf, xs);
      for (size_t i = 0; i < xs.size(); ++i) {
        const int64_t ulp =
            UlpDistance(ys[i], static_cast<float>(GeluErf(xs[i])));
        if (ulp > max_ulp) {
          max_ulp = ulp;
          at_max = 0;
          worst_x = xs[i];
        }
        at_max += ulp == max_ulp;
      }
    }
    std::printf("gelu_erf on [%g, %g): max %lld ulp (%lld times) at x = %.9g\n",
                region.lo, region.hi, static_cast<long long>(max_ulp),
                static_cast<long long>(at_max), worst_x);
    worst = std::max(worst, max_ulp);
  }
  EXPECT_LE(worst, 4);
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
