// BrgemmAvx2's int8 K loop: A widened to s16 on the stack, so the inner
// loop broadcasts each row's K group with one load.
//
// Widening A where it is used costs a broadcast and a vpmovzxbw per row
// and K group in every N block: with the 6 x 1 vector tile that int8's two
// accumulators per vector leave room for, 2 of each row's 6 vector
// operations a group (beside B's two widenings, shared by the rows).
// Widened ahead (a vpmovzxbw and a store per 16 bytes of a row), the group
// is a vpbroadcastq from L1, which needs no vector ALU: on Zen 3 the inner
// loop ran about 1.4x as many vpmaddwd per cycle. Where every batch
// element shares one A (a strided batch with A's stride 0, as the
// lowerings call it) and A fits 64 KiB widened, all of it is widened once
// per call (WidenWholeA); otherwise each tile widens its rows 32 K groups
// at a time (WidenA).
#include <algorithm>

#include "microkernels/brgemm_abi.h"
#include "microkernels/brgemm_avx2.h"

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT: register names read like assembly.

namespace {

constexpr int kVectorBytes = 32;
constexpr int kGroup = 4;  // K elements per VNNI-4 group
// Full K groups of A widened per segment: 32 (128 bytes of a row, 256 as
// s16) keep a 6-row tile's scratch at 1.5 KiB, in L1 beside B's panel.
constexpr int64_t kSegmentGroups = 32;
// The largest scratch that holds all of A widened (2 * K rounded down to
// whole groups, a row).
constexpr int64_t kWholeABytes = 64 * 1024;

}  // namespace

bool BrgemmAvx2::WholeAWidened() const {
  return IsInt() && desc().batch_kind == BatchKind::kStrided &&
         desc().stride_a_bytes == 0 && desc().k >= kGroup &&
         desc().m * (desc().k / kGroup) * 8 <= kWholeABytes;
}

int64_t BrgemmAvx2::SegmentGroups() const {
  return std::min<int64_t>(kSegmentGroups, desc().k / kGroup);
}

int64_t BrgemmAvx2::WideRowBytes() const {
  return (WholeAWidened() ? desc().k / kGroup : SegmentGroups()) * 8;
}

int64_t BrgemmAvx2::WideABytes() const {
  if (!IsInt() || desc().k < kGroup) return 0;
  const int64_t rows = WholeAWidened() ? desc().m : blocking().rows;
  return 16 + rows * WideRowBytes();
}

// Above the generator's other stack slots: the segment counter (all of A
// widened: the M block's row offset in the scratch) and the trip counter,
// then the scratch, a row of WideRowBytes() per row of A (whole) or of
// the tile (per segment).
Xbyak::Address BrgemmAvx2::SegmentSlot() const {
  return qword[rsp + 8 * StackSlots()];
}

Xbyak::Address BrgemmAvx2::TripSlot() const {
  return qword[rsp + 8 * StackSlots() + 8];
}

int64_t BrgemmAvx2::ScratchOffset() const { return 8 * StackSlots() + 16; }

void BrgemmAvx2::WidenAElements(const Xbyak::Xmm& to,
                                const Xbyak::Operand& from) {
  if (desc().dtype == BrgemmDataType::kS8S8) {
    vpmovsxbw(to, from);
  } else {
    vpmovzxbw(to, from);
  }
}

void BrgemmAvx2::WidenRow(const Xbyak::Reg64& dst, int64_t dst_disp,
                          const Xbyak::Reg64& src, int64_t src_disp,
                          int64_t bytes) {
  const Xbyak::Ymm wide = Reserved(0);  // free between K groups
  const Xbyak::Xmm narrow(wide.getIdx());
  // Exactly the row's `bytes` are read: 16, then 8, then 4 at a time.
  int64_t b = 0;
  for (; b + 16 <= bytes; b += 16) {
    WidenAElements(wide, ptr[src + src_disp + b]);
    vmovdqu(ptr[dst + dst_disp + 2 * b], wide);
  }
  if (b + 8 <= bytes) {
    WidenAElements(narrow, ptr[src + src_disp + b]);
    vmovdqu(ptr[dst + dst_disp + 2 * b], narrow);
    b += 8;
  }
  if (b < bytes) {
    vmovd(narrow, ptr[src + src_disp + b]);
    WidenAElements(narrow, narrow);
    vmovq(ptr[dst + dst_disp + 2 * b], narrow);
  }
}

void BrgemmAvx2::WidenWholeA() {
  // Batch 0 may come with no A at all.
  Xbyak::Label skip, row_loop, chunk_loop;
  mov(reg_tmp_, ptr[reg_args_ + kArgBatch]);
  test(reg_tmp_, reg_tmp_);
  jle(skip, T_NEAR);
  mov(reg_a_, ptr[reg_args_ + kArgA]);
  lea(reg_tmp2_, ptr[rsp + ScratchOffset()]);
  const int64_t bytes = desc().k / kGroup * kGroup;
  const int64_t chunked = bytes / 64 * 64;  // a loop of 64 bytes a trip
  mov(reg_m_, desc().m);
  L(row_loop);
  if (chunked > 0) {
    xor_(reg_k_, reg_k_);
    L(chunk_loop);
    lea(reg_b_, ptr[reg_a_ + reg_k_]);
    lea(reg_tmp_, ptr[reg_tmp2_ + reg_k_ * 2]);
    WidenRow(reg_tmp_, 0, reg_b_, 0, 64);
    add(reg_k_, 64);
    cmp(reg_k_, static_cast<int32_t>(chunked));
    jb(chunk_loop, T_NEAR);
  }
  WidenRow(reg_tmp2_, 2 * chunked, reg_a_, chunked, bytes - chunked);
  AddImm(reg_a_, desc().lda, reg_tmp_);
  AddImm(reg_tmp2_, WideRowBytes(), reg_tmp_);
  dec(reg_m_);
  jnz(row_loop, T_NEAR);
  L(skip);
}

void BrgemmAvx2::LoadBInt8(int nvecs, bool masked, int64_t b_off) {
  // A VNNI-4 group of 8 columns is 32 bytes, 4 per column: its columns 0-3
  // and 4-7 widened to s16 are 16 lanes each, (k, k + 1, k + 2, k + 3) per
  // column.
  for (int j = 0; j < nvecs; ++j) {
    const Xbyak::Ymm lo = Reserved(2 + 2 * j), hi = Reserved(3 + 2 * j);
    const Xbyak::Address src = ptr[reg_b_ + b_off + j * kVectorBytes];
    if (masked && j == nvecs - 1) {
      // The tail's columns past N (one dword each) are not read.
      vpmaskmovd(hi, TailMask(), src);
      vpmovsxbw(lo, Xbyak::Xmm(hi.getIdx()));
      vextracti128(Xbyak::Xmm(hi.getIdx()), hi, 1);
      vpmovsxbw(hi, Xbyak::Xmm(hi.getIdx()));
    } else {
      vpmovsxbw(lo, ptr[reg_b_ + b_off + j * kVectorBytes]);
      vpmovsxbw(hi, ptr[reg_b_ + b_off + j * kVectorBytes + 16]);
    }
  }
}

void BrgemmAvx2::AccumulateRowInt8(int row, int nvecs) {
  // With A's group repeated 4 times in Reserved(0), vpmaddwd sums each k
  // pair: 8 s32 lanes, two per column, exact (a product is at most
  // 255 * 128 in magnitude). The pairs of a column meet in the store
  // (StoreIntTile).
  const Xbyak::Ymm a = Reserved(0), product = Reserved(1);
  for (int j = 0; j < nvecs; ++j) {
    for (int half = 0; half < 2; ++half) {
      const Xbyak::Ymm acc = Acc(row, 2 * j + half, 2 * nvecs);
      vpmaddwd(product, a, Reserved(2 + 2 * j + half));
      vpaddd(acc, acc, product);
    }
  }
}

void BrgemmAvx2::EmitKLoopInt8(int rows, int nvecs, bool masked) {
  const int64_t full_groups = desc().k / kGroup;
  const int tail = static_cast<int>(desc().k % kGroup);
  if (WholeAWidened()) {
    // The tile's rows of the scratch (SegmentSlot: their offset, kept by
    // NBlockPrologue and MBlockEpilogue).
    mov(reg_k_, SegmentSlot());
    lea(reg_k_, ptr[rsp + reg_k_ + ScratchOffset()]);
    ComputeWideGroups(rows, nvecs, masked, full_groups);
    AddImm(reg_a_, full_groups * kGroup, reg_tmp_);
  } else if (const int64_t segment = SegmentGroups(); segment > 0) {
    const int64_t segments = full_groups / segment;
    Xbyak::Label loop;
    if (segments > 1) {
      mov(SegmentSlot(), static_cast<int32_t>(segments));
      L(loop);
    }
    WidenA(rows, segment);
    ComputeWideGroups(rows, nvecs, masked, segment);
    if (segments > 1) {
      dec(SegmentSlot());
      jnz(loop, T_NEAR);
    }
    if (const int64_t rest = full_groups % segment; rest > 0) {
      WidenA(rows, rest);
      ComputeWideGroups(rows, nvecs, masked, rest);
    }
  }
  // reg_a_ and reg_b_ are at the partial group now.
  if (tail != 0) ComputeGroupInt8(rows, nvecs, masked, 0, 0, tail);
}

void BrgemmAvx2::WidenA(int rows, int64_t groups) {
  for (int i = 0; i < rows; ++i) {
    WidenRow(rsp, ScratchOffset() + i * WideRowBytes(), reg_a_, i * desc().lda,
             groups * kGroup);
  }
  add(reg_a_, static_cast<int32_t>(groups * kGroup));
  lea(reg_k_, ptr[rsp + ScratchOffset()]);
}

void BrgemmAvx2::ComputeWideGroups(int rows, int nvecs, bool masked,
                                   int64_t groups) {
  const int64_t b_step = desc().ldb * kGroup;  // one packed row of B
  const int unroll = blocking().k_unroll;
  const int64_t trips = groups / unroll;
  if (trips > 0) {
    Xbyak::Label loop;
    if (trips > 1) {
      mov(TripSlot(), static_cast<int32_t>(trips));
      L(loop);
    }
    for (int u = 0; u < unroll; ++u) {
      ComputeWideGroup(rows, nvecs, masked, u * 8, u * b_step);
    }
    KLoopTrip();
    AddImm(reg_b_, unroll * b_step, reg_tmp_);
    add(reg_k_, unroll * 8);
    if (trips > 1) {
      dec(TripSlot());
      jnz(loop, T_NEAR);
    }
  }
  const int64_t rest = groups % unroll;
  for (int64_t u = 0; u < rest; ++u) {
    ComputeWideGroup(rows, nvecs, masked, u * 8, u * b_step);
  }
  AddImm(reg_b_, rest * b_step, reg_tmp_);
}

void BrgemmAvx2::ComputeWideGroup(int rows, int nvecs, bool masked,
                                  int64_t disp, int64_t b_off) {
  LoadBInt8(nvecs, masked, b_off);
  for (int i = 0; i < rows; ++i) {
    // 4 s16 of the row's group, repeated 4 times.
    vpbroadcastq(Reserved(0), ptr[reg_k_ + i * WideRowBytes() + disp]);
    AccumulateRowInt8(i, nvecs);
  }
}

}  // namespace microkernels
}  // namespace hgc
