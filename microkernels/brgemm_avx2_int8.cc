// BrgemmAvx2's int8 K loop: A widened to s16 on the stack a segment at a
// time, so the inner loop broadcasts each row's K group with one load.
//
// Widening A where it is used costs a broadcast and a vpmovzxbw per row
// and K group in every N block: with the 6 x 1 vector tile that int8's two
// accumulators per vector leave room for, 2 of every 8 vector operations.
// Widened once per tile and segment (a vpmovzxbw and a store per 16 bytes
// of a row), the group is a vpbroadcastq from L1, which needs no vector
// ALU. On Zen 3 the inner loop ran about 1.4x as many vpmaddwd per cycle.
#include <algorithm>

#include "microkernels/brgemm_avx2.h"

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT: register names read like assembly.

namespace {

constexpr int kVectorBytes = 32;
constexpr int kGroup = 4;  // K elements per VNNI-4 group
// Full K groups of A widened per segment: 32 (128 bytes of a row, 256 as
// s16) keep an 8-row tile's scratch at 2 KiB, in L1 beside B's panel.
constexpr int64_t kSegmentGroups = 32;

}  // namespace

int64_t BrgemmAvx2::SegmentGroups() const {
  return std::min<int64_t>(kSegmentGroups, desc().k / kGroup);
}

int64_t BrgemmAvx2::WideABytes() const {
  if (!IsInt() || SegmentGroups() == 0) return 0;
  return 8 + blocking().rows * SegmentGroups() * 8;
}

// Above the generator's other stack slots: the segment counter, then the
// scratch, one row of SegmentGroups() groups of 4 s16 per tile row.
Xbyak::Address BrgemmAvx2::SegmentSlot() const {
  return qword[rsp + 8 * StackSlots()];
}

int64_t BrgemmAvx2::WideRowOffset(int row) const {
  return 8 * StackSlots() + 8 + row * SegmentGroups() * 8;
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
  const int64_t segment = SegmentGroups();
  if (segment > 0) {
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
  const Xbyak::Ymm wide = Reserved(0);  // free between K groups
  const Xbyak::Xmm narrow(wide.getIdx());
  auto widen = [&](const Xbyak::Xmm& dst, const Xbyak::Operand& src) {
    if (desc().dtype == BrgemmDataType::kS8S8) {
      vpmovsxbw(dst, src);
    } else {
      vpmovzxbw(dst, src);
    }
  };
  // Exactly the segment's bytes of each row are read: 16, then 8, then 4
  // at a time.
  const int64_t bytes = groups * kGroup;
  for (int i = 0; i < rows; ++i) {
    const int64_t src = i * desc().lda;
    const int64_t dst = WideRowOffset(i);
    int64_t b = 0;
    for (; b + 16 <= bytes; b += 16) {
      widen(wide, ptr[reg_a_ + src + b]);
      vmovdqu(ptr[rsp + dst + 2 * b], wide);
    }
    if (b + 8 <= bytes) {
      widen(narrow, ptr[reg_a_ + src + b]);
      vmovdqu(ptr[rsp + dst + 2 * b], narrow);
      b += 8;
    }
    if (b < bytes) {
      vmovd(narrow, ptr[reg_a_ + src + b]);
      widen(narrow, narrow);
      vmovq(ptr[rsp + dst + 2 * b], narrow);
    }
  }
  add(reg_a_, static_cast<int32_t>(bytes));
}

void BrgemmAvx2::ComputeWideGroups(int rows, int nvecs, bool masked,
                                   int64_t groups) {
  const int64_t b_step = desc().ldb * kGroup;  // one packed row of B
  const int unroll = blocking().k_unroll;
  const int64_t trips = groups / unroll;
  // reg_k_ walks the scratch: 8 bytes (4 s16) a group.
  xor_(reg_k_, reg_k_);
  if (trips > 0) {
    Xbyak::Label loop;
    L(loop);
    for (int u = 0; u < unroll; ++u) {
      ComputeWideGroup(rows, nvecs, masked, u * 8, u * b_step);
    }
    KLoopTrip();
    AddImm(reg_b_, unroll * b_step, reg_tmp_);
    add(reg_k_, unroll * 8);
    if (trips > 1) {
      cmp(reg_k_, static_cast<int32_t>(trips * unroll * 8));
      jb(loop, T_NEAR);
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
    vpbroadcastq(Reserved(0), ptr[rsp + reg_k_ + WideRowOffset(i) + disp]);
    AccumulateRowInt8(i, nvecs);
  }
}

}  // namespace microkernels
}  // namespace hgc
