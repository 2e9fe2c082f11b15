// Attention's int8 packing and conversions (runtime_helpers.h): plain
// loops, compiled once for AVX-512 and once for AVX2 and picked by the
// project's ISA check, so that the compiler vectorizes each for its width.
#include <cmath>
#include <cstdint>

#include "codegen/runtime_helpers.h"
#include "support/cpu_features.h"

namespace {

bool UseAvx512() { return hgc::IsaAvailable(hgc::Isa::kAvx512Core); }

// The u8s8 kernels' operands: A u8, B s8. The other signedness is moved
// over by 128 (a flip of the sign bit); the zero point moves with it.
__attribute__((always_inline)) inline uint8_t AsU8(uint8_t x, bool is_signed) {
  return is_signed ? static_cast<uint8_t>(x ^ 0x80) : x;
}
__attribute__((always_inline)) inline int8_t AsS8(uint8_t x, bool is_signed) {
  return static_cast<int8_t>(is_signed ? x : x ^ 0x80);
}

__attribute__((always_inline)) inline void PackB(const uint8_t* src, int64_t k_stride, int64_t n_stride,
                  int64_t depth, int64_t cols, bool is_signed, int8_t* dst,
                  int64_t ldb, int32_t* col_sums) {
  for (int64_t n = 0; n < cols; ++n) col_sums[n] = 0;
  const int64_t groups = (depth + 3) / 4;
  for (int64_t g = 0; g < groups; ++g) {
    int8_t* out = dst + g * ldb * 4;
    for (int64_t n = 0; n < cols; ++n) {
      int32_t sum = 0;
      for (int64_t i = 0; i < 4; ++i) {
        const int64_t k = g * 4 + i;
        const int8_t x =
            k < depth ? AsS8(src[k * k_stride + n * n_stride], is_signed) : 0;
        out[n * 4 + i] = x;
        sum += x;
      }
      col_sums[n] += sum;
    }
  }
}

__attribute__((always_inline)) inline void PackA(const uint8_t* src, int64_t row_stride, int64_t col_stride,
                  int64_t rows, int64_t cols, bool is_signed, uint8_t* dst,
                  int64_t dst_ld, int32_t* row_sums) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* s = src + r * row_stride;
    uint8_t* d = dst + r * dst_ld;
    int32_t sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const uint8_t x = AsU8(s[c * col_stride], is_signed);
      d[c] = x;
      sum += x;
    }
    row_sums[r] = sum;
  }
}

__attribute__((always_inline)) inline void ToF32(int32_t* x, int64_t ld, int64_t rows, int64_t cols,
                  const int32_t* row_sums, const int32_t* col_sums,
                  int32_t a_zero, int32_t b_zero, int64_t depth, float scale) {
  for (int64_t r = 0; r < rows; ++r) {
    int32_t* row = x + r * ld;
    float* out = reinterpret_cast<float*>(row);
    // sum_k (a - za)(b - zb) = acc - zb * rowsum(a) - za * colsum(b)
    //                          + depth * za * zb, exact in i64.
    const int64_t row_term =
        depth * a_zero * int64_t{b_zero} - int64_t{b_zero} * row_sums[r];
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t exact =
          row[c] + row_term - int64_t{a_zero} * col_sums[c];
      out[c] = static_cast<float>(exact) * scale;
    }
  }
}

__attribute__((always_inline)) inline void QuantizeRows(const float* src, int64_t src_ld, int64_t rows,
                         int64_t cols, float scale, int32_t zero_point,
                         bool to_signed, uint8_t* dst, int64_t dst_ld,
                         int32_t* row_sums) {
  const float lo = to_signed ? -128.0f : 0.0f;
  const float hi = to_signed ? 127.0f : 255.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = src + r * src_ld;
    uint8_t* d = dst + r * dst_ld;
    int32_t sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const float q = s[c] / scale;
      // As the quantize op: half to even in f32, NaN as 0, then the zero
      // point and saturation (the sum is exact below 2^24, and saturates
      // either way above).
      float v = q != q ? 0.0f : std::nearbyint(q);
      v = std::fmin(std::fmax(v + static_cast<float>(zero_point), lo), hi);
      const uint8_t stored = AsU8(
          static_cast<uint8_t>(static_cast<int32_t>(v)), to_signed);
      d[c] = stored;
      sum += stored;
    }
    row_sums[r] = sum;
  }
}

}  // namespace

// Each helper twice: the same loops vectorized for AVX-512 and for AVX2.
#define HGC_TARGETS(name)                                                  \
  template <typename... T>                                                 \
  __attribute__((target("avx512f,avx512bw,avx512vl"))) void name##512(     \
      T... args) {                                                         \
    name(args...);                                                         \
  }                                                                        \
  template <typename... T>                                                 \
  __attribute__((target("avx2,fma"))) void name##256(T... args) {          \
    name(args...);                                                         \
  }

namespace {
HGC_TARGETS(PackB)
HGC_TARGETS(PackA)
HGC_TARGETS(ToF32)
HGC_TARGETS(QuantizeRows)
}  // namespace

#undef HGC_TARGETS

extern "C" void hgc_pack_int8_b(const uint8_t* src, int64_t k_stride,
                                int64_t n_stride, int64_t depth, int64_t cols,
                                int32_t is_signed, int8_t* dst, int64_t ldb,
                                int32_t* col_sums) {
  if (UseAvx512()) {
    PackB512(src, k_stride, n_stride, depth, cols, is_signed != 0, dst, ldb,
             col_sums);
  } else {
    PackB256(src, k_stride, n_stride, depth, cols, is_signed != 0, dst, ldb,
             col_sums);
  }
}

extern "C" void hgc_pack_int8_a(const uint8_t* src, int64_t row_stride,
                                int64_t col_stride, int64_t rows, int64_t cols,
                                int32_t is_signed, uint8_t* dst,
                                int64_t dst_ld, int32_t* row_sums) {
  if (UseAvx512()) {
    PackA512(src, row_stride, col_stride, rows, cols, is_signed != 0, dst,
             dst_ld, row_sums);
  } else {
    PackA256(src, row_stride, col_stride, rows, cols, is_signed != 0, dst,
             dst_ld, row_sums);
  }
}

extern "C" void hgc_int8_to_f32(int32_t* x, int64_t ld, int64_t rows,
                                int64_t cols, const int32_t* row_sums,
                                const int32_t* col_sums, int32_t a_zero,
                                int32_t b_zero, int64_t depth, float scale) {
  if (UseAvx512()) {
    ToF32512(x, ld, rows, cols, row_sums, col_sums, a_zero, b_zero, depth,
             scale);
  } else {
    ToF32256(x, ld, rows, cols, row_sums, col_sums, a_zero, b_zero, depth,
             scale);
  }
}

extern "C" void hgc_quantize_rows_int8(const float* src, int64_t src_ld,
                                       int64_t rows, int64_t cols, float scale,
                                       int32_t zero_point, int32_t to_signed,
                                       uint8_t* dst, int64_t dst_ld,
                                       int32_t* row_sums) {
  if (UseAvx512()) {
    QuantizeRows512(src, src_ld, rows, cols, scale, zero_point, to_signed != 0,
                    dst, dst_ld, row_sums);
  } else {
    QuantizeRows256(src, src_ld, rows, cols, scale, zero_point, to_signed != 0,
                    dst, dst_ld, row_sums);
  }
}
