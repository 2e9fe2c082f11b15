#include "codegen/runtime_helpers.h"

#include <immintrin.h>

#include "support/cpu_features.h"
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

// The 8 x 8 transpose of the rows r[0..7] in place (AVX2): unpack 32-bit
// and 64-bit halves within 128-bit lanes, then swap lanes.
__attribute__((target("avx2"), always_inline)) inline void Transpose8(
    __m256 r[8]) {
  __m256 t[8];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 2
  for (int i = 0; i < 2; ++i) {
    r[4 * i] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    r[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    r[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    r[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  // r[m] (m < 4), lane L: column 4L + m of rows 0..3; r[4 + m]: rows 4..7.
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m) {
    t[m] = _mm256_permute2f128_ps(r[m], r[4 + m], 0x20);
    t[4 + m] = _mm256_permute2f128_ps(r[m], r[4 + m], 0x31);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) r[i] = t[i];
}

// The scalar edges of a transpose whose first rows_done rows have their
// first cols_done columns done.
inline void TransposeEdges(const float* src, int64_t src_ld, float* dst,
                           int64_t dst_ld, int64_t rows, int64_t cols,
                           int64_t rows_done, int64_t cols_done) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = r < rows_done ? cols_done : 0; c < cols; ++c) {
      dst[c * dst_ld + r] = src[r * src_ld + c];
    }
  }
}

__attribute__((target("avx512f"))) void TransposeAvx512(
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
  TransposeEdges(src, src_ld, dst, dst_ld, rows, cols, rows16, cols16);
}

__attribute__((target("avx2"))) void TransposeAvx2(const float* src,
                                                   int64_t src_ld, float* dst,
                                                   int64_t dst_ld, int64_t rows,
                                                   int64_t cols) {
  const int64_t rows8 = rows / 8 * 8, cols8 = cols / 8 * 8;
  for (int64_t c0 = 0; c0 < cols8; c0 += 8) {
    for (int64_t r0 = 0; r0 < rows8; r0 += 8) {
      __m256 v[8];
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) {
        v[i] = _mm256_loadu_ps(src + (r0 + i) * src_ld + c0);
      }
      Transpose8(v);
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        _mm256_storeu_ps(dst + (c0 + j) * dst_ld + r0, v[j]);
      }
    }
  }
  TransposeEdges(src, src_ld, dst, dst_ld, rows, cols, rows8, cols8);
}

// The edge of a widened row, one element at a time: halves as vcvtph2ps
// converts them (a signalling NaN quieted); a half denormal is normal in
// f32, so only bf16 has any.
__attribute__((target("f16c"))) inline void WidenEdge(
    const uint16_t* s, float* d, int64_t from, int64_t cols, int32_t f16,
    int32_t denormals_as_zero) {
  for (int64_t c = from; c < cols; ++c) {
    d[c] = f16                 ? _cvtsh_ss(s[c])
           : denormals_as_zero ? hgc::Bf16ToFloatDaz(s[c])
                               : hgc::Bf16ToFloat(s[c]);
  }
}

__attribute__((target("avx512f,f16c"))) void WidenAvx512(
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
    WidenEdge(s, d, cols16, cols, f16, denormals_as_zero);
  }
}

__attribute__((target("avx2,f16c"))) void WidenAvx2(
    const uint16_t* src, int64_t src_ld, float* dst, int64_t dst_ld,
    int64_t rows, int64_t cols, int32_t f16, int32_t denormals_as_zero) {
  const int64_t cols8 = cols / 8 * 8;
  const __m256i exponent = _mm256_set1_epi32(0x7f800000);
  const __m256i sign = _mm256_set1_epi32(static_cast<int>(0x80000000u));
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* s = src + r * src_ld;
    float* d = dst + r * dst_ld;
    for (int64_t c = 0; c < cols8; c += 8) {
      const __m128i h =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + c));
      __m256i x = f16 ? _mm256_castps_si256(_mm256_cvtph_ps(h))
                      : _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
      if (denormals_as_zero) {
        // Exponent field 0: keep only the sign.
        const __m256i zero_exp = _mm256_cmpeq_epi32(
            _mm256_and_si256(x, exponent), _mm256_setzero_si256());
        x = _mm256_blendv_epi8(x, _mm256_and_si256(x, sign), zero_exp);
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + c), x);
    }
    WidenEdge(s, d, cols8, cols, f16, denormals_as_zero);
  }
}

// The project's ISA check (CPU, OS state, HGC_MAX_ISA cap) picks the
// vector width; the step code that calls these is compiled for the same.
bool UseAvx512() { return hgc::IsaAvailable(hgc::Isa::kAvx512Core); }

}  // namespace

extern "C" void hgc_transpose_f32(const float* src, int64_t src_ld, float* dst,
                                  int64_t dst_ld, int64_t rows, int64_t cols) {
  if (UseAvx512()) {
    TransposeAvx512(src, src_ld, dst, dst_ld, rows, cols);
  } else {
    TransposeAvx2(src, src_ld, dst, dst_ld, rows, cols);
  }
}

extern "C" void hgc_widen_rows(const uint16_t* src, int64_t src_ld, float* dst,
                               int64_t dst_ld, int64_t rows, int64_t cols,
                               int32_t f16, int32_t denormals_as_zero) {
  if (UseAvx512()) {
    WidenAvx512(src, src_ld, dst, dst_ld, rows, cols, f16, denormals_as_zero);
  } else {
    WidenAvx2(src, src_ld, dst, dst_ld, rows, cols, f16, denormals_as_zero);
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

extern "C" void hgc_dequantize_rows(const uint8_t* src, int64_t src_ld,
                                    float* dst, int64_t dst_ld, int64_t rows,
                                    int64_t cols, int32_t is_signed,
                                    float scale, int32_t zero_point) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* s = src + r * src_ld;
    float* d = dst + r * dst_ld;
    if (is_signed) {
      for (int64_t c = 0; c < cols; ++c) {
        const int32_t x = static_cast<int8_t>(s[c]);
        d[c] = static_cast<float>(x - zero_point) * scale;
      }
    } else {
      for (int64_t c = 0; c < cols; ++c) {
        d[c] =
            static_cast<float>(static_cast<int32_t>(s[c]) - zero_point) * scale;
      }
    }
  }
}
