// The oracle: plain loops computing exactly what a BrgemmDesc promises.
//
// Reads B through the packed-layout formula of brgemm_desc.h, so it checks
// the packing routines and the kernels together. f32 and bf16 accumulate in
// double (the kernels accumulate in f32 in another order, so callers compare
// with a tolerance); bf16 denormal operands are read as zero, as every bf16
// kernel reads them (hgc's bf16 matmul semantics); int8 accumulates exactly
// in int32 with wrap-around, as the instructions do.
#ifndef HGC_MICROKERNELS_REFERENCE_BRGEMM_H_
#define HGC_MICROKERNELS_REFERENCE_BRGEMM_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "microkernels/brgemm_desc.h"

namespace hgc {
namespace microkernels {

// C (= or +=) sum_i A_i * B_i for a pointer-list batch of `batch` blocks.
// B_i are packed as desc.b_layout. The descriptor's batch_kind is ignored
// (callers resolve strides with StridedBatchPointers). `bias` (N floats) is
// required by descriptors with post-op bias, `row_divisors` (M floats) by
// those with divide_rows, `scale` (one float) by those with scale and
// `row_max` (M x 16 floats, updated) by those with row_max.
// InvalidArgument for a bad descriptor, batch < 0 or a missing post-op
// argument.
absl::Status ReferenceBrgemm(const BrgemmDesc& desc, const void* const* a_ptrs,
                             const void* const* b_ptrs, int64_t batch, void* c,
                             const float* bias = nullptr,
                             const float* row_divisors = nullptr,
                             const float* scale = nullptr,
                             float* row_max = nullptr);

// The pointer lists a strided batch stands for: base + i * stride.
std::vector<const void*> StridedBatchPointers(const void* base,
                                              int64_t stride_bytes,
                                              int64_t batch);

// Worst-case absolute error expected between a kernel's f32 accumulation and
// the double reference for one C element, given sum_i |a_ik * b_kj| (the
// magnitude of the dot product). Used by tests and the benchmark's check.
double BrgemmTolerance(const BrgemmDesc& desc, int64_t batch, double abs_sum);

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_REFERENCE_BRGEMM_H_
