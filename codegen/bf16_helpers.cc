// Attention's bf16 packing (runtime_helpers.h), with AVX-512 or AVX2
// registers as the project's ISA check picks (the step code that calls
// them is compiled for the same), the ragged edges element by element.
// B and A elements are moved as 16-bit patterns, never converted; P's
// rows are narrowed from f32 as hgc::FloatToBf16 rounds.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "codegen/runtime_helpers.h"
#include "support/cpu_features.h"
#include "support/float16.h"

namespace {

bool UseAvx512() { return hgc::IsaAvailable(hgc::Isa::kAvx512Core); }

// B[k][n] as `src` holds it, zero past depth (the last pair's padding).
inline uint16_t ElementOf(const uint16_t* src, int64_t k_stride,
                          int64_t n_stride, int64_t depth, int64_t k,
                          int64_t n) {
  return k < depth ? src[k * k_stride + n * n_stride] : 0;
}

// Pair t of column n, B[2t][n] and B[2t + 1][n], stored.
inline void StorePair(const uint16_t* src, int64_t k_stride, int64_t n_stride,
                      int64_t depth, int64_t t, int64_t n, uint16_t* dst,
                      int64_t ldb) {
  uint16_t* out = dst + (t * ldb + n) * 2;
  out[0] = ElementOf(src, k_stride, n_stride, depth, 2 * t, n);
  out[1] = ElementOf(src, k_stride, n_stride, depth, 2 * t + 1, n);
}

// K stored keys-major (k_stride 1: a pair's two elements are one 32-bit
// word of B's column): the whole pairs are a transpose of 32-bit elements
// (hgc_transpose_f32's blocks, when the columns are whole words apart),
// the last pair of an odd depth padded with a zero.
void PackBAdjacentK(const uint16_t* src, int64_t n_stride, int64_t depth,
                    int64_t cols, uint16_t* dst, int64_t ldb) {
  const int64_t whole = depth / 2;
  if (n_stride % 2 == 0 && whole > 0) {
    hgc_transpose_f32(reinterpret_cast<const float*>(src), n_stride / 2,
                      reinterpret_cast<float*>(dst), ldb, cols, whole);
  } else {
    for (int64_t n = 0; n < cols; ++n) {
      for (int64_t t = 0; t < whole; ++t) {
        std::memcpy(dst + (t * ldb + n) * 2, src + n * n_stride + 2 * t, 4);
      }
    }
  }
  if (whole * 2 == depth) return;
  for (int64_t n = 0; n < cols; ++n) {
    StorePair(src, 1, n_stride, depth, whole, n, dst, ldb);
  }
}

// B rows contiguous (n_stride 1, V's rows): two rows interleaved element by
// element, 32 columns a step (vpermt2w); returns the columns done.
__attribute__((target("avx512f,avx512bw"))) int64_t InterleaveAvx512(
    const uint16_t* r0, const uint16_t* r1, int64_t cols, uint16_t* out) {
  alignas(64) uint16_t lo[32], hi[32];
  for (int i = 0; i < 16; ++i) {
    lo[2 * i] = static_cast<uint16_t>(i);
    lo[2 * i + 1] = static_cast<uint16_t>(32 + i);
    hi[2 * i] = static_cast<uint16_t>(16 + i);
    hi[2 * i + 1] = static_cast<uint16_t>(48 + i);
  }
  const __m512i idx_lo = _mm512_load_si512(lo), idx_hi = _mm512_load_si512(hi);
  int64_t n = 0;
  for (; n + 32 <= cols; n += 32) {
    const __m512i a = _mm512_loadu_si512(r0 + n);
    const __m512i b = r1 ? _mm512_loadu_si512(r1 + n) : _mm512_setzero_si512();
    _mm512_storeu_si512(out + 2 * n, _mm512_permutex2var_epi16(a, idx_lo, b));
    _mm512_storeu_si512(out + 2 * n + 32,
                        _mm512_permutex2var_epi16(a, idx_hi, b));
  }
  return n;
}

// The same 16 columns a step: vpunpck*wd interleave within 128-bit
// lanes, vperm2i128 puts the lanes in order.
__attribute__((target("avx2"))) int64_t InterleaveAvx2(const uint16_t* r0,
                                                       const uint16_t* r1,
                                                       int64_t cols,
                                                       uint16_t* out) {
  int64_t n = 0;
  for (; n + 16 <= cols; n += 16) {
    const __m256i a =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0 + n));
    const __m256i b =
        r1 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1 + n))
           : _mm256_setzero_si256();
    const __m256i lo = _mm256_unpacklo_epi16(a, b);
    const __m256i hi = _mm256_unpackhi_epi16(a, b);
    __m256i* o = reinterpret_cast<__m256i*>(out + 2 * n);
    _mm256_storeu_si256(o, _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(lo, hi, 0x31));
  }
  return n;
}

void PackBAdjacentN(const uint16_t* src, int64_t k_stride, int64_t depth,
                    int64_t cols, uint16_t* dst, int64_t ldb) {
  const bool avx512 = UseAvx512();
  for (int64_t t = 0; t < (depth + 1) / 2; ++t) {
    const uint16_t* r0 = src + 2 * t * k_stride;
    const uint16_t* r1 = 2 * t + 1 < depth ? r0 + k_stride : nullptr;
    uint16_t* out = dst + t * ldb * 2;
    const int64_t done = avx512 ? InterleaveAvx512(r0, r1, cols, out)
                                : InterleaveAvx2(r0, r1, cols, out);
    for (int64_t n = done; n < cols; ++n) {
      out[2 * n] = r0[n];
      out[2 * n + 1] = r1 ? r1[n] : 0;
    }
  }
}

// --- f32 rows narrowed to bf16 -----------------------------------------------

// 16 f32 values rounded to nearest even, NaNs quieted, as FloatToBf16.
__attribute__((target("avx512f"), always_inline)) inline __m256i NarrowAvx512(
    __m512i u) {
  const __m512i abs = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan =
      _mm512_cmpgt_epi32_mask(abs, _mm512_set1_epi32(0x7f800000));
  const __m512i odd =
      _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(
      _mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))),
      16);
  const __m512i quiet =
      _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet));
}

__attribute__((target("avx512f"))) void NarrowRowsAvx512(
    const float* src, int64_t src_ld, int64_t rows, int64_t cols, uint16_t* dst,
    int64_t dst_ld) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * src_ld;
    uint16_t* d = dst + r * dst_ld;
    int64_t c = 0;
    for (; c + 16 <= cols; c += 16) {
      const __m512i u = _mm512_castps_si512(_mm512_loadu_ps(s + c));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + c), NarrowAvx512(u));
    }
    for (; c < cols; ++c) d[c] = hgc::FloatToBf16(s[c]);
  }
}

// 8 f32 values as NarrowAvx512 rounds them, in the low 16 bits of each lane.
__attribute__((target("avx2"), always_inline)) inline __m256i NarrowAvx2(
    __m256i u) {
  const __m256i abs = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));
  const __m256i odd =
      _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(
      _mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff))),
      16);
  const __m256i quiet =
      _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet, nan);
}

__attribute__((target("avx2"))) void NarrowRowsAvx2(const float* src,
                                                    int64_t src_ld,
                                                    int64_t rows, int64_t cols,
                                                    uint16_t* dst,
                                                    int64_t dst_ld) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * src_ld;
    uint16_t* d = dst + r * dst_ld;
    int64_t c = 0;
    for (; c + 16 <= cols; c += 16) {
      const __m256i lo =
          NarrowAvx2(_mm256_castps_si256(_mm256_loadu_ps(s + c)));
      const __m256i hi =
          NarrowAvx2(_mm256_castps_si256(_mm256_loadu_ps(s + c + 8)));
      // vpackusdw packs within 128-bit lanes: lo 0-3, hi 0-3 | lo 4-7, hi
      // 4-7; the permute puts them in order (no lane exceeds 0xffff).
      const __m256i packed = _mm256_permute4x64_epi64(
          _mm256_packus_epi32(lo, hi), _MM_SHUFFLE(3, 1, 2, 0));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + c), packed);
    }
    for (; c < cols; ++c) d[c] = hgc::FloatToBf16(s[c]);
  }
}

}  // namespace

extern "C" void hgc_pack_bf16_b(const uint16_t* src, int64_t k_stride,
                                int64_t n_stride, int64_t depth, int64_t cols,
                                uint16_t* dst, int64_t ldb) {
  if (k_stride == 1) {
    PackBAdjacentK(src, n_stride, depth, cols, dst, ldb);
  } else if (n_stride == 1) {
    PackBAdjacentN(src, k_stride, depth, cols, dst, ldb);
  } else {
    for (int64_t t = 0; t < (depth + 1) / 2; ++t) {
      for (int64_t n = 0; n < cols; ++n) {
        StorePair(src, k_stride, n_stride, depth, t, n, dst, ldb);
      }
    }
  }
}

extern "C" void hgc_copy_bf16_rows(const uint16_t* src, int64_t row_stride,
                                   int64_t col_stride, int64_t rows,
                                   int64_t cols, uint16_t* dst,
                                   int64_t dst_ld) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* s = src + r * row_stride;
    uint16_t* d = dst + r * dst_ld;
    if (col_stride == 1) {
      std::memcpy(d, s, cols * 2);
    } else {
      for (int64_t c = 0; c < cols; ++c) d[c] = s[c * col_stride];
    }
  }
}

extern "C" void hgc_narrow_bf16_rows(const float* src, int64_t src_ld,
                                     int64_t rows, int64_t cols, uint16_t* dst,
                                     int64_t dst_ld) {
  if (UseAvx512()) {
    NarrowRowsAvx512(src, src_ld, rows, cols, dst, dst_ld);
  } else {
    NarrowRowsAvx2(src, src_ld, rows, cols, dst, dst_ld);
  }
}
