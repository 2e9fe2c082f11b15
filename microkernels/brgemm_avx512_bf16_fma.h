// bf16 BRGEMM generator that widens bf16 to f32 in registers and uses FMA.
//
// A bf16 value is the top half of an f32, so widening is a shift or a mask:
// in a VNNI-2 pair (lo = element k, hi = element k + 1) read as a 32-bit
// lane, `lane << 16` is element k as f32 and `lane & 0xffff0000` is element
// k + 1. Per K pair the kernel widens each B vector into two registers and
// each broadcast A pair into two, then issues 2 * rows * nvecs FMAs. Needs
// only AVX512F, and beats vdpbf16ps wherever that instruction runs at half
// the FMA rate (Sapphire/Emerald Rapids): the widening costs 2 * (rows +
// nvecs) shift/and ops on the FMA ports per 2 * rows * nvecs FMAs, i.e. the
// 5 x 4 tile reaches at most 40 / 58 = 69 % of FMA peak, versus 50 % for
// vdpbf16ps.
//
// Denormals: like vdpbf16ps and AMX, which read bf16 denormals as zero in
// hardware, the kernel reads them as zero (hgc's bf16 matmul semantics,
// runtime/portable/matmul.cc): it sets MXCSR.DAZ for the call and restores the
// caller's MXCSR before returning, so the hot loop pays nothing. DAZ also
// reads f32 accumulators and C values below 2^-126 as zero, as the dot
// products' flushing does (the error bound allows for it,
// reference/error_bound.h).
#ifndef HGC_MICROKERNELS_BRGEMM_AVX512_BF16_FMA_H_
#define HGC_MICROKERNELS_BRGEMM_AVX512_BF16_FMA_H_

#include "microkernels/brgemm_avx512_base.h"

namespace hgc {
namespace microkernels {

class BrgemmAvx512Bf16Fma : public BrgemmAvx512Base {
 public:
  // `desc.dtype` must be kBf16 (any AVX-512 isa below AMX).
  BrgemmAvx512Bf16Fma(const BrgemmDesc& desc, const BrgemmBlocking& blocking)
      : BrgemmAvx512Base(desc, blocking) {}

 protected:
  void InitConstants() override;
  void CallPrologue() override;
  void CallEpilogue() override;
  void ComputeGroup(int rows, int nvecs, bool masked, int64_t a_off,
                    int64_t b_off, int valid) override;
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_AVX512_BF16_FMA_H_
