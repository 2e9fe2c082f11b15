// Bit-exactness of the conversions against support/float16.h and the
// reference interpreter's rounding rules, through JIT-compiled array
// kernels (16 lanes plus a scalar tail, so both shapes are covered).
#include "codegen/llvm/cast_emitter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "codegen/llvm/array_kernel.h"
#include "codegen/llvm/llvm_util.h"
#include "gtest/gtest.h"
#include "support/cpu_features.h"
#include "support/float16.h"

namespace hgc {
namespace codegen {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Elem StorageOf(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return Elem::kF32;
    case DType::kBF16:
    case DType::kF16:
      return Elem::kI16;
    case DType::kS32:
      return Elem::kI32;
    default:
      return Elem::kI8;
  }
}

// Runs EmitCast(from -> to) over `xs` (storage values of `from`).
template <typename Out, typename In>
std::vector<Out> Cast(DType from, DType to, const std::vector<In>& xs,
                      CastOptions options = {},
                      absl::string_view max_isa = "all") {
  absl::StatusOr<ArrayKernel> kernel = ArrayKernel::Create(
      {StorageOf(from)}, StorageOf(to),
      [&](llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& in) {
        llvm::Value* x = in[0];
        // Bools are bytes in memory and i1 in registers.
        if (from == DType::kBool) {
          x = b.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
        }
        absl::StatusOr<llvm::Value*> r = EmitCast(b, from, to, x, options);
        EXPECT_TRUE(r.ok()) << r.status();
        return r.ok() ? *r : x;
      },
      16, max_isa);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  std::vector<Out> ys(xs.size());
  if (kernel.ok()) kernel->Run({xs.data()}, ys.data(), xs.size());
  return ys;
}

// Every 97th f32 bit pattern, plus values around rounding ties of bf16 and
// f16 and the integer conversions.
std::vector<float> FloatInputs() {
  std::vector<float> xs;
  for (uint64_t u = 0; u <= 0xffffffffu; u += 97) {
    xs.push_back(BitsToFloat(static_cast<uint32_t>(u)));
  }
  for (uint32_t base : {0x3f800000u, 0x00010000u, 0x7f7f0000u, 0x477fe000u,
                        0x38800000u, 0x33000000u}) {
    for (uint32_t low = 0; low < 0x20000; low += 0x800 - 1) {
      xs.push_back(BitsToFloat(base + low));
      xs.push_back(-BitsToFloat(base + low));
    }
  }
  for (float v = -300.0f; v <= 300.0f; v += 0.25f) xs.push_back(v);
  for (float v :
       {kInf,          -kInf,          kNaN,           -kNaN,   2147483520.0f,
        2147483648.0f, -2147483648.0f, -2147483904.0f, 1e20f,   -1e20f,
        0.5f,          -0.5f,          1.5f,           2.5f,    -2.5f,
        127.5f,        128.5f,         -128.5f,        -129.0f, 255.5f,
        254.5f}) {
    xs.push_back(v);
  }
  return xs;
}

// The interpreter's store rule for integers (ir/tensor.cc RoundSaturate).
int64_t RoundSaturate(double v, double lo, double hi) {
  if (std::isnan(v)) return 0;
  if (v <= lo) return static_cast<int64_t>(lo);
  if (v >= hi) return static_cast<int64_t>(hi);
  return static_cast<int64_t>(std::nearbyint(v));
}

TEST(CastEmitterTest, F32ToBf16IsRoundToNearestEven) {
  std::vector<float> xs = FloatInputs();
  std::vector<uint16_t> ys = Cast<uint16_t>(DType::kF32, DType::kBF16, xs);
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(ys[i], FloatToBf16(xs[i]))
        << "x bits 0x" << std::hex << FloatBits(xs[i]);
  }
}

TEST(CastEmitterTest, NativeBf16MatchesExceptDenormals) {
  if (!IsaAvailable(Isa::kAvx512CoreBf16)) {
    GTEST_SKIP() << "SKIPPED: AVX512_BF16 not available on this CPU";
  }
  std::vector<float> xs = FloatInputs();
  CastOptions native;
  native.native_bf16 = true;
  std::vector<uint16_t> ys =
      Cast<uint16_t>(DType::kF32, DType::kBF16, xs, native);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (std::fpclassify(xs[i]) == FP_SUBNORMAL) {
      // vcvtneps2bf16 flushes denormal inputs to a signed zero.
      ASSERT_EQ(ys[i] & 0x7fff, 0) << xs[i];
      continue;
    }
    ASSERT_EQ(ys[i], FloatToBf16(xs[i]))
        << "x bits 0x" << std::hex << FloatBits(xs[i]);
  }
}

TEST(CastEmitterTest, SixteenBitToF32IsExact) {
  std::vector<uint16_t> all(65536);
  for (int i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> bf = Cast<float>(DType::kBF16, DType::kF32, all);
  std::vector<float> hf = Cast<float>(DType::kF16, DType::kF32, all);
  for (int i = 0; i < 65536; ++i) {
    ASSERT_EQ(FloatBits(bf[i]), FloatBits(Bf16ToFloat(all[i]))) << i;
    const float want = HalfToFloat(all[i]);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(hf[i])) << i;
    } else {
      ASSERT_EQ(FloatBits(hf[i]), FloatBits(want)) << i;
    }
  }
}

// Every bf16 widened and read as a bf16 matmul operand: denormals become
// zeros of their sign, everything else (zeros, normals, inf, NaN) stays.
TEST(CastEmitterTest, DenormalsAsZeroOnWidenedBf16) {
  std::vector<uint16_t> all(65536);
  for (int i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  absl::StatusOr<ArrayKernel> kernel = ArrayKernel::Create(
      {Elem::kI16}, Elem::kF32,
      [](llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& in) {
        return EmitDenormalsAsZero(b, EmitBf16ToF32(b, in[0]));
      });
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<float> ys(all.size());
  kernel->Run({all.data()}, ys.data(), all.size());
  for (int i = 0; i < 65536; ++i) {
    const bool denormal = (i & 0x7f80) == 0 && (i & 0x7f) != 0;
    const uint32_t want = denormal ? static_cast<uint32_t>(i & 0x8000) << 16
                                   : FloatBits(Bf16ToFloat(all[i]));
    ASSERT_EQ(FloatBits(ys[i]), want) << "bf16 bits " << i;
  }
}

TEST(CastEmitterTest, F32ToF16IsRoundToNearestEven) {
  std::vector<float> xs = FloatInputs();
  std::vector<uint16_t> ys = Cast<uint16_t>(DType::kF32, DType::kF16, xs);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (std::isnan(xs[i])) {
      // NaN payloads differ from the reference's canonical 0x7e00.
      ASSERT_TRUE(std::isnan(HalfToFloat(ys[i])));
      continue;
    }
    ASSERT_EQ(ys[i], FloatToHalf(xs[i])) << xs[i];
  }
}

// Without AVX512_FP16 (and, below that, without AVX-512) the same IR
// lowers to other instructions (vcvtps2ph, ymm halves); results must not
// change.
TEST(CastEmitterTest, SameBitsUnderIsaCaps) {
  std::vector<float> xs = FloatInputs();
  xs.resize(300000);
  const auto hf = Cast<uint16_t>(DType::kF32, DType::kF16, xs);
  const auto bf = Cast<uint16_t>(DType::kF32, DType::kBF16, xs);
  const auto s8 = Cast<int8_t>(DType::kF32, DType::kS8, xs);
  for (const char* cap : {"avx512_core", "none"}) {
    EXPECT_EQ(Cast<uint16_t>(DType::kF32, DType::kF16, xs, {}, cap), hf) << cap;
    EXPECT_EQ(Cast<uint16_t>(DType::kF32, DType::kBF16, xs, {}, cap), bf)
        << cap;
    EXPECT_EQ(Cast<int8_t>(DType::kF32, DType::kS8, xs, {}, cap), s8) << cap;
  }
}

TEST(CastEmitterTest, F32ToIntRoundsHalfEvenAndSaturates) {
  std::vector<float> xs = FloatInputs();
  std::vector<int8_t> s8 = Cast<int8_t>(DType::kF32, DType::kS8, xs);
  std::vector<uint8_t> u8 = Cast<uint8_t>(DType::kF32, DType::kU8, xs);
  std::vector<int32_t> s32 = Cast<int32_t>(DType::kF32, DType::kS32, xs);
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(s8[i], RoundSaturate(xs[i], -128, 127)) << xs[i];
    ASSERT_EQ(u8[i], RoundSaturate(xs[i], 0, 255)) << xs[i];
    ASSERT_EQ(s32[i], RoundSaturate(xs[i], INT32_MIN, INT32_MAX)) << xs[i];
  }
  // The same through bf16 and f16 sources.
  std::vector<uint16_t> all(65536);
  for (int i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<int8_t> from_bf = Cast<int8_t>(DType::kBF16, DType::kS8, all);
  std::vector<uint8_t> from_hf = Cast<uint8_t>(DType::kF16, DType::kU8, all);
  for (int i = 0; i < 65536; ++i) {
    ASSERT_EQ(from_bf[i], RoundSaturate(Bf16ToFloat(all[i]), -128, 127));
    ASSERT_EQ(from_hf[i], RoundSaturate(HalfToFloat(all[i]), 0, 255));
  }
}

TEST(CastEmitterTest, S32ToFloatRoundsOnce) {
  std::vector<int32_t> xs;
  for (int64_t v = INT32_MIN; v <= INT32_MAX; v += 65521) {
    xs.push_back(static_cast<int32_t>(v));
  }
  for (int32_t v :
       {0, 1, -1, INT32_MAX, INT32_MIN, 16777217, -16777217, 16777219, 65519,
        65520, 65535, 65536, 0x01008001, 0x7fffff80, 0x7fffffbf, 0x00810000,
        0x00808000, 0x00818000}) {
    xs.push_back(v);
  }
  std::vector<float> f32 = Cast<float>(DType::kS32, DType::kF32, xs);
  std::vector<uint16_t> bf = Cast<uint16_t>(DType::kS32, DType::kBF16, xs);
  std::vector<uint16_t> hf = Cast<uint16_t>(DType::kS32, DType::kF16, xs);
  for (size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i];
    ASSERT_EQ(f32[i], static_cast<float>(v)) << xs[i];
    ASSERT_EQ(bf[i], FloatToBf16(RoundToOddF32(v))) << xs[i];
    ASSERT_EQ(hf[i], FloatToHalf(RoundToOddF32(v))) << xs[i];
  }
}

TEST(CastEmitterTest, IntegerToIntegerSaturates) {
  std::vector<int32_t> s32 = {INT32_MIN, -129, -128, -1,  0,        1,
                              127,       128,  255,  256, INT32_MAX};
  std::vector<int8_t> to_s8 = Cast<int8_t>(DType::kS32, DType::kS8, s32);
  std::vector<uint8_t> to_u8 = Cast<uint8_t>(DType::kS32, DType::kU8, s32);
  for (size_t i = 0; i < s32.size(); ++i) {
    EXPECT_EQ(to_s8[i], std::clamp<int64_t>(s32[i], -128, 127));
    EXPECT_EQ(to_u8[i], std::clamp<int64_t>(s32[i], 0, 255));
  }
  std::vector<uint8_t> bytes(256);
  for (int i = 0; i < 256; ++i) bytes[i] = static_cast<uint8_t>(i);
  std::vector<uint8_t> s8_to_u8 = Cast<uint8_t>(DType::kS8, DType::kU8, bytes);
  std::vector<int8_t> u8_to_s8 = Cast<int8_t>(DType::kU8, DType::kS8, bytes);
  std::vector<int32_t> s8_to_s32 =
      Cast<int32_t>(DType::kS8, DType::kS32, bytes);
  std::vector<int32_t> u8_to_s32 =
      Cast<int32_t>(DType::kU8, DType::kS32, bytes);
  std::vector<float> u8_to_f32 = Cast<float>(DType::kU8, DType::kF32, bytes);
  std::vector<uint8_t> u8_to_bool =
      Cast<uint8_t>(DType::kU8, DType::kBool, bytes);
  for (int i = 0; i < 256; ++i) {
    const int8_t s = static_cast<int8_t>(i);
    EXPECT_EQ(s8_to_u8[i], std::max<int>(s, 0));
    EXPECT_EQ(u8_to_s8[i], std::min(i, 127));
    EXPECT_EQ(s8_to_s32[i], s);
    EXPECT_EQ(u8_to_s32[i], i);
    EXPECT_EQ(u8_to_f32[i], static_cast<float>(i));
    EXPECT_EQ(u8_to_bool[i], i != 0 ? 1 : 0);
  }
}

TEST(CastEmitterTest, BoolConversions) {
  std::vector<float> xs = {0.0f, -0.0f, 1.0f, -2.5f, kNaN, kInf, 1e-45f};
  std::vector<uint8_t> to_bool = Cast<uint8_t>(DType::kF32, DType::kBool, xs);
  EXPECT_EQ(to_bool, (std::vector<uint8_t>{0, 0, 1, 1, 1, 1, 1}));
  std::vector<uint8_t> bools = {0, 1, 1, 0};
  EXPECT_EQ(Cast<float>(DType::kBool, DType::kF32, bools),
            (std::vector<float>{0, 1, 1, 0}));
  EXPECT_EQ(Cast<uint16_t>(DType::kBool, DType::kBF16, bools),
            (std::vector<uint16_t>{0, 0x3f80, 0x3f80, 0}));
  EXPECT_EQ(Cast<int32_t>(DType::kBool, DType::kS32, bools),
            (std::vector<int32_t>{0, 1, 1, 0}));
}

// quantize against runtime/portable/quant.cc's formula: the quotient
// exactly as a division rounds it, NaN to the zero point, saturated.
void ExpectQuantizeMatches(const std::vector<float>& inputs, float scale,
                           int32_t zp, DType to, const CastOptions& options) {
  absl::StatusOr<ArrayKernel> q = ArrayKernel::Create(
      {Elem::kF32}, Elem::kI8,
      [&](llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& in) {
        llvm::Type* t = in[0]->getType();
        return EmitQuantize(
            b, in[0], llvm::ConstantFP::get(t, scale),
            llvm::ConstantInt::get(WithElementType(t, b.getInt32Ty()), zp), to,
            options);
      });
  ASSERT_TRUE(q.ok()) << q.status();
  std::vector<uint8_t> ys(inputs.size());
  q->Run({inputs.data()}, ys.data(), inputs.size());
  const double lo = to == DType::kS8 ? -128 : 0,
               hi = to == DType::kS8 ? 127 : 255;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const float qf = inputs[i] / scale;
    double v = std::isnan(qf) ? 0.0 : std::nearbyint(qf);
    v = std::clamp(v + zp, lo, hi);
    const int64_t got = to == DType::kS8 ? static_cast<int8_t>(ys[i]) : ys[i];
    ASSERT_EQ(got, static_cast<int64_t>(v))
        << "x " << inputs[i] << " scale " << scale << " zero point " << zp
        << (options.avx512 ? " (avx512)" : "");
  }
}

// quantize for scales taken by reciprocal (common ones, one with an
// all-ones significand, the ends of the range) and by division (past
// them), zero points inside and outside the type's range, on the portable
// form and on AVX-512's clamp-and-convert form where the CPU has it.
TEST(CastEmitterTest, QuantizeDequantize) {
  const float scales[] = {0.037f, 4.0f / 255, 1.0f / 255, 0x1.fffffep-1f,
                          3.0f,   0x1p-100f,  0x1p100f,   1e-35f,
                          1e35f,  -0.5f};
  std::vector<float> xs = FloatInputs();
  xs.resize(200000);
  for (float v = -6.0f; v <= 6.0f; v += 0.0185f) xs.push_back(v);
  std::vector<CastOptions> variants(1);
  if (IsaAvailable(Isa::kAvx512Core)) {
    variants.emplace_back().avx512 = true;
  } else {
    std::printf("SKIPPED (AVX-512 quantize): AVX-512 not available\n");
  }
  for (float scale : scales) {
    // Quotients on and next to every half step.
    std::vector<float> inputs = xs;
    for (int k = -600; k <= 600; ++k) {
      const float x = (static_cast<float>(k) + 0.5f) * scale;
      inputs.push_back(x);
      inputs.push_back(std::nextafter(x, INFINITY));
      inputs.push_back(std::nextafter(x, -INFINITY));
    }
    for (const CastOptions& options : variants) {
      for (DType to : {DType::kS8, DType::kU8}) {
        for (int32_t zp : {3, 0, -128, 127, 255}) {
          ExpectQuantizeMatches(inputs, scale, zp, to, options);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
  const float scale = 0.037f;
  const int32_t zp = 3;
  std::vector<int32_t> acc = {INT32_MIN, -1000, -1, 0, 1, 77, INT32_MAX};
  absl::StatusOr<ArrayKernel> dq = ArrayKernel::Create(
      {Elem::kI32}, Elem::kF32,
      [&](llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& in) {
        llvm::Type* t = in[0]->getType();
        return EmitDequantize(
            b, in[0], DType::kS32,
            llvm::ConstantFP::get(WithElementType(t, b.getFloatTy()), scale),
            llvm::ConstantInt::get(t, zp));
      });
  ASSERT_TRUE(dq.ok()) << dq.status();
  std::vector<float> ys(acc.size());
  dq->Run({acc.data()}, ys.data(), acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    EXPECT_EQ(ys[i], static_cast<float>(int64_t{acc[i]} - zp) * scale);
  }
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
