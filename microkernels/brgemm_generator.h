// The loop skeleton shared by the vector-register BRGEMM generators
// (AVX-512: brgemm_avx512_base.h, AVX2: brgemm_avx2.h).
//
// The generated function walks C in register tiles (brgemm_blocking.h):
//
//   EmitTiles():
//     for each N block (full blocks in a loop, then one tail block)
//       NBlockPrologue()
//       for each M block (full blocks in a loop, then one tail block)
//         EmitTile()                           (the ISA's tile)
//         MBlockEpilogue()
//
// and a tile's reduction, which EmitTile runs between setting up and
// storing its accumulators:
//
//   EmitBatchLoop(): for each batch element i: A_i, B_i from the list or
//                    the strides
//     EmitKLoop(): for each K group (unrolled; the last may be partial)
//       ComputeGroup()                         (the ISA's inner product)
//
// A "K group" is the VNNI granularity: 1 f32, 2 bf16 or 4 int8 elements
// of K. The general-purpose registers are fixed here, so every generator
// addresses A, B and C the same way.
#ifndef HGC_MICROKERNELS_BRGEMM_GENERATOR_H_
#define HGC_MICROKERNELS_BRGEMM_GENERATOR_H_

#include <cstdint>
#include <functional>

#include "microkernels/brgemm_blocking.h"
#include "microkernels/brgemm_desc.h"
#include "microkernels/jit_generator.h"

namespace hgc {
namespace microkernels {

class BrgemmGenerator : public JitGenerator {
 public:
  // `lanes`: f32 lanes per vector register (16 or 8).
  BrgemmGenerator(const BrgemmDesc& desc, const BrgemmBlocking& blocking,
                  int lanes);

  const BrgemmDesc& desc() const { return desc_; }
  const BrgemmBlocking& blocking() const { return blocking_; }

 protected:
  // Walks every register tile of C; reg_c_n_ must hold C and reg_boff_ 0.
  void EmitTiles();
  // Called before the N tail block (`cols` not a multiple of the lanes).
  virtual void BeforeNTail(int cols) {}
  // Called at the start of each N block, before its M loop.
  virtual void NBlockPrologue() {}
  // Called after each register tile of an M block, with its rows.
  virtual void MBlockEpilogue(int rows) {}
  // One register tile of `rows` x `cols` at reg_c_ (A at reg_aoff_, B at
  // reg_boff_).
  virtual void EmitTile(int rows, int cols) = 0;

  // Emits a loop over the batch elements of the current call: `body` runs
  // once per element with reg_a_ and reg_b_ at that element's block of the
  // current tile (A at the M block, B at the N block). Skipped for batch 0.
  // Clobbers reg_iter_a_, reg_iter_b_, reg_batch_ and reg_tmp_.
  void EmitBatchLoop(const std::function<void()>& body);
  // The K groups of one batch element, ComputeGroup per group: a loop of
  // k_unroll groups per trip when it runs more than once (KLoopTrip after
  // each trip), then straight code for the rest and the partial group.
  void EmitKLoop(int rows, int nvecs, bool masked);
  // Emits the products of one K group: A at [reg_a + a_off + row * lda],
  // B at reg_b + b_off, vector `vec` a vector's bytes further. `valid` is
  // how many of the group's K elements exist (== granularity except in the
  // K tail). `masked`: the last vector covers the N tail.
  virtual void ComputeGroup(int rows, int nvecs, bool masked, int64_t a_off,
                            int64_t b_off, int valid) = 0;
  // Called once per trip of a tile's unrolled K loop (not in straight-line
  // K code), after the trip's groups.
  virtual void KLoopTrip() {}

  // The `valid` (< group) leading elements of row `row`'s K group at
  // a_off, zero-extended into reg_tmp_'s low 32 bits: exactly their bytes
  // are read, since a full-width load could cross the end of the buffer
  // (the last row of A ends at K). Clobbers reg_tmp2_.
  void LoadPartialGroup(int row, int64_t a_off, int valid);
  // Register tiles per call (N blocks x M blocks).
  int64_t RegisterTiles() const;
  // The descriptor's prefetch region (prefetch_lines) shared out evenly
  // over every K-loop trip of every register tile: lines per trip, 0 when
  // there is no region or the K loop runs fewer than two trips.
  int64_t RegionLinesPerTrip() const;
  // Prefetches (prefetcht1) `lines` lines from reg_tmp2_ on and advances
  // it past them; with `region_end`, clamped there, so that rounding the
  // share up overshoots by one trip's lines at most.
  void EmitPrefetchTrip(int64_t lines, const Xbyak::Address* region_end);
  // Sets MXCSR.DAZ (denormal inputs of the FMAs read as zero) for the
  // call, keeping the caller's MXCSR at [rsp] and the kernel's at
  // [rsp + 4] (an 8-byte slot the caller reserved); RestoreMxcsr puts the
  // caller's back. Clobbers reg_tmp_.
  void EnterDaz();
  void RestoreMxcsr();

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
  const Xbyak::Reg64 reg_k_ = Xbyak::util::rbp;       // K trips / widened A
  const Xbyak::Reg64 reg_m_ = Xbyak::util::r12;       // M blocks left
  const Xbyak::Reg64 reg_n_ = Xbyak::util::r13;       // N blocks left
  const Xbyak::Reg64 reg_tmp_ = Xbyak::util::r14;
  const Xbyak::Reg64 reg_tmp2_ = Xbyak::util::r15;

 private:
  void EmitNBlocks(int64_t count, int cols);
  void EmitMBlocks(int64_t count, int rows, int cols);

  const BrgemmDesc desc_;
  const BrgemmBlocking blocking_;
  const int lanes_;
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_GENERATOR_H_
