// Accuracy of the vector math functions: each is JIT-compiled into an array
// kernel (16-wide vectors plus a scalar tail) and compared with the C++
// double-precision function rounded to f32, over
//   - every 509th f32 bit pattern (all binades, denormals, inf, NaN),
//   - dense runs of consecutive floats around each algorithm's switch
//     points and overflow/underflow thresholds,
//   - named special values, checked exactly.
// The ulp error is the distance in representable floats between the result
// and the rounded reference (0 = correctly rounded; NaN matches NaN).
#include "codegen/llvm/vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "codegen/llvm/array_kernel.h"
#include "codegen/llvm/vector_math_test_util.h"
#include "gtest/gtest.h"
#include "support/cpu_features.h"

namespace hgc {
namespace codegen {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kDenormMin = std::numeric_limits<float>::denorm_min();

using Reference = double (*)(double);

llvm::Value* ExpNonPositive(llvm::IRBuilder<>& b, llvm::Value* x) {
  return EmitExpNonPositive(b, x);
}

// Sweep inputs: every 509th bit pattern plus dense runs of 2^15 floats on
// each side of every point in `centers`.
std::vector<float> SweepInputs(const std::vector<float>& centers) {
  std::vector<float> xs;
  for (uint64_t u = 0; u <= 0xffffffffu; u += 509) {
    xs.push_back(FromBits(static_cast<uint32_t>(u)));
  }
  for (float c : centers) {
    const int64_t o = Ordinal(c);
    for (int64_t k = -(1 << 15); k <= (1 << 15); ++k) {
      xs.push_back(FromOrdinal(o + k));
    }
  }
  return xs;
}

struct ErrorReport {
  int64_t max_ulp = 0;
  float worst_x = 0;
  double max_scaled = 0;  // ulp / max(1, condition number), see gelu_tanh
  float worst_scaled_x = 0;
};

// Max ulp error of emit vs ref over xs with ref(x) inside the f32 range.
ErrorReport Measure(const char* name, Emitter emit, Reference ref,
                    const std::vector<float>& xs, Reference condition = nullptr,
                    float raw_from = -kInf) {
  std::vector<float> ys = Apply(emit, xs);
  ErrorReport r;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float want = static_cast<float>(ref(xs[i]));
    const int64_t ulp = UlpDistance(ys[i], want);
    if (xs[i] >= raw_from && ulp > r.max_ulp) {
      r.max_ulp = ulp;
      r.worst_x = xs[i];
    }
    if (condition != nullptr && std::isfinite(xs[i])) {
      const double scaled = ulp / std::max(1.0, condition(xs[i]));
      if (scaled > r.max_scaled) {
        r.max_scaled = scaled;
        r.worst_scaled_x = xs[i];
      }
    }
  }
  std::printf("%-10s %9zu inputs: max %lld ulp at x = %.9g", name, xs.size(),
              static_cast<long long>(r.max_ulp), r.worst_x);
  if (condition != nullptr) {
    std::printf("; max ulp/cond %.2f at x = %.9g", r.max_scaled,
                r.worst_scaled_x);
  }
  std::printf("\n");
  return r;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double GeluTanh(double x) {
  const double z = 2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
  return x / (1 + std::exp(-z));
}
// |x f'(x) / f(x)|: how many ulp of output error half an ulp of rounding in
// an intermediate argument costs. Far in the negative tail gelu_tanh's
// condition number is 0.2 x^3 (e.g. 230 at x = -10), so an implementation
// that rounds its argument cannot be a few ulp there; we bound ulp / cond.
double GeluTanhCondition(double x) {
  const double h = 1e-6 * std::max(1.0, std::fabs(x));
  const double f = GeluTanh(x);
  if (f == 0) return 1;
  return std::fabs(x * (GeluTanh(x + h) - GeluTanh(x - h)) / (2 * h) / f);
}

TEST(VectorMathTest, Exp) {
  ErrorReport r = Measure(
      "exp", EmitExp, [](double x) { return std::exp(x); },
      SweepInputs({0.0f, 0.34657359f, 88.72f, -87.33f, -103.97f, -1.0f}));
  EXPECT_LE(r.max_ulp, 1);
}

TEST(VectorMathTest, ExpNonPositive) {
  std::vector<float> xs;
  for (float x : SweepInputs({0.0f, -0.34657359f, -87.33f, -103.97f, -1.0f})) {
    if (x <= 0) xs.push_back(x);
  }
  const std::vector<float> ys = Apply(ExpNonPositive, xs);
  int64_t max_ulp = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float want = static_cast<float>(std::exp(static_cast<double>(xs[i])));
    max_ulp = std::max(max_ulp, UlpDistance(ys[i], want));
  }
  std::printf("exp_non_positive: %zu inputs <= 0, max %lld ulp\n", xs.size(),
              static_cast<long long>(max_ulp));
  EXPECT_LE(max_ulp, 1);
  const std::vector<float> special = {-kInf, -1e30f, -104.0f, -0.0f, kNaN};
  const std::vector<float> got = Apply(ExpNonPositive, special, 1);
  EXPECT_EQ(got[0], 0.0f);
  EXPECT_EQ(got[1], 0.0f);
  EXPECT_EQ(got[2], 0.0f);
  EXPECT_EQ(got[3], 1.0f);
  EXPECT_TRUE(std::isnan(got[4]));
  // A denormal result, not 0: e^-100 times inf is still inf.
  EXPECT_GT(Apply(ExpNonPositive, {-100.0f}, 1)[0], 0.0f);
}

// The vscalefps form gives the portable form's results bit for bit,
// specials and denormal results included.
TEST(VectorMathTest, ExpNonPositiveScalefMatchesPortable) {
  if (!IsaAvailable(Isa::kAvx512Core)) {
    GTEST_SKIP() << "vscalefps needs AVX-512, which this CPU (or HGC_MAX_ISA) "
                    "does not offer";
  }
  std::vector<float> xs;
  for (float x : SweepInputs({0.0f, -0.34657359f, -87.33f, -103.97f, -1.0f})) {
    if (!(x > 0)) xs.push_back(x);  // NaNs included
  }
  for (float x : {-kInf, -1e30f, -104.0f, -100.0f, -0.0f, kNaN}) {
    xs.push_back(x);
  }
  const std::vector<float> portable = Apply(
      [](llvm::IRBuilder<>& b, llvm::Value* x) {
        return EmitExpNonPositive(b, x, ExpScaling::kPortable);
      },
      xs);
  const std::vector<float> scalef = Apply(
      [](llvm::IRBuilder<>& b, llvm::Value* x) {
        return EmitExpNonPositive(b, x, ExpScaling::kAvx512Scalef);
      },
      xs);
  ASSERT_EQ(portable.size(), scalef.size());
  int64_t differ = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const bool same = std::isnan(portable[i])
                          ? std::isnan(scalef[i])
                          : Bits(portable[i]) == Bits(scalef[i]);
    if (!same && differ++ < 5) {
      ADD_FAILURE() << "x = " << xs[i] << ": portable " << portable[i]
                    << ", vscalefps " << scalef[i];
    }
  }
  EXPECT_EQ(differ, 0) << "of " << xs.size() << " inputs";
}

// e^(x - m) through EmitExpOfDifference, 16 lanes at a time (inputs are
// padded to whole vectors, so no element takes the scalar tail).
std::vector<float> ApplyExpOfDifference(const std::vector<float>& xs,
                                        const std::vector<float>& ms,
                                        ExpScaling scaling) {
  std::vector<float> x = xs, m = ms;
  x.resize((xs.size() + 15) / 16 * 16, 0.0f);
  m.resize(x.size(), 0.0f);
  absl::StatusOr<ArrayKernel> kernel = ArrayKernel::Create(
      {Elem::kF32, Elem::kF32}, Elem::kF32,
      [scaling](llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& in) {
        return EmitExpOfDifference(b, in[0], in[1], scaling);
      });
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  std::vector<float> ys(x.size());
  if (kernel.ok()) kernel->Run({x.data(), m.data()}, ys.data(), x.size());
  ys.resize(xs.size());
  return ys;
}

// Both forms against e^(x - m) with the difference taken exactly (double):
// the portable one rounds x - m first (<= 1 ulp of e^round(x - m)), the
// vreduceps one also rounds t = (x - m) log2 e (and log2 e itself), so
// both are bounded by 2 ulp plus 1.25 ulp per unit of |x - m|, and by
// half an ulp of e^0 = 1, the largest value a softmax row holds.
TEST(VectorMathTest, ExpOfDifference) {
  std::vector<float> xs, ms;
  for (float m : {0.0f, 1.5f, -3.25f, 10.0f, 87.0f, -1000.0f}) {
    for (float d :
         SweepInputs({0.0f, -0.34657359f, -1.0f, -16.0f, -87.33f, -103.97f})) {
      const float x = m + d;
      if (!(d <= 0) || !(x <= m) || std::isinf(x)) continue;
      xs.push_back(x);
      ms.push_back(m);
    }
  }
  std::vector<ExpScaling> scalings = {ExpScaling::kPortable};
  if (IsaAvailable(Isa::kAvx512Core)) {
    scalings.push_back(ExpScaling::kAvx512Scalef);
  } else {
    std::printf("exp_of_difference: no AVX-512 here, vreduceps form not run\n");
  }
  for (ExpScaling scaling : scalings) {
    const std::vector<float> ys = ApplyExpOfDifference(xs, ms, scaling);
    double max_excess = 0, max_abs = 0;
    int64_t max_ulp = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const double d = static_cast<double>(xs[i]) - ms[i];
      const float want = static_cast<float>(std::exp(d));
      const int64_t ulp = UlpDistance(ys[i], want);
      max_ulp = std::max(max_ulp, ulp);
      max_excess = std::max(max_excess, ulp - (2 + 1.25 * std::fabs(d)));
      max_abs = std::max(max_abs, std::fabs(static_cast<double>(ys[i]) - want));
    }
    std::printf(
        "exp_of_difference (%s): %zu inputs, max %lld ulp, max ulp - (2 + "
        "1.25 |x - m|) %.2f, max abs error %.3g\n",
        scaling == ExpScaling::kPortable ? "portable" : "vreduceps", xs.size(),
        static_cast<long long>(max_ulp), max_excess, max_abs);
    EXPECT_LE(max_excess, 0);
    EXPECT_LE(max_abs, std::ldexp(1.0, -24));

    // Masked scores, a fully masked row, NaNs, the max itself, a mask of
    // -FLT_MAX (whose rows hold equal scores) and a denormal result.
    const float lowest = std::numeric_limits<float>::lowest();
    const std::vector<float> sx = {-kInf,  -kInf,  kNaN,   0.0f,   5.0f,
                                   -1e30f, lowest, lowest, -100.0f};
    const std::vector<float> sm = {0.0f, -kInf,  0.0f,  kNaN, 5.0f,
                                   0.0f, lowest, 10.0f, 0.0f};
    const std::vector<float> got = ApplyExpOfDifference(sx, sm, scaling);
    EXPECT_EQ(got[0], 0.0f);
    EXPECT_TRUE(std::isnan(got[1]));
    EXPECT_TRUE(std::isnan(got[2]));
    EXPECT_TRUE(std::isnan(got[3]));
    EXPECT_EQ(got[4], 1.0f);
    EXPECT_EQ(got[5], 0.0f);
    EXPECT_EQ(got[6], 1.0f);
    EXPECT_EQ(got[7], 0.0f);
    EXPECT_GT(got[8], 0.0f);
  }
}

TEST(VectorMathTest, Log) {
  ErrorReport r = Measure(
      "log", EmitLog, [](double x) { return std::log(x); },
      SweepInputs({1.0f, 0.70710677f, 1.41421354f, 1.17549435e-38f, kDenormMin,
                   3.0e38f}));
  EXPECT_LE(r.max_ulp, 1);
}

TEST(VectorMathTest, Tanh) {
  ErrorReport r = Measure(
      "tanh", EmitTanh, [](double x) { return std::tanh(x); },
      SweepInputs({0.0f, 0.625f, -0.625f, 1e-3f, 9.0f, -9.0f}));
  EXPECT_LE(r.max_ulp, 1);
}

TEST(VectorMathTest, Erf) {
  ErrorReport r = Measure(
      "erf", EmitErf, [](double x) { return std::erf(x); },
      SweepInputs({0.0f, 0.875f, -0.875f, 2.0f, 3.9f, 1e-3f}));
  EXPECT_LE(r.max_ulp, 1);
}

TEST(VectorMathTest, Sigmoid) {
  ErrorReport r =
      Measure("sigmoid", EmitSigmoid, Sigmoid,
              SweepInputs({0.0f, -15.67f, -87.33f, -103.5f, 16.6f, 2.0f}));
  EXPECT_LE(r.max_ulp, 2);
}

TEST(VectorMathTest, GeluErf) {
  // The worst spots found by vector_math_exhaustive_test (4 ulp at -12.99,
  // -1.858 and -0.1404), 0, and the underflow tail.
  ErrorReport r =
      Measure("gelu_erf", EmitGeluErf, GeluErf,
              SweepInputs({0.0f, -12.9914455f, -1.85797441f, -0.140400067f,
                           1e-3f, -13.0f, -14.1f, 5.0f}));
  EXPECT_LE(r.max_ulp, 4);
}

TEST(VectorMathTest, GeluTanh) {
  ErrorReport r =
      Measure("gelu_tanh", EmitGeluTanh, GeluTanh,
              SweepInputs({0.0f, -1.3594f, -2.749f, -4.7f, -8.0f, 3.0f}),
              GeluTanhCondition, /*raw_from=*/-3.0f);
  EXPECT_LE(r.max_ulp, 3) << "for x >= -3";
  EXPECT_LE(r.max_scaled, 2.5);
}

TEST(VectorMathTest, SqrtAndRsqrt) {
  std::vector<float> xs = SweepInputs({1.0f, kDenormMin});
  ErrorReport s = Measure(
      "sqrt", EmitSqrt, [](double x) { return std::sqrt(x); }, xs);
  EXPECT_EQ(s.max_ulp, 0);
  ErrorReport r = Measure(
      "rsqrt", EmitRsqrt, [](double x) { return 1 / std::sqrt(x); }, xs);
  EXPECT_LE(r.max_ulp, 1);
}

// Exact results at special inputs (bitwise, so the sign of zero counts).
void ExpectSpecials(Emitter emit, const char* name,
                    const std::vector<std::pair<float, float>>& cases) {
  std::vector<float> xs;
  for (const auto& c : cases) xs.push_back(c.first);
  // Run both shapes: lanes of a vector and the scalar tail.
  for (int width : {16, 1}) {
    std::vector<float> ys = Apply(emit, xs, width);
    for (size_t i = 0; i < cases.size(); ++i) {
      const float want = cases[i].second;
      const bool same =
          std::isnan(want) ? std::isnan(ys[i]) : Bits(ys[i]) == Bits(want);
      EXPECT_TRUE(same) << name << "(" << xs[i] << ") = " << ys[i] << ", want "
                        << want << " (width " << width << ")";
    }
  }
}

TEST(VectorMathTest, SpecialValues) {
  ExpectSpecials(EmitExp, "exp",
                 {{0.0f, 1.0f},
                  {-0.0f, 1.0f},
                  {kInf, kInf},
                  {-kInf, 0.0f},
                  {kNaN, kNaN},
                  {88.8f, kInf},
                  {-104.0f, 0.0f},
                  {-103.2789f, kDenormMin}});
  ExpectSpecials(EmitLog, "log",
                 {{1.0f, 0.0f},
                  {0.0f, -kInf},
                  {-0.0f, -kInf},
                  {-1.0f, kNaN},
                  {kInf, kInf},
                  {-kInf, kNaN},
                  {kNaN, kNaN}});
  ExpectSpecials(EmitTanh, "tanh",
                 {{0.0f, 0.0f},
                  {-0.0f, -0.0f},
                  {kInf, 1.0f},
                  {-kInf, -1.0f},
                  {kNaN, kNaN},
                  {20.0f, 1.0f},
                  {kDenormMin, kDenormMin}});
  ExpectSpecials(EmitErf, "erf",
                 {{0.0f, 0.0f},
                  {-0.0f, -0.0f},
                  {kInf, 1.0f},
                  {-kInf, -1.0f},
                  {kNaN, kNaN},
                  {5.0f, 1.0f},
                  {-5.0f, -1.0f}});
  ExpectSpecials(EmitSigmoid, "sigmoid",
                 {{0.0f, 0.5f},
                  {kInf, 1.0f},
                  {-kInf, 0.0f},
                  {kNaN, kNaN},
                  {-200.0f, 0.0f},
                  {30.0f, 1.0f}});
  ExpectSpecials(EmitGeluErf, "gelu_erf",
                 {{0.0f, 0.0f},
                  {-0.0f, -0.0f},
                  {kInf, kInf},
                  {-kInf, kNaN},
                  {kNaN, kNaN},
                  {-20.0f, -0.0f},
                  {20.0f, 20.0f}});
  ExpectSpecials(EmitGeluTanh, "gelu_tanh",
                 {{0.0f, 0.0f},
                  {-0.0f, -0.0f},
                  {kInf, kInf},
                  {-kInf, kNaN},
                  {kNaN, kNaN},
                  {-20.0f, -0.0f},
                  {20.0f, 20.0f}});
  ExpectSpecials(EmitRsqrt, "rsqrt",
                 {{0.0f, kInf}, {kInf, 0.0f}, {-1.0f, kNaN}, {4.0f, 0.5f}});
}

// The same code at other vector widths (8 and 4 lanes, and odd 3) agrees
// bit for bit with the 16-lane kernel.
TEST(VectorMathTest, WidthsAgree) {
  std::vector<float> xs;
  for (int i = -2000; i < 2000; ++i) xs.push_back(i * 0.0137f);
  for (Emitter emit : {EmitExp, EmitLog, EmitTanh, EmitErf, EmitGeluErf,
                       EmitGeluTanh, EmitSigmoid}) {
    const std::vector<float> ref = Apply(emit, xs, 16);
    for (int width : {8, 4, 3}) {
      const std::vector<float> got = Apply(emit, xs, width);
      for (size_t i = 0; i < xs.size(); ++i) {
        ASSERT_EQ(UlpDistance(got[i], ref[i]), 0)
            << "x = " << xs[i] << " width " << width;
      }
    }
  }
}

// Lower ISA caps (AVX-512 without FP16/BF16/VNNI; AVX2 splitting each
// <16 x float> into two ymm halves) compute the same bits.
TEST(VectorMathTest, IsaCapsAgree) {
  std::vector<float> xs;
  for (int i = -3000; i < 3000; ++i) xs.push_back(i * 0.0311f);
  xs.push_back(kNaN);
  xs.push_back(-kInf);
  for (Emitter emit :
       {EmitExp, EmitLog, EmitErf, EmitGeluErf, EmitGeluTanh, EmitTanh}) {
    const std::vector<float> ref = Apply(emit, xs);
    for (const char* cap : {"avx512_core", "none"}) {
      const std::vector<float> got = Apply(emit, xs, 16, cap);
      for (size_t i = 0; i < xs.size(); ++i) {
        ASSERT_EQ(UlpDistance(got[i], ref[i]), 0)
            << "x = " << xs[i] << " cap " << cap;
      }
    }
  }
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
