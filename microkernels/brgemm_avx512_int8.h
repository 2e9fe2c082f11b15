// AVX512_VNNI BRGEMM generator: vpdpbusd on VNNI-4 packed B.
//
// vpdpbusd multiplies 4 unsigned bytes by 4 signed bytes per 32-bit lane
// and adds the four products into the lane, exactly (no saturation).
//
// u8 * s8: the broadcast A group is the unsigned operand, B vectors the
// signed one.
//
// s8 * s8: the instruction has no signed-by-signed form, so the kernel flips
// the roles and biases B: B' = B + 128 = B xor 0x80 is a valid u8 (done in
// registers after each B load, one xor per vector amortized over the tile's
// rows), and the broadcast A group is the signed operand. Then
//   sum_k A[m][k] * B'[k][n] = sum_k A[m][k] * B[k][n] + 128 * sum_k A[m][k],
// so each batch element first computes 128 * (row sum of its A rows) with
// one vpdpbusd per 64 bytes of a row (0x80 bytes times A) and subtracts it
// from the row's accumulators: about 1 / (16 * nvecs) extra work.
#ifndef HGC_MICROKERNELS_BRGEMM_AVX512_INT8_H_
#define HGC_MICROKERNELS_BRGEMM_AVX512_INT8_H_

#include "microkernels/brgemm_avx512_base.h"

namespace hgc {
namespace microkernels {

class BrgemmAvx512Int8 : public BrgemmAvx512Base {
 public:
  // `desc.dtype` must be kU8S8 or kS8S8, `desc.isa` >= kAvx512CoreVnni.
  BrgemmAvx512Int8(const BrgemmDesc& desc, const BrgemmBlocking& blocking)
      : BrgemmAvx512Base(desc, blocking) {}

 protected:
  void InitConstants() override;
  void BatchPrologue(int rows, int nvecs) override;
  void ComputeGroup(int rows, int nvecs, bool masked, int64_t a_off,
                    int64_t b_off, int valid) override;

 private:
  bool signed_a() const { return desc().dtype == BrgemmDataType::kS8S8; }
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_AVX512_INT8_H_
