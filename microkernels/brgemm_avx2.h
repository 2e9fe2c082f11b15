// AVX2 + FMA BRGEMM generator for CPUs without AVX-512 (Haswell to
// Alder Lake, AMD Zen 1-3): f32, bf16 by widening to f32, and u8s8 / s8s8
// by widening to s16 for vpmaddwd.
//
// The loops of brgemm_generator.h, as for AVX-512: N blocks, M blocks, a
// register tile per (M block, N block) whose accumulators stay in YMM
// registers through the batch and K loops, then the store with the f32
// post-ops. Differences that follow from the ISA:
//
//  - 16 vector registers of 8 lanes: tiles of up to 6 rows x 2 vectors
//    (the classic 6 x 16 AVX2 SGEMM tile: 12 accumulators, more than the
//    8 that two FMA pipes with a 4-cycle latency need); an f32 M of 1 to 3
//    takes wider tiles instead (ChooseBlocking): up to 2 x 4 and 3 x 3
//    vectors, and 1 x 8 for an M of 1, whose FMAs read B from memory
//    (Avx2BFromMemory).
//  - No opmasks: the N tail is a vmaskmovps load or store under a lane
//    mask kept in a register, built once per call from an in-code table.
//    Masked lanes are never read or written, so no kernel touches memory
//    outside its buffers.
//  - row_max keeps its 16-lane layout (BrgemmCallArgs::row_max): vector j
//    of a 16-column N block folds into lanes 8 (j % 2) .. 8 (j % 2) + 7,
//    which is why a row_max kernel's N blocks are 16 columns wide.
//  - bf16: each K pair of packed B (VNNI-2) is split into its even and odd
//    halves as f32 (a shift and an and, exact) and A's pair likewise; two
//    FMAs per vector. bf16 denormals read as zeros, as in every hgc bf16
//    kernel: the call runs with MXCSR.DAZ set and restores the caller's
//    MXCSR (as brgemm_avx512_bf16_fma.h does).
//  - int8: each 8-column vector of packed B (VNNI-4) is widened to s16 as
//    two registers (columns 0-3 and 4-7), A's 4-byte group likewise and
//    repeated; vpmaddwd gives exact s32 sums of k pairs, two per column,
//    in two accumulators per vector, joined by vphaddd in the store. A is
//    widened to s16 into a stack scratch ahead of the K loop (all of it
//    once per call, or per tile and segment of K), whose groups the K loop
//    broadcasts with one load (brgemm_avx2_int8.cc). s8s8
//    B is packed unbiased (PackedBIsBiased). No post-ops, as on AVX-512.
//  - prefetch_lines is honoured as on AVX-512: the region's lines are
//    spread over the K-loop trips of every register tile. The AVX-512 f32
//    kernel's own prefetch of the next call's B is not done here.
#ifndef HGC_MICROKERNELS_BRGEMM_AVX2_H_
#define HGC_MICROKERNELS_BRGEMM_AVX2_H_

#include <cstdint>

#include "absl/status/status.h"
#include "microkernels/brgemm_blocking.h"
#include "microkernels/brgemm_desc.h"
#include "microkernels/brgemm_generator.h"

namespace hgc {
namespace microkernels {

class BrgemmAvx2 : public BrgemmGenerator {
 public:
  // `desc` must have passed ValidateBrgemmDesc with isa kAvx2 (any data
  // type); `blocking` comes from ChooseBlocking(desc).
  BrgemmAvx2(const BrgemmDesc& desc, const BrgemmBlocking& blocking);

 protected:
  absl::Status Generate() override;

 private:
  bool IsBf16() const { return desc().dtype == BrgemmDataType::kBf16; }
  // int8 keeps a vector's pair sums in two accumulators.
  int AccumulatorsPerVector() const;

  // Accumulator `acc` of tile row `row`, in a tile of `accs` a row.
  Xbyak::Ymm Acc(int row, int acc, int accs) const {
    return Xbyak::Ymm(row * accs + acc);
  }
  // The i-th reserved register, counted down from ymm15.
  Xbyak::Ymm Reserved(int i) const { return Xbyak::Ymm(15 - i); }
  // The named reserved registers (layout in brgemm_avx2.cc).
  Xbyak::Ymm Broadcast() const { return Reserved(0); }
  Xbyak::Ymm BVector(int vec) const;
  enum class Extra { kTailMask, kScale, kConst };
  int ExtraRegister(Extra which) const;
  Xbyak::Ymm TailMask() const {
    return Reserved(ExtraRegister(Extra::kTailMask));
  }
  Xbyak::Ymm ScaleRegister() const {
    return Reserved(ExtraRegister(Extra::kScale));
  }
  Xbyak::Ymm ConstRegister() const {
    return Reserved(ExtraRegister(Extra::kConst));
  }

  void NBlockPrologue() override;
  void MBlockEpilogue(int rows) override;
  void EmitTile(int rows, int cols) override;
  void ComputeGroup(int rows, int nvecs, bool masked, int64_t a_off,
                    int64_t b_off, int valid) override;
  void KLoopTrip() override;
  void ComputeGroupF32(int rows, int nvecs, bool masked, int64_t a_off,
                       int64_t b_off);
  void ComputeGroupBf16(int rows, int nvecs, bool masked, int64_t a_off,
                        int64_t b_off, int valid);
  void ComputeGroupInt8(int rows, int nvecs, bool masked, int64_t a_off,
                        int64_t b_off, int valid);
  void StoreIntTile(int rows, int nvecs, bool masked);
  // int8 (brgemm_avx2_int8.cc): B's vectors of the group at b_off widened
  // into their register halves; the products of tile row `row` with A's
  // widened group in Reserved(0).
  void LoadBInt8(int nvecs, bool masked, int64_t b_off);
  void AccumulateRowInt8(int row, int nvecs);
  // One batch element's K: full groups from the widened scratch (all of
  // A, or segments widened per tile by WidenA), then the partial group
  // from A.
  void EmitKLoopInt8(int rows, int nvecs, bool masked);
  // Whether the call widens all of A once (WidenWholeA, before the tiles).
  bool WholeAWidened() const;
  void WidenWholeA();
  // `groups` full K groups of each tile row from reg_a_ into the scratch,
  // as s16; advances reg_a_ past them and points reg_k_ at the scratch.
  void WidenA(int rows, int64_t groups);
  // A's bytes (s8s8: signed, else unsigned) widened to s16 lanes.
  void WidenAElements(const Xbyak::Xmm& to, const Xbyak::Operand& from);
  // `bytes` (a multiple of 4) of A at [src + src_disp] widened to s16 at
  // [dst + dst_disp]. Clobbers Reserved(0).
  void WidenRow(const Xbyak::Reg64& dst, int64_t dst_disp,
                const Xbyak::Reg64& src, int64_t src_disp, int64_t bytes);
  // `groups` K groups from the scratch at reg_k_ (the tile's first row,
  // WideRowBytes() a row), advancing reg_k_ and reg_b_.
  void ComputeWideGroups(int rows, int nvecs, bool masked, int64_t groups);
  void ComputeWideGroup(int rows, int nvecs, bool masked, int64_t disp,
                        int64_t b_off);
  // Full K groups widened per segment; 0 when K < 4.
  int64_t SegmentGroups() const;
  // Bytes of a scratch row, and of the counters and scratch on the stack
  // (0 unless int8).
  int64_t WideRowBytes() const;
  int64_t WideABytes() const;
  Xbyak::Address SegmentSlot() const;
  Xbyak::Address TripSlot() const;
  int64_t ScratchOffset() const;
  // A vector of B, C or the bias row; `masked`: the N tail's lanes only
  // (the rest read as zero, never touched).
  void LoadVector(const Xbyak::Ymm& dst, const Xbyak::Address& src,
                  bool masked);
  void StoreVector(const Xbyak::Address& dst, const Xbyak::Ymm& src,
                   bool masked);
  // acc += C (f32 or s32), the tail through `tmp`.
  void AddC(const Xbyak::Ymm& acc, const Xbyak::Address& c, bool masked,
            const Xbyak::Ymm& tmp);
  // `bits` in every 32-bit lane of `dst`. Clobbers reg_tmp_.
  void BroadcastDword(const Xbyak::Ymm& dst, uint32_t bits);
  void StoreTile(int rows, int nvecs, bool masked);

  int StackSlots() const;
  // The stack slot of the M block's first divisor or row of maxima
  // (divide_rows, row_max).
  Xbyak::Address RowSlot() const;

  // Avx2BFromMemory(desc): B feeds the FMAs from memory, one register for
  // the tail's masked load and the bias vectors.
  const bool b_from_memory_;
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_AVX2_H_
