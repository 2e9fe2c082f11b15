// Host functions that generated step code calls by name (the JIT resolves
// them as absolute symbols, RuntimeHelperSymbols): work that is the same
// for every graph, compiled once with the project instead of JIT-compiled
// per step.
#ifndef HGC_CODEGEN_RUNTIME_HELPERS_H_
#define HGC_CODEGEN_RUNTIME_HELPERS_H_

#include <cstdint>

extern "C" {

// dst[c * dst_ld + r] = src[r * src_ld + c] for r < rows, c < cols (f32):
// 16 x 16 blocks through AVX-512 registers, the edges element by element.
// Packs a K block as Kᵀ for attention's Q·Kᵀ BRGEMM.
void hgc_transpose_f32(const float* src, int64_t src_ld, float* dst,
                       int64_t dst_ld, int64_t rows, int64_t cols);

}  // extern "C"

namespace hgc {
namespace codegen {

inline constexpr const char kTransposeF32[] = "hgc_transpose_f32";

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_RUNTIME_HELPERS_H_
