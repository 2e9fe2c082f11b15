// AVX-512 f32 BRGEMM generator: vfmadd231ps with a broadcast A value.
//
// Per K element: load the tile's B vectors (one packed B row segment) into
// registers, then for each tile row broadcast A[row][k] once and issue one
// FMA per vector. With the 6 x 4 tile that is 24 FMAs per 6 broadcast and 4
// vector loads: the two FMA ports are the only saturated resource.
#ifndef HGC_MICROKERNELS_BRGEMM_AVX512_F32_H_
#define HGC_MICROKERNELS_BRGEMM_AVX512_F32_H_

#include "microkernels/brgemm_avx512_base.h"

namespace hgc {
namespace microkernels {

class BrgemmAvx512F32 : public BrgemmAvx512Base {
 public:
  // `desc.dtype` must be kF32.
  BrgemmAvx512F32(const BrgemmDesc& desc, const BrgemmBlocking& blocking)
      : BrgemmAvx512Base(desc, blocking) {}

 protected:
  void ComputeGroup(int rows, int nvecs, bool masked, int64_t a_off,
                    int64_t b_off, int valid) override;
  void CallPrologue() override;
  void CallEpilogue() override;
  void NBlockPrologue() override;
  void KLoopTrip() override;
  void PreparePostOps(int nvecs, bool masked) override;
  void PrepareRowPostOps(int row) override;
  void ApplyPostOps(const Xbyak::Zmm& acc, int vec) override;
  void FinishRowPostOps(int row, int nvecs, bool masked) override;
  void MBlockEpilogue(int rows) override;

 private:
  // The broadcast scale and the row max being folded, above the B vectors
  // (ReservedVectorRegisters counts them).
  Xbyak::Zmm ScaleRegister() const { return Reserved(1 + blocking().nvecs); }
  Xbyak::Zmm RowMaxRegister() const {
    return Reserved(1 + blocking().nvecs + (desc().scale ? 1 : 0));
  }
  // Stack slots: divide_rows and row_max keep a per-M-block pointer in the
  // first, a prefetch region its end in the last.
  int StackSlots() const;
  // Cache lines each trip of a register tile's K loop prefetches: of the
  // descriptor's region, or of the B region after this call's (see
  // CallPrologue); 0: none.
  int64_t PrefetchLinesPerTrip() const;
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_AVX512_F32_H_
