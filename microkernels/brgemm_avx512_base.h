// The loop skeleton shared by the AVX-512 BRGEMM generators.
//
// The generated function walks C in register tiles (brgemm_blocking.h):
//
//   CallPrologue()                             (s8s8: A row sums)
//   for each N block (full blocks in a loop, then one tail block)
//     NBlockPrologue()
//     for each M block (full blocks in a loop, then one tail block)
//       InitAccumulators()                     (zeros)
//       for each batch element i: A_i, B_i from the list or the strides
//         for each K group (unrolled; the last group may be partial)
//           ComputeGroup()                     (the ISA's inner product)
//       FinishAccumulators()                   (s8s8: add the row sums'
//                                               correction)
//       StoreAcc(): C (= or +=) accumulators, masked on the N tail, with
//                   PreparePostOps() / PrepareRowPostOps() /
//                   ApplyPostOps() / FinishRowPostOps() (f32: scale,
//                   bias, relu, row_max, divide_rows)
//       MBlockEpilogue()
//
// A "K group" is the VNNI granularity: 1 f32, 2 bf16 or 4 int8 elements of
// K. Subclasses supply only the per-group arithmetic, constants, the
// accumulators' initial values and per-call work. The N tail is a masked
// vector (opmask k1); the K tail is a partial group whose A bytes are
// loaded exactly, so no kernel reads or writes outside its buffers.
#ifndef HGC_MICROKERNELS_BRGEMM_AVX512_BASE_H_
#define HGC_MICROKERNELS_BRGEMM_AVX512_BASE_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "microkernels/brgemm_blocking.h"
#include "microkernels/brgemm_desc.h"
#include "microkernels/jit_generator.h"

namespace hgc {
namespace microkernels {

class BrgemmAvx512Base : public JitGenerator {
 public:
  // `desc` must have passed ValidateBrgemmDesc; `blocking` comes from
  // ChooseBlocking(desc) (tests may pass others that fit the registers).
  BrgemmAvx512Base(const BrgemmDesc& desc, const BrgemmBlocking& blocking);

  const BrgemmDesc& desc() const { return desc_; }
  const BrgemmBlocking& blocking() const { return blocking_; }

 protected:
  absl::Status Generate() final;

  // Called once after the prologue: set up constant registers.
  virtual void InitConstants() {}
  // Called once per call before the N loop (reg_boff_ is zero) and once
  // before the epilogue: per-call work and stack frames. CallPrologue may
  // clobber every register except reg_args_, reg_c_n_ and reg_boff_.
  virtual void CallPrologue() {}
  virtual void CallEpilogue() {}
  // Called at the start of each N block, before its M loop.
  virtual void NBlockPrologue() {}
  // Called per register tile, before its batch loop: sets the rows * nvecs
  // accumulators' starting values (by default zero). May use every vector
  // register, reg_a_, reg_b_, the batch registers and the temporaries.
  virtual void InitAccumulators(int rows, int nvecs);
  // Called once per trip of a tile's unrolled K loop (not in straight-line
  // K code), after the trip's groups; may use reg_tmp2_ only.
  virtual void KLoopTrip() {}
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
  // Called after each register tile of an M block, with its rows.
  virtual void MBlockEpilogue(int rows) {}
  // Emits the products of one K group: A at [reg_a + a_off + row * lda],
  // B at [reg_b + b_off + vec * 64]. `valid` is how many of the group's K
  // elements exist (== granularity except in the K tail). `masked`: the
  // last vector covers the N tail (opmask k1).
  virtual void ComputeGroup(int rows, int nvecs, bool masked, int64_t a_off,
                            int64_t b_off, int valid) = 0;

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
  // Emits a loop over the batch elements of the current call: `body` runs
  // once per element with reg_a_ and reg_b_ at that element's block of the
  // current tile (A at the M block, B at the N block). Skipped for batch 0.
  // Clobbers reg_iter_a_, reg_iter_b_, reg_batch_ and reg_tmp_.
  void EmitBatchLoop(const std::function<void()>& body);

  bool IsInt() const {
    return desc_.dtype == BrgemmDataType::kU8S8 ||
           desc_.dtype == BrgemmDataType::kS8S8;
  }
  int64_t a_elem_bytes() const { return InputElementSize(desc_.dtype); }
  int64_t group() const { return VnniGranularity(desc_.dtype); }

  // General-purpose registers (System V; rdi carries the arguments).
  const Xbyak::Reg64 reg_args_ = Xbyak::util::rdi;
  const Xbyak::Reg64 reg_c_ = Xbyak::util::rsi;       // C tile
  const Xbyak::Reg64 reg_c_n_ = Xbyak::util::rdx;     // C at N block, row 0
  const Xbyak::Reg64 reg_aoff_ = Xbyak::util::rcx;    // M block offset in A
  const Xbyak::Reg64 reg_boff_ = Xbyak::util::r8;     // N block offset in B
  const Xbyak::Reg64 reg_a_ = Xbyak::util::r9;        // A in the K loop
  const Xbyak::Reg64 reg_b_ = Xbyak::util::r10;       // B in the K loop
  const Xbyak::Reg64 reg_iter_a_ = Xbyak::util::r11;  // batch: next A
  const Xbyak::Reg64 reg_iter_b_ = Xbyak::util::rax;  // batch: next B
  const Xbyak::Reg64 reg_batch_ = Xbyak::util::rbx;   // batch count left
  const Xbyak::Reg64 reg_k_ = Xbyak::util::rbp;       // K loop trips left
  const Xbyak::Reg64 reg_m_ = Xbyak::util::r12;       // M blocks left
  const Xbyak::Reg64 reg_n_ = Xbyak::util::r13;       // N blocks left
  const Xbyak::Reg64 reg_tmp_ = Xbyak::util::r14;
  const Xbyak::Reg64 reg_tmp2_ = Xbyak::util::r15;

 private:
  void EmitNBlocks(int64_t count, int cols);
  void EmitMBlocks(int64_t count, int rows, int cols);
  void EmitTile(int rows, int cols);
  void EmitKLoop(int rows, int nvecs, bool masked);
  void StoreAcc(int rows, int nvecs, bool masked);

  const BrgemmDesc desc_;
  const BrgemmBlocking blocking_;
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_AVX512_BASE_H_
