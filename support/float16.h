// bf16 and IEEE half conversions, bit-exact and branch-light. hgc stores
// both 16-bit float types as uint16_t bit patterns.
#ifndef HGC_SUPPORT_FLOAT16_H_
#define HGC_SUPPORT_FLOAT16_H_

#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>

namespace hgc {

inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// f32 -> bf16, rounding to nearest even; NaN stays a (quiet) NaN.
inline uint16_t FloatToBf16(float f) {
  uint32_t u = FloatBits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  uint32_t rounding = 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

inline float Bf16ToFloat(uint16_t b) {
  return BitsToFloat(static_cast<uint32_t>(b) << 16);
}

// bf16 -> f32 with a denormal read as a zero of its sign: how the operands
// of a bf16 matmul are read in hgc (the AVX512_BF16 and AMX dot products
// do so in hardware, whatever MXCSR says).
inline float Bf16ToFloatDaz(uint16_t b) {
  return (b & 0x7F80u) == 0
             ? BitsToFloat(static_cast<uint32_t>(b & 0x8000u) << 16)
             : Bf16ToFloat(b);
}

// f32 -> IEEE binary16, rounding to nearest even, with overflow to infinity,
// gradual underflow to subnormals, and NaN preserved.
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);

// `v` rounded to f32 with round-to-odd: rounding the result once more to any
// narrower format (bf16, f16) then equals rounding `v` directly, with no
// double-rounding error.
inline float RoundToOddF32(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(v) || static_cast<double>(f) == v) return f;
  // Inexact: of the two floats bracketing v exactly one has an odd
  // significand; if round-to-nearest picked the even one, step to its
  // neighbour on v's side (inf is "even"; its neighbour is FLT_MAX).
  if ((FloatBits(f) & 1u) == 0) {
    f = std::nextafter(f, static_cast<double>(f) < v
                              ? std::numeric_limits<float>::infinity()
                              : -std::numeric_limits<float>::infinity());
  }
  return f;
}

// A double rounded once to bf16 / f16 (nearest even): through f32 rounded
// to odd, which the second rounding then cannot spoil.
inline uint16_t DoubleToBf16(double v) { return FloatToBf16(RoundToOddF32(v)); }
inline uint16_t DoubleToHalf(double v) { return FloatToHalf(RoundToOddF32(v)); }

// Rounds through the 16-bit type and back: the value an f32 becomes when
// stored as bf16 / f16.
inline float RoundToBf16(float f) { return Bf16ToFloat(FloatToBf16(f)); }
inline float RoundToHalf(float f) { return HalfToFloat(FloatToHalf(f)); }

}  // namespace hgc

#endif  // HGC_SUPPORT_FLOAT16_H_
