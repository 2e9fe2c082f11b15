// What the vector math tests share: float ordinals and ulp distances, the
// JIT-compiled kernel that applies an emitter to an array, and the
// double-precision references both test targets compare with.
#ifndef HGC_CODEGEN_LLVM_VECTOR_MATH_TEST_UTIL_H_
#define HGC_CODEGEN_LLVM_VECTOR_MATH_TEST_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Value.h"

namespace hgc {
namespace codegen {

using Emitter = llvm::Value* (*)(llvm::IRBuilder<>&, llvm::Value*);

uint32_t Bits(float f);
float FromBits(uint32_t u);
// Maps floats to integers monotonically (-0 and +0 both to 0).
int64_t Ordinal(float f);
float FromOrdinal(int64_t o);
// The distance in representable floats (0 when equal, NaN matches NaN).
int64_t UlpDistance(float got, float want);

// Applies `emit` to `xs` through a JIT-compiled kernel of `width` lanes
// (a gtest failure, and zeros, when it cannot be compiled).
std::vector<float> Apply(Emitter emit, const std::vector<float>& xs,
                         int width = 16, absl::string_view max_isa = "all");

// gelu (approximate="none") in double, in its erfc form: accurate for very
// negative x, where the reference interpreter's 1 + erf(x) flushes to 0.
double GeluErf(double x);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LLVM_VECTOR_MATH_TEST_UTIL_H_
