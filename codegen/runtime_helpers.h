// Host functions that generated step code calls by name (the JIT resolves
// them as absolute symbols, kRuntimeHelperSymbols): work that is the same
// for every graph, compiled once with the project instead of JIT-compiled
// per step.
#ifndef HGC_CODEGEN_RUNTIME_HELPERS_H_
#define HGC_CODEGEN_RUNTIME_HELPERS_H_

#include <cstdint>

extern "C" {

// dst[c * dst_ld + r] = src[r * src_ld + c] for r < rows, c < cols (f32):
// 16 x 16 blocks through AVX-512 registers (8 x 8 through AVX2 ones where
// IsaAvailable(kAvx512Core) says no), the edges element by element.
// Blocks go down a column of blocks first, so that 16 dst rows are written
// at a time (a row of blocks would write `cols` dst rows at once: a
// 384 x 64 K block took 9.1 us that way, 7.3-8.3 us this way, in L2).
// Packs a K block as Kᵀ for attention's Q·Kᵀ BRGEMM.
void hgc_transpose_f32(const float* src, int64_t src_ld, float* dst,
                       int64_t dst_ld, int64_t rows, int64_t cols);

// dst[r * dst_ld + c] = src[r * src_ld + c] widened to f32 for r < rows,
// c < cols, exactly: `src` holds bf16 bits, or IEEE half bits when `f16`
// is nonzero. With `denormals_as_zero` nonzero, results whose exponent
// field is 0 become zeros of their sign (bf16 denormals; an f16 denormal
// is normal in f32). A NaN stays a NaN. 16 elements at a time through
// AVX-512 registers (8 through AVX2 ones without AVX-512), the ragged right
// edge one by one. Widens attention's
// bf16 / f16 Q, K and V rows into f32 scratch.
void hgc_widen_rows(const uint16_t* src, int64_t src_ld, float* dst,
                    int64_t dst_ld, int64_t rows, int64_t cols, int32_t f16,
                    int32_t denormals_as_zero);

// dst[r * dst_row + c * dst_col] = src[r * src_ld + c] narrowed to bf16
// bits, or IEEE half bits when `f16` is nonzero, rounding to nearest even
// (a NaN keeps its sign and leading payload, quieted), for r < rows,
// c < cols: as the generated code stores a 16-bit row, with any strides.
// Writes attention results whose rows are not contiguous.
void hgc_narrow_rows(const float* src, int64_t src_ld, uint16_t* dst,
                     int64_t dst_row, int64_t dst_col, int64_t rows,
                     int64_t cols, int32_t f16);

// dst[r * dst_ld + c] = f32(src[r * src_ld + c] - zero_point) * scale for
// r < rows, c < cols: the dequantize op's arithmetic (the difference is
// exact in f32, then one rounding), on u8 bytes, or s8 ones when `is_signed`
// is nonzero. Dequantizes attention's u8 / s8 Q, K and V rows (the QDQ
// form) into f32 scratch.
void hgc_dequantize_rows(const uint8_t* src, int64_t src_ld, float* dst,
                         int64_t dst_ld, int64_t rows, int64_t cols,
                         int32_t is_signed, float scale, int32_t zero_point);
// dst[r * dst_row + c * dst_col] = src[r * src_ld + c] quantized exactly
// as the quantize op does (x / scale rounded half to even in f32, NaN as
// 0, plus zero_point, saturated to u8, or to s8 when `to_signed`, stored
// as its byte): attention's O rows written to a u8 / s8 result
// (quantize_helpers.cc, as is hgc_quantize_rows_int8).
void hgc_quantize_out(const float* src, int64_t src_ld, int64_t rows,
                      int64_t cols, float scale, int32_t zero_point,
                      int32_t to_signed, uint8_t* dst, int64_t dst_row,
                      int64_t dst_col);

// Attention's int8 path (int8_helpers.cc; P's quantization in
// quantize_helpers.cc). The u8s8 kernels read A as u8
// and B as s8 (brgemm_desc.h): an operand of the other signedness is moved
// by 128 (its sign bit flipped) and its zero point with it.
//
// B[k][n] = src[k * k_stride + n * n_stride] for k < depth, n < cols (u8,
// or s8 when `is_signed`), stored as s8 in the VNNI-4 layout with ldb
// columns (rows past depth in the last group zero); with `with_sums`,
// col_sums[n] = the sum of column n as stored (untouched otherwise: the
// other operand's zero point is 0 and the conversion never reads them).
void hgc_pack_int8_b(const uint8_t* src, int64_t k_stride, int64_t n_stride,
                     int64_t depth, int64_t cols, int32_t is_signed,
                     int8_t* dst, int64_t ldb, int32_t with_sums,
                     int32_t* col_sums);
// dst[r * dst_ld + c] = src[r * row_stride + c * col_stride] as u8 (s8
// moved by 128 when `is_signed`); with `with_sums`, row_sums[r] = the sum
// of row r as stored.
void hgc_pack_int8_a(const uint8_t* src, int64_t row_stride, int64_t col_stride,
                     int64_t rows, int64_t cols, int32_t is_signed,
                     uint8_t* dst, int64_t dst_ld, int32_t with_sums,
                     int32_t* row_sums);
// The s32 sums x[r * ld + c] of a u8s8 product over `depth` turned into
// dst[r * dst_ld + c] = f32(sum_k (a - a_zero) * (b - b_zero)) * scale,
// from the sums and the operands' row and column sums (exact in s32 for
// the shapes attention's int8 path takes: no term reaches 2^29; then
// rounded). dst may be x itself (dst_ld == ld). row_sums are read only
// where b_zero is nonzero, col_sums only where a_zero is.
void hgc_int8_to_f32(const int32_t* x, int64_t ld, int64_t rows, int64_t cols,
                     const int32_t* row_sums, const int32_t* col_sums,
                     int32_t a_zero, int32_t b_zero, int64_t depth, float scale,
                     float* dst, int64_t dst_ld);
// hgc_int8_to_f32 in place for attention's scores, then the score ops
// Q·Kᵀ's f32 kernel runs (AttentionPlan::kernel_scores), in the reference's
// order: a multiply by *score_scale when `has_scale`, an add of the row `mask`
// (cols floats, the same for every row) when `has_mask`; with `has_max`,
// row_max[16 r + l] = the max of row r's values in columns l mod 16 (as
// vmaxps takes it).
void hgc_int8_scores(int32_t* x, int64_t ld, int64_t rows, int64_t cols,
                     const int32_t* row_sums, const int32_t* col_sums,
                     int32_t a_zero, int32_t b_zero, int64_t depth, float scale,
                     int32_t has_scale, const float* score_scale,
                     int32_t has_mask, const float* mask, int32_t has_max,
                     float* row_max);
// f32 rows divided by divisors[r] (softmax's sum) and quantized as the
// quantize op does (x / scale rounded half to even in f32, NaN as 0, plus
// zero_point, saturated to u8, or to s8 when `to_signed`), stored as u8 A
// (s8 moved by 128); row_sums as stored. Both divisions are one
// multiplication by 1 / (divisors[r] * scale), computed once a row: within
// a few ulps of the two divisions, so a value that close to a rounding
// boundary may land one level away.
void hgc_quantize_rows_int8(const float* src, int64_t src_ld, int64_t rows,
                            int64_t cols, const float* divisors, float scale,
                            int32_t zero_point, int32_t to_signed, uint8_t* dst,
                            int64_t dst_ld, int32_t* row_sums);

// Attention's bf16 path (bf16_helpers.cc): bf16 operands as the bf16
// kernels read them, moved as 16-bit patterns.
//
// B[k][n] = src[k * k_stride + n * n_stride] for k < depth, n < cols,
// stored in the VNNI-2 layout with ldb columns (element ((k / 2) * ldb +
// n) * 2 + k % 2; the second of the last pair zero when depth is odd).
void hgc_pack_bf16_b(const uint16_t* src, int64_t k_stride, int64_t n_stride,
                     int64_t depth, int64_t cols, uint16_t* dst, int64_t ldb);
// dst[r * dst_ld + c] = src[r * row_stride + c * col_stride] for r < rows,
// c < cols: Q rows that are not contiguous, as A.
void hgc_copy_bf16_rows(const uint16_t* src, int64_t row_stride,
                        int64_t col_stride, int64_t rows, int64_t cols,
                        uint16_t* dst, int64_t dst_ld);
// dst[r * dst_ld + c] = src[r * src_ld + c] narrowed to bf16 bits as
// hgc_narrow_rows narrows them (nearest even; a NaN keeps its sign and
// leading payload, quieted), 16 elements at a time: P's rows as P·V's A.
void hgc_narrow_bf16_rows(const float* src, int64_t src_ld, int64_t rows,
                          int64_t cols, uint16_t* dst, int64_t dst_ld);

}  // extern "C"

namespace hgc {
namespace codegen {

inline constexpr const char kTransposeF32[] = "hgc_transpose_f32";
inline constexpr const char kWidenRows[] = "hgc_widen_rows";
inline constexpr const char kNarrowRows[] = "hgc_narrow_rows";
inline constexpr const char kDequantizeRows[] = "hgc_dequantize_rows";
inline constexpr const char kPackInt8B[] = "hgc_pack_int8_b";
inline constexpr const char kPackInt8A[] = "hgc_pack_int8_a";
inline constexpr const char kInt8ToF32[] = "hgc_int8_to_f32";
inline constexpr const char kQuantizeRowsInt8[] = "hgc_quantize_rows_int8";
inline constexpr const char kInt8Scores[] = "hgc_int8_scores";
inline constexpr const char kQuantizeOut[] = "hgc_quantize_out";
inline constexpr const char kPackBf16B[] = "hgc_pack_bf16_b";
inline constexpr const char kCopyBf16Rows[] = "hgc_copy_bf16_rows";
inline constexpr const char kNarrowBf16Rows[] = "hgc_narrow_bf16_rows";

// A helper's name, as step code declares it, and its address.
struct RuntimeHelperSymbol {
  const char* name;
  const void* address;
};

// Every helper above.
inline const RuntimeHelperSymbol kRuntimeHelperSymbols[] = {
    {kTransposeF32, reinterpret_cast<const void*>(&hgc_transpose_f32)},
    {kWidenRows, reinterpret_cast<const void*>(&hgc_widen_rows)},
    {kNarrowRows, reinterpret_cast<const void*>(&hgc_narrow_rows)},
    {kDequantizeRows, reinterpret_cast<const void*>(&hgc_dequantize_rows)},
    {kPackInt8B, reinterpret_cast<const void*>(&hgc_pack_int8_b)},
    {kPackInt8A, reinterpret_cast<const void*>(&hgc_pack_int8_a)},
    {kInt8ToF32, reinterpret_cast<const void*>(&hgc_int8_to_f32)},
    {kQuantizeRowsInt8, reinterpret_cast<const void*>(&hgc_quantize_rows_int8)},
    {kInt8Scores, reinterpret_cast<const void*>(&hgc_int8_scores)},
    {kQuantizeOut, reinterpret_cast<const void*>(&hgc_quantize_out)},
    {kPackBf16B, reinterpret_cast<const void*>(&hgc_pack_bf16_b)},
    {kCopyBf16Rows, reinterpret_cast<const void*>(&hgc_copy_bf16_rows)},
    {kNarrowBf16Rows, reinterpret_cast<const void*>(&hgc_narrow_bf16_rows)},
};

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_RUNTIME_HELPERS_H_
