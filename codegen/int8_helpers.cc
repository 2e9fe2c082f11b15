// Attention's int8 packing and conversions (runtime_helpers.h), with
// AVX-512 or AVX2 registers as the project's ISA check picks (the step
// code that calls them is compiled for the same), the ragged edges element
// by element. The u8s8 kernels read A as u8 and B as s8: an operand of the
// other signedness is moved by 128, a flip of each byte's sign bit.
#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "codegen/runtime_helpers.h"
#include "support/cpu_features.h"

namespace {

bool UseAvx512() { return hgc::IsaAvailable(hgc::Isa::kAvx512Core); }

// --- B packing: VNNI-4 s8 with column sums ---------------------------------

// The bytes of B[k0 .. k0 + 3][n] (zeros past depth) as stored s8.
inline void GroupOf(const uint8_t* src, int64_t k_stride, int64_t n_stride,
                    int64_t depth, int64_t k0, int64_t n, uint8_t flip,
                    int8_t out[4]) {
  for (int64_t i = 0; i < 4; ++i) {
    const int64_t k = k0 + i;
    out[i] = k < depth
                 ? static_cast<int8_t>(src[k * k_stride + n * n_stride] ^ flip)
                 : 0;
  }
}

// The sum of `count` bytes as stored s8 (each xor `flip`): as u8 moved
// up by 128, through vpsadbw, less 128 a byte.
__attribute__((target("avx2"))) int32_t SumStoredS8(const uint8_t* p,
                                                    int64_t count,
                                                    uint8_t flip) {
  const __m256i to_u8 = _mm256_set1_epi8(static_cast<char>(flip ^ 0x80));
  __m256i acc = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m256i x = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)), to_u8);
    acc = _mm256_add_epi64(acc, _mm256_sad_epu8(x, _mm256_setzero_si256()));
  }
  alignas(32) int64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  int64_t sum = lanes[0] + lanes[1] + lanes[2] + lanes[3] - 128 * i;
  for (; i < count; ++i) sum += static_cast<int8_t>(p[i] ^ flip);
  return static_cast<int32_t>(sum);
}

// dst[i] = src[i] ^ flip for i < count; with `sum`, returns the sum of the
// results as u8 (else 0).
__attribute__((target("avx2"))) int32_t XorBytes(const uint8_t* src,
                                                 uint8_t* dst, int64_t count,
                                                 uint8_t flip, bool sum) {
  const __m256i flips = _mm256_set1_epi8(static_cast<char>(flip));
  __m256i acc = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m256i x = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)), flips);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), x);
    if (sum)
      acc = _mm256_add_epi64(acc, _mm256_sad_epu8(x, _mm256_setzero_si256()));
  }
  alignas(32) int64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  int64_t total = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; i < count; ++i) {
    dst[i] = src[i] ^ flip;
    total += dst[i];
  }
  return sum ? static_cast<int32_t>(total) : 0;
}

// K stored keys-major (k_stride 1: a group's four bytes are adjacent): the
// whole groups are a transpose of 32-bit elements (hgc_transpose_f32's
// blocks, when the rows are whole 32-bit elements apart), flipped in place
// when u8; the column sums (where col_sums is not null) are the sums of
// K's rows.
void PackBAdjacentK(const uint8_t* src, int64_t n_stride, int64_t depth,
                    int64_t cols, uint8_t flip, int8_t* dst, int64_t ldb,
                    int32_t* col_sums) {
  const int64_t whole = depth / 4, groups = (depth + 3) / 4;
  if (n_stride % 4 == 0 && whole > 0) {
    hgc_transpose_f32(reinterpret_cast<const float*>(src), n_stride / 4,
                      reinterpret_cast<float*>(dst), ldb, cols, whole);
    if (flip) {
      for (int64_t g = 0; g < whole; ++g) {
        uint8_t* row = reinterpret_cast<uint8_t*>(dst + g * ldb * 4);
        XorBytes(row, row, cols * 4, flip, false);
      }
    }
  } else {
    const uint32_t flip32 = flip * 0x01010101u;
    for (int64_t n = 0; n < cols; ++n) {
      for (int64_t g = 0; g < whole; ++g) {
        uint32_t w;
        std::memcpy(&w, src + n * n_stride + 4 * g, 4);
        w ^= flip32;
        std::memcpy(dst + (g * ldb + n) * 4, &w, 4);
      }
    }
  }
  for (int64_t n = 0; n < cols; ++n) {
    if (col_sums) col_sums[n] = SumStoredS8(src + n * n_stride, depth, flip);
    if (whole < groups) {
      int8_t last[4];
      GroupOf(src, 1, n_stride, depth, 4 * whole, n, flip, last);
      std::memcpy(dst + (whole * ldb + n) * 4, last, 4);
    }
  }
}

// B rows contiguous (n_stride 1, V's rows): four rows interleaved byte by
// byte, 16 columns at a time; with kSums, the column sums widened and
// added as they go.
template <bool kSums>
__attribute__((target("avx2"))) void PackBAdjacentN(
    const uint8_t* src, int64_t k_stride, int64_t depth, int64_t cols,
    uint8_t flip, int8_t* dst, int64_t ldb, int32_t* col_sums) {
  if (kSums) {
    for (int64_t n = 0; n < cols; ++n) col_sums[n] = 0;
  }
  const int64_t groups = (depth + 3) / 4, cols16 = cols / 16 * 16;
  const __m128i flips = _mm_set1_epi8(static_cast<char>(flip));
  for (int64_t g = 0; g < groups; ++g) {
    const uint8_t* rows[4];
    bool present[4];
    for (int i = 0; i < 4; ++i) {
      present[i] = 4 * g + i < depth;
      rows[i] = src + (4 * g + i) * k_stride;
    }
    int8_t* out = dst + g * ldb * 4;
    for (int64_t n = 0; n < cols16; n += 16) {
      __m128i r[4];
      for (int i = 0; i < 4; ++i) {
        r[i] = present[i]
                   ? _mm_xor_si128(
                         _mm_loadu_si128(
                             reinterpret_cast<const __m128i*>(rows[i] + n)),
                         flips)
                   : _mm_setzero_si128();
      }
      const __m128i lo01 = _mm_unpacklo_epi8(r[0], r[1]);
      const __m128i hi01 = _mm_unpackhi_epi8(r[0], r[1]);
      const __m128i lo23 = _mm_unpacklo_epi8(r[2], r[3]);
      const __m128i hi23 = _mm_unpackhi_epi8(r[2], r[3]);
      __m128i* o = reinterpret_cast<__m128i*>(out + n * 4);
      _mm_storeu_si128(o, _mm_unpacklo_epi16(lo01, lo23));
      _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(lo01, lo23));
      _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(hi01, hi23));
      _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(hi01, hi23));
      if (!kSums) continue;
      __m256i* sums = reinterpret_cast<__m256i*>(col_sums + n);
      __m256i s0 = _mm256_loadu_si256(sums), s1 = _mm256_loadu_si256(sums + 1);
      for (int i = 0; i < 4; ++i) {
        s0 = _mm256_add_epi32(s0, _mm256_cvtepi8_epi32(r[i]));
        s1 =
            _mm256_add_epi32(s1, _mm256_cvtepi8_epi32(_mm_srli_si128(r[i], 8)));
      }
      _mm256_storeu_si256(sums, s0);
      _mm256_storeu_si256(sums + 1, s1);
    }
    for (int64_t n = cols16; n < cols; ++n) {
      int8_t group[4];
      GroupOf(src, k_stride, 1, depth, 4 * g, n, flip, group);
      std::memcpy(out + n * 4, group, 4);
      if (!kSums) continue;
      for (int i = 0; i < 4; ++i) col_sums[n] += group[i];
    }
  }
}

// Any strides, element by element (the sums where col_sums is not null).
void PackBStrided(const uint8_t* src, int64_t k_stride, int64_t n_stride,
                  int64_t depth, int64_t cols, uint8_t flip, int8_t* dst,
                  int64_t ldb, int32_t* col_sums) {
  const int64_t groups = (depth + 3) / 4;
  for (int64_t n = 0; n < cols; ++n) {
    int32_t sum = 0;
    for (int64_t g = 0; g < groups; ++g) {
      int8_t group[4];
      GroupOf(src, k_stride, n_stride, depth, 4 * g, n, flip, group);
      std::memcpy(dst + (g * ldb + n) * 4, group, 4);
      for (int i = 0; i < 4; ++i) sum += group[i];
    }
    if (col_sums) col_sums[n] = sum;
  }
}

// --- s32 to f32 with the zero-point terms ----------------------------------

// The row's constant term, depth * za * zb - zb * rowsum(A): exact in
// i32 for the shapes the int8 path takes (Int8AttentionFits).
inline int32_t RowTerm(int64_t depth, int32_t a_zero, int32_t b_zero,
                       const int32_t* row_sum) {
  if (b_zero == 0) return 0;  // the row sums are not there to read
  return static_cast<int32_t>(depth * a_zero * b_zero -
                              int64_t{b_zero} * *row_sum);
}

// The columns' constant terms, -a_zero * colsum(B) (col_sums unread
// where a_zero is 0).
inline void ColumnTerms(const int32_t* col_sums, int32_t a_zero, int64_t cols,
                        int32_t* terms) {
  for (int64_t c = 0; c < cols; ++c) {
    terms[c] = a_zero == 0 ? 0 : -a_zero * col_sums[c];
  }
}

// The score ops hgc_int8_scores applies after the conversion; null: none.
struct ScoreOps {
  const float* scale = nullptr;
  const float* mask = nullptr;
  float* row_max = nullptr;  // 16 lanes a row
};

// The longest rows the helpers convert (attention's kMaxKeys): their
// column terms fit a stack array.
constexpr int64_t kMaxCols = 8192;

// One vector of ToF32Avx512's row (`m`: its lanes), the score ops
// compiled in or out.
template <bool kScale, bool kMask>
__attribute__((target("avx512f"), always_inline)) inline __m512 ConvertVector(
    const int32_t* acc, const int32_t* col_terms, const float* mask,
    __m512i term, __m512 scale, __m512 post, __mmask16 m) {
  const __m512i v =
      _mm512_add_epi32(_mm512_add_epi32(_mm512_maskz_loadu_epi32(m, acc), term),
                       _mm512_maskz_loadu_epi32(m, col_terms));
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), scale);
  if (kScale) f = _mm512_mul_ps(f, post);
  if (kMask) f = _mm512_add_ps(f, _mm512_maskz_loadu_ps(m, mask));
  return f;
}

template <bool kScale, bool kMask, bool kMax>
__attribute__((target("avx512f"))) void ToF32Avx512(
    const int32_t* x, int64_t ld, int64_t rows, int64_t cols,
    const int32_t* row_sums, const int32_t* col_sums, int32_t a_zero,
    int32_t b_zero, int64_t depth, float scale, const ScoreOps& ops, float* dst,
    int64_t dst_ld) {
  // -za * colsum(B), once for all rows.
  alignas(64) int32_t col_terms[kMaxCols];
  ColumnTerms(col_sums, a_zero, cols, col_terms);
  const __m512 sc = _mm512_set1_ps(scale);
  const __m512 post = _mm512_set1_ps(kScale ? *ops.scale : 1.0f);
  const int64_t cols16 = cols / 16 * 16;
  const __mmask16 all = 0xffff;
  const __mmask16 tail = static_cast<__mmask16>((1u << (cols - cols16)) - 1);
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* row = x + r * ld;
    float* out = dst + r * dst_ld;
    const __m512i term =
        _mm512_set1_epi32(RowTerm(depth, a_zero, b_zero, row_sums + r));
    __m512 max = _mm512_set1_ps(-INFINITY);
    for (int64_t c = 0; c < cols16; c += 16) {
      const __m512 f = ConvertVector<kScale, kMask>(
          row + c, col_terms + c, ops.mask + c, term, sc, post, all);
      if (kMax) max = _mm512_max_ps(max, f);
      _mm512_storeu_ps(out + c, f);
    }
    if (tail) {
      const __m512 f =
          ConvertVector<kScale, kMask>(row + cols16, col_terms + cols16,
                                       ops.mask + cols16, term, sc, post, tail);
      if (kMax) max = _mm512_mask_max_ps(max, tail, max, f);
      _mm512_mask_storeu_ps(out + cols16, tail, f);
    }
    if (kMax) _mm512_storeu_ps(ops.row_max + 16 * r, max);
  }
}

// ToF32Avx512 for `ops`.
void ToF32Avx512(const int32_t* x, int64_t ld, int64_t rows, int64_t cols,
                 const int32_t* row_sums, const int32_t* col_sums,
                 int32_t a_zero, int32_t b_zero, int64_t depth, float scale,
                 const ScoreOps& ops, float* dst, int64_t dst_ld) {
  using Fn = void (*)(const int32_t*, int64_t, int64_t, int64_t, const int32_t*,
                      const int32_t*, int32_t, int32_t, int64_t, float,
                      const ScoreOps&, float*, int64_t);
  static constexpr Fn kVariants[8] = {
      ToF32Avx512<false, false, false>, ToF32Avx512<false, false, true>,
      ToF32Avx512<false, true, false>,  ToF32Avx512<false, true, true>,
      ToF32Avx512<true, false, false>,  ToF32Avx512<true, false, true>,
      ToF32Avx512<true, true, false>,   ToF32Avx512<true, true, true>};
  const int variant =
      (ops.scale ? 4 : 0) | (ops.mask ? 2 : 0) | (ops.row_max ? 1 : 0);
  kVariants[variant](x, ld, rows, cols, row_sums, col_sums, a_zero, b_zero,
                     depth, scale, ops, dst, dst_ld);
}

__attribute__((target("avx2"))) void ToF32Avx2(
    const int32_t* x, int64_t ld, int64_t rows, int64_t cols,
    const int32_t* row_sums, const int32_t* col_sums, int32_t a_zero,
    int32_t b_zero, int64_t depth, float scale, const ScoreOps& ops, float* dst,
    int64_t dst_ld) {
  alignas(32) int32_t col_terms[kMaxCols];
  ColumnTerms(col_sums, a_zero, cols, col_terms);
  const __m256 sc = _mm256_set1_ps(scale);
  const float post_scale = ops.scale ? *ops.scale : 1.0f;
  const __m256 post = _mm256_set1_ps(post_scale);
  const int64_t cols8 = cols / 8 * 8;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* row = x + r * ld;
    float* out_row = dst + r * dst_ld;
    const int32_t t = RowTerm(depth, a_zero, b_zero, row_sums + r);
    const __m256i term = _mm256_set1_epi32(t);
    // Row maxima in 16 lanes, column c in lane c % 16: vectors at an even
    // multiple of 8 columns fold into the low 8, the others the high 8.
    // max_ps(f, m) keeps m where f is NaN, as the scalar f > m ? f : m.
    __m256 max_lo = _mm256_set1_ps(-INFINITY), max_hi = max_lo;
    for (int64_t c = 0; c < cols8; c += 8) {
      const __m256i acc =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + c));
      const __m256i ct =
          _mm256_load_si256(reinterpret_cast<const __m256i*>(col_terms + c));
      const __m256i v = _mm256_add_epi32(_mm256_add_epi32(acc, term), ct);
      __m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(v), sc);
      if (ops.scale) f = _mm256_mul_ps(f, post);
      if (ops.mask) f = _mm256_add_ps(f, _mm256_loadu_ps(ops.mask + c));
      float* out = out_row + c;
      _mm256_storeu_ps(out, f);
      if (ops.row_max) {
        if (c % 16 == 0) {
          max_lo = _mm256_max_ps(f, max_lo);
        } else {
          max_hi = _mm256_max_ps(f, max_hi);
        }
      }
    }
    alignas(32) float lanes[16];
    _mm256_store_ps(lanes, max_lo);
    _mm256_store_ps(lanes + 8, max_hi);
    for (int64_t c = cols8; c < cols; ++c) {
      int32_t acc;
      std::memcpy(&acc, row + c, 4);
      float f = static_cast<float>(acc + t + col_terms[c]) * scale;
      if (ops.scale) f *= post_scale;
      if (ops.mask) f += ops.mask[c];
      out_row[c] = f;
      float* lane = &lanes[c % 16];
      *lane = f > *lane ? f : *lane;
    }
    if (ops.row_max) std::memcpy(ops.row_max + 16 * r, lanes, sizeof(lanes));
  }
}

}  // namespace

extern "C" void hgc_pack_int8_b(const uint8_t* src, int64_t k_stride,
                                int64_t n_stride, int64_t depth, int64_t cols,
                                int32_t is_signed, int8_t* dst, int64_t ldb,
                                int32_t with_sums, int32_t* col_sums) {
  const uint8_t flip = is_signed ? 0 : 0x80;
  int32_t* sums = with_sums ? col_sums : nullptr;
  if (k_stride == 1) {
    PackBAdjacentK(src, n_stride, depth, cols, flip, dst, ldb, sums);
  } else if (n_stride == 1) {
    if (sums) {
      PackBAdjacentN<true>(src, k_stride, depth, cols, flip, dst, ldb, sums);
    } else {
      PackBAdjacentN<false>(src, k_stride, depth, cols, flip, dst, ldb, sums);
    }
  } else {
    PackBStrided(src, k_stride, n_stride, depth, cols, flip, dst, ldb, sums);
  }
}

extern "C" void hgc_pack_int8_a(const uint8_t* src, int64_t row_stride,
                                int64_t col_stride, int64_t rows, int64_t cols,
                                int32_t is_signed, uint8_t* dst, int64_t dst_ld,
                                int32_t with_sums, int32_t* row_sums) {
  const uint8_t flip = is_signed ? 0x80 : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* s = src + r * row_stride;
    uint8_t* d = dst + r * dst_ld;
    int32_t sum = 0;
    if (col_stride == 1) {
      sum = XorBytes(s, d, cols, flip, with_sums != 0);
    } else {
      for (int64_t c = 0; c < cols; ++c) {
        const uint8_t x = s[c * col_stride] ^ flip;
        d[c] = x;
        sum += x;
      }
    }
    if (with_sums) row_sums[r] = sum;
  }
}

namespace {

void ToF32(const int32_t* x, int64_t ld, int64_t rows, int64_t cols,
           const int32_t* row_sums, const int32_t* col_sums, int32_t a_zero,
           int32_t b_zero, int64_t depth, float scale, const ScoreOps& ops,
           float* dst, int64_t dst_ld) {
  if (UseAvx512()) {
    ToF32Avx512(x, ld, rows, cols, row_sums, col_sums, a_zero, b_zero, depth,
                scale, ops, dst, dst_ld);
  } else {
    ToF32Avx2(x, ld, rows, cols, row_sums, col_sums, a_zero, b_zero, depth,
              scale, ops, dst, dst_ld);
  }
}

}  // namespace

extern "C" void hgc_int8_to_f32(const int32_t* x, int64_t ld, int64_t rows,
                                int64_t cols, const int32_t* row_sums,
                                const int32_t* col_sums, int32_t a_zero,
                                int32_t b_zero, int64_t depth, float scale,
                                float* dst, int64_t dst_ld) {
  ToF32(x, ld, rows, cols, row_sums, col_sums, a_zero, b_zero, depth, scale,
        ScoreOps{}, dst, dst_ld);
}

extern "C" void hgc_int8_scores(int32_t* x, int64_t ld, int64_t rows,
                                int64_t cols, const int32_t* row_sums,
                                const int32_t* col_sums, int32_t a_zero,
                                int32_t b_zero, int64_t depth, float scale,
                                int32_t has_scale, const float* score_scale,
                                int32_t has_mask, const float* mask,
                                int32_t has_max, float* row_max) {
  ScoreOps ops;
  if (has_scale) ops.scale = score_scale;
  if (has_mask) ops.mask = mask;
  if (has_max) ops.row_max = row_max;
  ToF32(x, ld, rows, cols, row_sums, col_sums, a_zero, b_zero, depth, scale,
        ops, reinterpret_cast<float*>(x), ld);
}
