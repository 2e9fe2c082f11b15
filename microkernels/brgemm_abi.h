// The calling convention of every generated BRGEMM kernel.
//
// A kernel is `void fn(const BrgemmCallArgs*)` (System V: the pointer
// arrives in rdi). One argument block keeps the generated prologue the same
// for every ISA and lets the compiler's LLVM loops fill it in place.
#ifndef HGC_MICROKERNELS_BRGEMM_ABI_H_
#define HGC_MICROKERNELS_BRGEMM_ABI_H_

#include <cstddef>
#include <cstdint>

namespace hgc {
namespace microkernels {

struct BrgemmCallArgs {
  // kPointerList: `const void* const*` arrays of `batch` A and B blocks.
  // kStrided: the first A and B block; the rest follow at the descriptor's
  // strides.
  const void* a;
  const void* b;
  // The M x N output block (f32 or s32), leading dimension ldc.
  void* c;
  // Number of (A, B) pairs to reduce; <= 0 means none (C = 0 for beta 0,
  // unchanged for beta 1).
  int64_t batch;
  // Descriptors with `bias`: the N floats added to every row of C.
  const void* bias;
  // Descriptors with `divide_rows`: M floats; row m of C is multiplied by
  // 1 / row_divisors[m].
  const void* row_divisors;
  // Descriptors with `scale`: the float C is multiplied by.
  const void* scale;
  // Descriptors with `row_max`: M rows of 16 floats, the running maxima.
  void* row_max;
  // Descriptors with `prefetch_lines`: the first of the lines to prefetch.
  const void* prefetch;
};

using BrgemmFn = void (*)(const BrgemmCallArgs*);

// Field offsets the generators load from.
constexpr int kArgA = offsetof(BrgemmCallArgs, a);
constexpr int kArgB = offsetof(BrgemmCallArgs, b);
constexpr int kArgC = offsetof(BrgemmCallArgs, c);
constexpr int kArgBatch = offsetof(BrgemmCallArgs, batch);
constexpr int kArgBias = offsetof(BrgemmCallArgs, bias);
constexpr int kArgRowDivisors = offsetof(BrgemmCallArgs, row_divisors);
constexpr int kArgScale = offsetof(BrgemmCallArgs, scale);
constexpr int kArgRowMax = offsetof(BrgemmCallArgs, row_max);
constexpr int kArgPrefetch = offsetof(BrgemmCallArgs, prefetch);

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_ABI_H_
