// AVX512_VNNI BRGEMM generator: vpdpbusd on VNNI-4 packed B.
//
// vpdpbusd multiplies 4 unsigned bytes by 4 signed bytes per 32-bit lane
// and adds the four products into the lane, exactly (no saturation).
//
// u8 * s8: the broadcast A group is the unsigned operand, B vectors the
// signed one.
//
// s8 * s8: the instruction has no signed-by-signed form, so the kernel flips
// the roles and PackB biases B (PackedBIsBiased in brgemm_desc.h): packed
// B' = B + 128 = B xor 0x80 is a valid u8 and is the unsigned operand, the
// broadcast A group the signed one. Then
//   sum_k A[m][k] * B'[k][n] = sum_k A[m][k] * B[k][n] + 128 * sum_k A[m][k],
// so the K loop is exactly the u8s8 one (no extra instruction per group)
// and C = that - 128 * rowsum(A) (over all K of every batch element) is a
// per-row correction:
//  - Row sums: one vpdpbusd per 64 bytes of an A row (0x80 bytes times A;
//    a masked load for the K tail, never past K) into 16 lanes per row,
//    then a transposed shuffle-and-add reduction of 16 rows at a time
//    (about 3.5 instructions a row) and one vpermd into row order; the
//    negated values go to a stack frame.
//  - When M <= 1024 (every tile of the compiler and the GEMM driver) this
//    runs once per call for all rows before the N loop, so N blocks share
//    it; taller calls do it per register tile.
//  - Each tile's accumulators start at zero and get the correction added
//    after the batch loop (one vpaddd with a broadcast operand per vector),
//    so nothing in the K loop waits for the reduction.
// Extra work: about 1 / (16 * nvecs) of the products plus a few
// instructions per row and one vpaddd per accumulator per tile.
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
  void CallPrologue() override;
  void CallEpilogue() override;
  void NBlockPrologue() override;
  void InitAccumulators(int rows, int nvecs) override;
  void FinishAccumulators(int rows, int nvecs) override;
  void ComputeGroup(int rows, int nvecs, bool masked, int64_t a_off,
                    int64_t b_off, int valid) override;

 private:
  bool signed_a() const { return desc().dtype == BrgemmDataType::kS8S8; }

  // s8s8: whether the row corrections are computed once per call, for
  // every row (M small enough for the stack), rather than per tile; and the
  // stack frame that holds them.
  bool Upfront() const;
  int64_t FrameBytes() const;
  // s8s8: emits the sums over the whole batch of the `rows` (<= 30) A rows
  // at reg_aoff_. Vector j (zmm 29 - j, j < the returned count) holds
  // -128 * (sum of row 8j + i) in lane RowLane(i) (see the .cc). Clobbers
  // zmm0 .. zmm(rows - 1), zmm30, zmm31 and the batch registers.
  int RowSums(int rows);
  // s8s8: RowSums, then the values in row order as dwords at `at`, in whole
  // 64-byte vectors. Clobbers as RowSums.
  void StoreRowSums(int rows, const Xbyak::RegExp& at);

  Xbyak::Label order_;  // s8s8: RowSums' lanes in row order
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_AVX512_INT8_H_
