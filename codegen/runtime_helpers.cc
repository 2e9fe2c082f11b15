#include "codegen/runtime_helpers.h"

#include <immintrin.h>

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
  for (int64_t r0 = 0; r0 < rows16; r0 += 16) {
    for (int64_t c0 = 0; c0 < cols16; c0 += 16) {
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
