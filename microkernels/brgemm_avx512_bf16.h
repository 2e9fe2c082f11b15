// AVX512_BF16 BRGEMM generator: vdpbf16ps on VNNI-2 packed B.
//
// One vdpbf16ps multiplies a broadcast pair (A[row][k], A[row][k+1]) with
// 16 packed pairs (B[k][n], B[k+1][n]) and adds both products into 16 f32
// lanes. On CPUs where vdpbf16ps issues at half the FMA rate, the widening
// kernel (brgemm_avx512_bf16_fma.h) is faster; the dispatcher measures both.
// vdpbf16ps reads bf16 denormals (and f32 accumulators below 2^-126) as
// zero and flushes denormal results, whatever MXCSR says: hgc's bf16 matmul
// semantics (runtime/portable/matmul.cc), which the widening kernel follows.
#ifndef HGC_MICROKERNELS_BRGEMM_AVX512_BF16_H_
#define HGC_MICROKERNELS_BRGEMM_AVX512_BF16_H_

#include "microkernels/brgemm_avx512_base.h"

namespace hgc {
namespace microkernels {

class BrgemmAvx512Bf16 : public BrgemmAvx512Base {
 public:
  // `desc.dtype` must be kBf16 and `desc.isa` >= kAvx512CoreBf16.
  BrgemmAvx512Bf16(const BrgemmDesc& desc, const BrgemmBlocking& blocking)
      : BrgemmAvx512Base(desc, blocking) {}

 protected:
  void ComputeGroup(int rows, int nvecs, bool masked, int64_t a_off,
                    int64_t b_off, int valid) override;
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_AVX512_BF16_H_
