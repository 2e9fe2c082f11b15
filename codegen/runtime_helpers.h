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

}  // extern "C"

namespace hgc {
namespace codegen {

inline constexpr const char kTransposeF32[] = "hgc_transpose_f32";
inline constexpr const char kWidenRows[] = "hgc_widen_rows";
inline constexpr const char kNarrowRows[] = "hgc_narrow_rows";
inline constexpr const char kDequantizeRows[] = "hgc_dequantize_rows";

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
};

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_RUNTIME_HELPERS_H_
