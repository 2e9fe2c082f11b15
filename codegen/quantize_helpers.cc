// The quantize op on f32 rows (runtime_helpers.h): attention's P as the
// int8 kernels' u8 A (hgc_quantize_rows_int8) and its O rows into a u8 /
// s8 result (hgc_quantize_out). One row loop serves both, with AVX-512 or
// AVX2 registers as the project's ISA check picks (the step code that
// calls them is compiled for the same), the ragged edge masked (AVX-512)
// or element by element (AVX2).
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "codegen/runtime_helpers.h"
#include "support/cpu_features.h"

namespace {

bool UseAvx512() { return hgc::IsaAvailable(hgc::Isa::kAvx512Core); }

// What a row of P is multiplied by before rounding: 1 / (its sum * the
// quantize op's scale), one division a row. Each product is within two
// ulps of the reference's x / sum / scale (two divisions an element), so
// only a value within two ulps of a rounding boundary can land one level
// away from the reference's.
inline float RowFactor(float divisor, float scale) {
  return 1.0f / (divisor * scale);
}

// The bounds and zero point of one row loop: the stored value is
// saturate(round_half_even(q) + zero) to [lo, hi] (NaN as 0), kept as the
// low byte of its int32 (an s8 result's own byte, or, moved by 128 in
// zero, lo and hi, an s8 operand stored as u8 A).
struct Rounding {
  float zero, lo, hi;
};

// q = x / k (kDivide: the quantize op's division) or x * k (a factor that
// folds divisions made once a row), for the lanes in `m` (others 0).
template <bool kDivide>
__attribute__((target("avx512f"), always_inline)) inline __m512i QuantizeVector(
    const float* src, __mmask16 m, __m512 k, __m512 zero, __m512 lo,
    __m512 hi) {
  const __m512 x = _mm512_maskz_loadu_ps(m, src);
  const __m512 q = kDivide ? _mm512_div_ps(x, k) : _mm512_mul_ps(x, k);
  // NaN as 0; the zero point and bounds are exact in f32.
  const __m512 rounded =
      _mm512_maskz_roundscale_ps(_mm512_cmp_ps_mask(q, q, _CMP_ORD_Q), q,
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 v =
      _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(rounded, zero), lo), hi);
  return _mm512_maskz_mov_epi32(m, _mm512_cvtps_epi32(v));
}

// One row of `cols` floats quantized into bytes; returns the sum of the
// stored values.
template <bool kDivide>
__attribute__((target("avx512f,avx512bw,avx512vl"))) int32_t QuantizeRowAvx512(
    const float* src, uint8_t* dst, int64_t cols, float k, const Rounding& r) {
  const __m512 vk = _mm512_set1_ps(k), zero = _mm512_set1_ps(r.zero),
               lo = _mm512_set1_ps(r.lo), hi = _mm512_set1_ps(r.hi);
  __m512i sum = _mm512_setzero_si512();
  const int64_t cols16 = cols / 16 * 16;
  for (int64_t c = 0; c < cols16; c += 16) {
    const __m512i i =
        QuantizeVector<kDivide>(src + c, 0xffff, vk, zero, lo, hi);
    sum = _mm512_add_epi32(sum, i);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + c),
                     _mm512_cvtepi32_epi8(i));
  }
  if (cols16 < cols) {
    const __mmask16 m = static_cast<__mmask16>((1u << (cols - cols16)) - 1);
    const __m512i i =
        QuantizeVector<kDivide>(src + cols16, m, vk, zero, lo, hi);
    sum = _mm512_add_epi32(sum, i);
    _mm_mask_storeu_epi8(dst + cols16, m, _mm512_cvtepi32_epi8(i));
  }
  return _mm512_reduce_add_epi32(sum);
}

// The same 8 elements at a time on AVX2, the ragged end one by one.
template <bool kDivide>
__attribute__((target("avx2,sse4.1"))) int32_t QuantizeRowAvx2(
    const float* src, uint8_t* dst, int64_t cols, float k, const Rounding& r) {
  const __m256 vk = _mm256_set1_ps(k), zero = _mm256_set1_ps(r.zero),
               lo = _mm256_set1_ps(r.lo), hi = _mm256_set1_ps(r.hi);
  const __m256i low_bytes = _mm256_setr_epi8(
      0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
      0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const int64_t cols8 = cols / 8 * 8;
  __m256i sum = _mm256_setzero_si256();
  for (int64_t c = 0; c < cols8; c += 8) {
    const __m256 x = _mm256_loadu_ps(src + c);
    const __m256 q = kDivide ? _mm256_div_ps(x, vk) : _mm256_mul_ps(x, vk);
    const __m256 rounded = _mm256_and_ps(
        _mm256_round_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
        _mm256_cmp_ps(q, q, _CMP_ORD_Q));
    const __m256i i = _mm256_cvtps_epi32(
        _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(rounded, zero), lo), hi));
    sum = _mm256_add_epi32(sum, i);
    // Each lane's low byte (static_cast<uint8_t>), 4 per 128-bit half,
    // then the halves side by side: 8 bytes.
    const __m256i bytes = _mm256_shuffle_epi8(i, low_bytes);
    const __m128i packed = _mm_unpacklo_epi32(
        _mm256_castsi256_si128(bytes), _mm256_extracti128_si256(bytes, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + c), packed);
  }
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sum);
  int32_t total = 0;
  for (int l = 0; l < 8; ++l) total += lanes[l];
  for (int64_t c = cols8; c < cols; ++c) {
    const float q = kDivide ? src[c] / k : src[c] * k;
    float v = q != q ? 0.0f : std::nearbyint(q);
    v = std::fmin(std::fmax(v + r.zero, r.lo), r.hi);
    const int32_t i = static_cast<int32_t>(v);
    dst[c] = static_cast<uint8_t>(i);
    total += i;
  }
  return total;
}

template <bool kDivide>
int32_t QuantizeRow(bool avx512, const float* src, uint8_t* dst, int64_t cols,
                    float k, const Rounding& r) {
  return avx512 ? QuantizeRowAvx512<kDivide>(src, dst, cols, k, r)
                : QuantizeRowAvx2<kDivide>(src, dst, cols, k, r);
}

}  // namespace

extern "C" void hgc_quantize_rows_int8(const float* src, int64_t src_ld,
                                       int64_t rows, int64_t cols,
                                       const float* divisors, float scale,
                                       int32_t zero_point, int32_t to_signed,
                                       uint8_t* dst, int64_t dst_ld,
                                       int32_t* row_sums) {
  // An s8 P is stored moved up by 128, its zero point and bounds with it.
  const float shift = to_signed ? 128.0f : 0.0f;
  const Rounding r{static_cast<float>(zero_point) + shift,
                   (to_signed ? -128.0f : 0.0f) + shift,
                   (to_signed ? 127.0f : 255.0f) + shift};
  const bool avx512 = UseAvx512();
  for (int64_t i = 0; i < rows; ++i) {
    row_sums[i] = QuantizeRow<false>(avx512, src + i * src_ld, dst + i * dst_ld,
                                     cols, RowFactor(divisors[i], scale), r);
  }
}

extern "C" void hgc_quantize_out(const float* src, int64_t src_ld, int64_t rows,
                                 int64_t cols, float scale, int32_t zero_point,
                                 int32_t to_signed, uint8_t* dst,
                                 int64_t dst_row, int64_t dst_col) {
  const Rounding r{static_cast<float>(zero_point), to_signed ? -128.0f : 0.0f,
                   to_signed ? 127.0f : 255.0f};
  const bool avx512 = UseAvx512();
  // Rows whose elements are apart go through a contiguous row first.
  alignas(64) uint8_t row[256];
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t c0 = 0; c0 < cols; c0 += 256) {
      const int64_t n = cols - c0 < 256 ? cols - c0 : 256;
      uint8_t* out = dst + i * dst_row + c0 * dst_col;
      QuantizeRow<true>(avx512, src + i * src_ld + c0, dst_col == 1 ? out : row,
                        n, scale, r);
      if (dst_col != 1) {
        for (int64_t c = 0; c < n; ++c) out[c * dst_col] = row[c];
      }
    }
  }
}
