#include "codegen/runtime_helpers.h"

#include <immintrin.h>

#include "support/float16.h"

namespace {

// The 16 x 16 transpose of the rows r[0..15] in place: unpack 32-bit and
// 64-bit halves within 128-bit lanes, then move whole lanes. Every loop is
// unrolled so that the 16-row arrays live in registers (a rolled loop
// keeps them on the stack, three times slower).
__attribute__((target("avx512f"), always_inline)) inline void Transpose16(
    __m512 r[16]) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    const __m512 lo = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    const __m512 hi = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    r[2 * i] = lo;
    r[2 * i + 1] = hi;
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const __m512d t0 = _mm512_castps_pd(r[4 * i]);
    const __m512d t1 = _mm512_castps_pd(r[4 * i + 1]);
    const __m512d t2 = _mm512_castps_pd(r[4 * i + 2]);
    const __m512d t3 = _mm512_castps_pd(r[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
  // r[4i + m], 128-bit lane L: column 4L + m of rows 4i .. 4i + 3.
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    const __m512 x = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x44);
    const __m512 y = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xEE);
    const __m512 x2 = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x44);
    const __m512 y2 = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xEE);
    r[m] = _mm512_shuffle_f32x4(x, x2, 0x88);
    r[4 + m] = _mm512_shuffle_f32x4(x, x2, 0xDD);
    r[8 + m] = _mm512_shuffle_f32x4(y, y2, 0x88);
    r[12 + m] = _mm512_shuffle_f32x4(y, y2, 0xDD);
  }
}

}  // namespace

extern "C" __attribute__((target("avx512f"))) void hgc_transpose_f32(
    const float* src, int64_t src_ld, float* dst, int64_t dst_ld, int64_t rows,
    int64_t cols) {
  const int64_t rows16 = rows / 16 * 16, cols16 = cols / 16 * 16;
  for (int64_t c0 = 0; c0 < cols16; c0 += 16) {
    for (int64_t r0 = 0; r0 < rows16; r0 += 16) {
      __m512 v[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        v[i] = _mm512_loadu_ps(src + (r0 + i) * src_ld + c0);
      }
      Transpose16(v);
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j) {
        _mm512_storeu_ps(dst + (c0 + j) * dst_ld + r0, v[j]);
      }
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = r < rows16 ? cols16 : 0; c < cols; ++c) {
      dst[c * dst_ld + r] = src[r * src_ld + c];
    }
  }
}

extern "C" __attribute__((target("avx512f,f16c"))) void hgc_widen_rows(
    const uint16_t* src, int64_t src_ld, float* dst, int64_t dst_ld,
    int64_t rows, int64_t cols, int32_t f16, int32_t denormals_as_zero) {
  const int64_t cols16 = cols / 16 * 16;
  const __m512i exponent = _mm512_set1_epi32(0x7f800000);
  const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* s = src + r * src_ld;
    float* d = dst + r * dst_ld;
    for (int64_t c = 0; c < cols16; c += 16) {
      const __m256i h =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + c));
      __m512i x = f16 ? _mm512_castps_si512(_mm512_cvtph_ps(h))
                      : _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
      if (denormals_as_zero) {
        x = _mm512_mask_and_epi32(x, _mm512_testn_epi32_mask(x, exponent), x,
                                  sign);
      }
      _mm512_storeu_si512(d + c, x);
    }
    // The edge: halves as vcvtph2ps converts them (a signalling NaN
    // quieted); a half denormal is normal in f32, so only bf16 has any.
    for (int64_t c = cols16; c < cols; ++c) {
      d[c] = f16                 ? _cvtsh_ss(s[c])
             : denormals_as_zero ? hgc::Bf16ToFloatDaz(s[c])
                                 : hgc::Bf16ToFloat(s[c]);
    }
  }
}

extern "C" __attribute__((target("f16c"))) void hgc_narrow_rows(
    const float* src, int64_t src_ld, uint16_t* dst, int64_t dst_row,
    int64_t dst_col, int64_t rows, int64_t cols, int32_t f16) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float x = src[r * src_ld + c];
      // Halves as vcvtps2ph converts them (a NaN keeps its payload's top).
      dst[r * dst_row + c * dst_col] =
          f16 ? _cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT) : hgc::FloatToBf16(x);
    }
  }
}
