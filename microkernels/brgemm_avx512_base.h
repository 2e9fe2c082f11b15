// The tile shared by the AVX-512 BRGEMM generators, in the loops of
// brgemm_generator.h:
//
//   CallPrologue()                             (s8s8: A row sums)
//   for each N block, NBlockPrologue(); for each M block:
//       InitAccumulators()                     (zeros)
//       for each batch element, each K group:
//           ComputeGroup()                     (the ISA's inner product)
//       FinishAccumulators()                   (s8s8: add the row sums'
//                                               correction)
//       StoreAcc(): C (= or +=) accumulators, masked on the N tail, with
//                   PreparePostOps() / PrepareRowPostOps() /
//                   ApplyPostOps() / FinishRowPostOps() (f32: scale,
//                   bias, relu, row_max, divide_rows)
//       MBlockEpilogue()
//
// Subclasses supply only the per-group arithmetic, constants, the
// accumulators' initial values and per-call work. The N tail is a masked
// vector (opmask k1); the K tail is a partial group whose A bytes are
// loaded exactly, so no kernel reads or writes outside its buffers.
#ifndef HGC_MICROKERNELS_BRGEMM_AVX512_BASE_H_
#define HGC_MICROKERNELS_BRGEMM_AVX512_BASE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "microkernels/brgemm_blocking.h"
#include "microkernels/brgemm_desc.h"
#include "microkernels/brgemm_generator.h"

namespace hgc {
namespace microkernels {

class BrgemmAvx512Base : public BrgemmGenerator {
 public:
  // `desc` must have passed ValidateBrgemmDesc; `blocking` comes from
  // ChooseBlocking(desc) (tests may pass others that fit the registers).
  BrgemmAvx512Base(const BrgemmDesc& desc, const BrgemmBlocking& blocking)
      : BrgemmGenerator(desc, blocking, /*lanes=*/16) {}

 protected:
  absl::Status Generate() final;

  // Called once after the prologue: set up constant registers.
  virtual void InitConstants() {}
  // Called once per call before the N loop (reg_boff_ is zero) and once
  // before the epilogue: per-call work and stack frames. CallPrologue may
  // clobber every register except reg_args_, reg_c_n_ and reg_boff_.
  virtual void CallPrologue() {}
  virtual void CallEpilogue() {}
  // Called per register tile, before its batch loop: sets the rows * nvecs
  // accumulators' starting values (by default zero). May use every vector
  // register, reg_a_, reg_b_, the batch registers and the temporaries.
  virtual void InitAccumulators(int rows, int nvecs);
  // KLoopTrip (brgemm_generator.h) may use reg_tmp2_ only: every other
  // register is live in the K loop.
  // Called per register tile after its batch loop, before the store; may
  // use the reserved registers and reg_tmp_.
  virtual void FinishAccumulators(int rows, int nvecs) {}
  // The descriptor's post-ops, in the store (only generators whose data
  // type allows them override these; ValidateBrgemmDesc rejects the rest):
  // PreparePostOps runs once per register tile before its rows are stored
  // (same registers as FinishAccumulators), ApplyPostOps on each
  // accumulator, vector `vec` of its row, after C's old value is added.
  virtual void PreparePostOps(int nvecs, bool masked) {}
  // Runs before row `row` of the tile is stored (same registers).
  virtual void PrepareRowPostOps(int row) {}
  virtual void ApplyPostOps(const Xbyak::Zmm& acc, int vec) {}
  // Runs after row `row` of the tile is stored, its accumulators still
  // holding the stored values (same registers).
  virtual void FinishRowPostOps(int row, int nvecs, bool masked) {}
  // ComputeGroup (brgemm_generator.h) finds B vector `vec` at
  // [reg_b + b_off + vec * 64], the N tail's vector under opmask k1.

  // Accumulator for tile row `row`, vector `vec`, in a tile `nvecs` wide.
  Xbyak::Zmm Acc(int row, int vec, int nvecs) const {
    return Xbyak::Zmm(row * nvecs + vec);
  }
  // The i-th reserved register, counted down from zmm31.
  Xbyak::Zmm Reserved(int i) const { return Xbyak::Zmm(31 - i); }
  // Address of A element (row, k group offset) in the current block.
  Xbyak::Address AAddr(int row, int64_t a_off);
  // Broadcasts the `valid` (< group) leading elements of a K group of row
  // `row` into every lane of `dst`, zero-filling the rest of each 32-bit
  // lane. Reads exactly valid * element-size bytes.
  void BroadcastPartialGroup(const Xbyak::Zmm& dst, int row, int64_t a_off,
                             int valid);
  // Loads B vector `vec` of the group at b_off; masked (zeroing) when it is
  // the N tail vector.
  Xbyak::Address BAddr(int vec, int64_t b_off);
  // Loads the group's `nvecs` B vectors at b_off into Reserved(1..nvecs),
  // the last masked by k1 (zeroing) when `masked`; vmovups for f32 kernels
  // (`float_domain`), vmovdqu32 for the integer-domain dot products.
  void LoadBVectors(int nvecs, bool masked, int64_t b_off, bool float_domain);
  // The same from [base + off], for rows other than B's (the bias row).
  void LoadVectors(const Xbyak::Reg64& base, int nvecs, bool masked,
                   int64_t off, bool float_domain);

 private:
  void BeforeNTail(int cols) override;
  void EmitTile(int rows, int cols) override;
  void StoreAcc(int rows, int nvecs, bool masked);
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_AVX512_BASE_H_
