#include "microkernels/brgemm_avx2.h"

#include "microkernels/brgemm_abi.h"

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT: register names read like assembly.

// Reserved registers, from ymm15 down (ReservedVectorRegisters in
// brgemm_blocking.cc counts them):
//   f32:  0 = broadcast A value, 1..nvecs = B vectors (with B from memory,
//         Avx2BFromMemory: 1 = the masked tail vector or a bias vector);
//   bf16: 0 = A's even element, 1 = A's odd element, 2 = 0xffff0000,
//         3.. = B's (even, odd) halves per vector;
//   int8: 0 = A's group widened to s16, 1 = a product, 2.. = B's columns
//         0-3 and 4-7 widened to s16 per vector; and two accumulators per
//         vector (Acc(row, 2 vec) for columns 0-3, + 1 for 4-7);
// then the N-tail lane mask (when N % 8 != 0), the broadcast scale (scale)
// and a constant (relu's zero, divide_rows' one). In the store, the
// broadcast register is the temporary (C's old tail, relu's compare, the
// row maxima) and the B registers hold the bias row or a row's reciprocal.
namespace {

constexpr int kLanes = 8;
constexpr int kVectorBytes = 32;

}  // namespace

BrgemmAvx2::BrgemmAvx2(const BrgemmDesc& desc, const BrgemmBlocking& blocking)
    : BrgemmGenerator(desc, blocking, kLanes),
      b_from_memory_(Avx2BFromMemory(desc)) {}

Xbyak::Ymm BrgemmAvx2::BVector(int vec) const {
  if (IsBf16()) return Reserved(3 + 2 * vec);
  return Reserved(b_from_memory_ ? 1 : 1 + vec);
}

int BrgemmAvx2::AccumulatorsPerVector() const { return IsInt() ? 2 : 1; }

// The registers after the operands', in the order the file comment lists.
int BrgemmAvx2::ExtraRegister(Extra which) const {
  int index = Avx2OperandRegisters(desc(), blocking().nvecs);
  if (which == Extra::kTailMask) return index;
  if (desc().n % kLanes != 0) ++index;
  if (which == Extra::kScale) return index;
  if (desc().scale) ++index;
  return index;  // Extra::kConst
}

// Stack slots: the caller's and the kernel's MXCSR (bf16), the M block's
// first divisor or row of maxima (divide_rows, row_max), the prefetch
// region's end.
int BrgemmAvx2::StackSlots() const {
  return (IsBf16() ? 1 : 0) + (desc().divide_rows || desc().row_max ? 1 : 0) +
         (RegionLinesPerTrip() > 0 ? 1 : 0);
}

absl::Status BrgemmAvx2::Generate() {
  Preamble();
  const int64_t stack_bytes = 8 * StackSlots() + WideABytes();
  if (stack_bytes > 0) sub(rsp, stack_bytes);
  if (IsBf16()) {
    EnterDaz();
    BroadcastDword(Reserved(2), 0xffff0000u);
  }
  if (desc().n % kLanes != 0) {
    LoadLaneMask(TailMask(), desc().n % kLanes, reg_tmp_);
  }
  if (RegionLinesPerTrip() > 0) {
    mov(reg_tmp2_, ptr[reg_args_ + kArgPrefetch]);
    mov(reg_tmp_, reg_tmp2_);
    AddImm(reg_tmp_, desc().prefetch_lines * 64, reg_n_);
    mov(qword[rsp + 8 * (StackSlots() - 1)], reg_tmp_);
  }
  if (WholeAWidened()) WidenWholeA();
  mov(reg_c_n_, ptr[reg_args_ + kArgC]);
  xor_(reg_boff_, reg_boff_);
  EmitTiles();
  if (IsBf16()) RestoreMxcsr();
  if (stack_bytes > 0) add(rsp, stack_bytes);
  Postamble();
  if (desc().n % kLanes != 0) EmitLaneMaskTable();
  return absl::OkStatus();
}

// After the MXCSR slot (bf16 only, which has no post-ops).
Xbyak::Address BrgemmAvx2::RowSlot() const {
  return qword[rsp + 8 * (IsBf16() ? 1 : 0)];
}

void BrgemmAvx2::NBlockPrologue() {
  // All of A widened: the M block's rows of it start at the first row.
  if (WholeAWidened()) mov(SegmentSlot(), 0);
  if (!desc().divide_rows && !desc().row_max) return;
  mov(reg_tmp_,
      ptr[reg_args_ + (desc().divide_rows ? kArgRowDivisors : kArgRowMax)]);
  mov(RowSlot(), reg_tmp_);
}

void BrgemmAvx2::MBlockEpilogue(int rows) {
  if (WholeAWidened()) {
    add(SegmentSlot(), static_cast<int32_t>(rows * WideRowBytes()));
  }
  if (desc().divide_rows) add(RowSlot(), rows * 4);
  if (desc().row_max) add(RowSlot(), rows * 64);
}

void BrgemmAvx2::EmitTile(int rows, int cols) {
  const int nvecs = (cols + kLanes - 1) / kLanes;
  const bool masked = cols % kLanes != 0;
  const int accs = nvecs * AccumulatorsPerVector();
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < accs; ++j) {
      const Xbyak::Ymm acc = Acc(i, j, accs);
      vxorps(acc, acc, acc);
    }
  }
  EmitBatchLoop([&] {
    if (IsInt()) {
      EmitKLoopInt8(rows, nvecs, masked);
    } else {
      EmitKLoop(rows, nvecs, masked);
    }
  });
  StoreTile(rows, nvecs, masked);
}

void BrgemmAvx2::KLoopTrip() {
  const int64_t lines = RegionLinesPerTrip();
  if (lines == 0) return;
  const Xbyak::Address end = qword[rsp + 8 * (StackSlots() - 1)];
  EmitPrefetchTrip(lines, &end);
}

void BrgemmAvx2::ComputeGroup(int rows, int nvecs, bool masked, int64_t a_off,
                              int64_t b_off, int valid) {
  if (IsBf16()) {
    ComputeGroupBf16(rows, nvecs, masked, a_off, b_off, valid);
  } else if (IsInt()) {
    ComputeGroupInt8(rows, nvecs, masked, a_off, b_off, valid);
  } else {
    ComputeGroupF32(rows, nvecs, masked, a_off, b_off);
  }
}

void BrgemmAvx2::LoadVector(const Xbyak::Ymm& dst, const Xbyak::Address& src,
                            bool masked) {
  if (masked) {
    vmaskmovps(dst, TailMask(), src);
  } else {
    vmovups(dst, src);
  }
}

// The lanes are moved as bits, so this stores s32 vectors as well.
void BrgemmAvx2::StoreVector(const Xbyak::Address& dst, const Xbyak::Ymm& src,
                             bool masked) {
  if (masked) {
    vmaskmovps(dst, TailMask(), src);
  } else {
    vmovups(dst, src);
  }
}

void BrgemmAvx2::AddC(const Xbyak::Ymm& acc, const Xbyak::Address& c,
                      bool masked, const Xbyak::Ymm& tmp) {
  if (masked) {
    LoadVector(tmp, c, true);
  }
  const Xbyak::Operand& old = masked ? static_cast<const Xbyak::Operand&>(tmp)
                                     : static_cast<const Xbyak::Operand&>(c);
  if (IsInt()) {
    vpaddd(acc, acc, old);
  } else {
    vaddps(acc, acc, old);
  }
}

void BrgemmAvx2::BroadcastDword(const Xbyak::Ymm& dst, uint32_t bits) {
  mov(reg_tmp_.cvt32(), bits);
  vmovd(Xbyak::Xmm(dst.getIdx()), reg_tmp_.cvt32());
  vpbroadcastd(dst, Xbyak::Xmm(dst.getIdx()));
}

void BrgemmAvx2::ComputeGroupF32(int rows, int nvecs, bool masked,
                                 int64_t a_off, int64_t b_off) {
  if (b_from_memory_) {
    // One row: each B vector is an FMA's memory operand, but for the
    // tail's masked load.
    vbroadcastss(Broadcast(), ptr[reg_a_ + a_off]);
    for (int j = 0; j < nvecs; ++j) {
      const Xbyak::Address b = ptr[reg_b_ + b_off + j * kVectorBytes];
      if (masked && j == nvecs - 1) {
        LoadVector(BVector(j), b, true);
        vfmadd231ps(Acc(0, j, nvecs), Broadcast(), BVector(j));
      } else {
        vfmadd231ps(Acc(0, j, nvecs), Broadcast(), b);
      }
    }
    return;
  }
  for (int j = 0; j < nvecs; ++j) {
    LoadVector(BVector(j), ptr[reg_b_ + b_off + j * kVectorBytes],
               masked && j == nvecs - 1);
  }
  for (int i = 0; i < rows; ++i) {
    vbroadcastss(Broadcast(), ptr[reg_a_ + i * desc().lda * 4 + a_off]);
    for (int j = 0; j < nvecs; ++j) {
      vfmadd231ps(Acc(i, j, nvecs), Broadcast(), BVector(j));
    }
  }
}

void BrgemmAvx2::ComputeGroupBf16(int rows, int nvecs, bool masked,
                                  int64_t a_off, int64_t b_off, int valid) {
  const Xbyak::Ymm a_lo = Reserved(0);
  const Xbyak::Ymm a_hi = Reserved(1);
  const Xbyak::Ymm hi_mask = Reserved(2);
  auto b_lo = [&](int j) { return Reserved(3 + 2 * j); };
  auto b_hi = [&](int j) { return Reserved(4 + 2 * j); };
  const bool both = valid == 2;
  for (int j = 0; j < nvecs; ++j) {
    const Xbyak::Address src = ptr[reg_b_ + b_off + j * kVectorBytes];
    // VEX shifts take no memory source: load, then split. The tail's
    // masked lanes read as zero and are never touched.
    LoadVector(b_hi(j), src, masked && j == nvecs - 1);
    vpslld(b_lo(j), b_hi(j), 16);
    if (both) vpand(b_hi(j), b_hi(j), hi_mask);
  }
  for (int i = 0; i < rows; ++i) {
    const int64_t disp = i * desc().lda * 2 + a_off;
    if (both) {
      vpbroadcastd(a_hi, ptr[reg_a_ + disp]);
      vpslld(a_lo, a_hi, 16);
      vpand(a_hi, a_hi, hi_mask);
    } else {
      // Odd K: only element k exists; read exactly its two bytes.
      LoadPartialGroup(i, a_off, valid);
      shl(reg_tmp_.cvt32(), 16);
      vmovd(Xbyak::Xmm(a_lo.getIdx()), reg_tmp_.cvt32());
      vpbroadcastd(a_lo, Xbyak::Xmm(a_lo.getIdx()));
    }
    for (int j = 0; j < nvecs; ++j) {
      vfmadd231ps(Acc(i, j, nvecs), a_lo, b_lo(j));
      if (both) vfmadd231ps(Acc(i, j, nvecs), a_hi, b_hi(j));
    }
  }
}

void BrgemmAvx2::ComputeGroupInt8(int rows, int nvecs, bool masked,
                                  int64_t a_off, int64_t b_off, int valid) {
  // A's 4-byte group widened to s16 and repeated 4 times matches B's
  // widened halves (LoadBInt8); EmitKLoopInt8 takes full groups from A
  // widened on the stack instead, this reads A itself (the K tail).
  const Xbyak::Ymm a = Reserved(0);
  LoadBInt8(nvecs, masked, b_off);
  const Xbyak::Xmm a_group(a.getIdx());
  for (int i = 0; i < rows; ++i) {
    const int64_t disp = i * desc().lda + a_off;
    if (valid == 4) {
      vpbroadcastd(a_group, ptr[reg_a_ + disp]);
    } else {
      // The K tail: exactly `valid` bytes, the rest of the group zero.
      LoadPartialGroup(i, a_off, valid);
      vmovd(a_group, reg_tmp_.cvt32());
      vpbroadcastd(a_group, a_group);
    }
    WidenAElements(a, a_group);
    AccumulateRowInt8(i, nvecs);
  }
}

void BrgemmAvx2::StoreTile(int rows, int nvecs, bool masked) {
  if (IsInt()) {
    StoreIntTile(rows, nvecs, masked);
    return;
  }
  const Xbyak::Ymm tmp = Broadcast();
  // With B from memory one register holds each bias vector in turn, loaded
  // as it is used from the row's address, kept in reg_tmp_ (no divisors or
  // maxima need it then).
  if (desc().scale) {
    mov(reg_tmp_, ptr[reg_args_ + kArgScale]);
    vbroadcastss(ScaleRegister(), ptr[reg_tmp_]);
  }
  if (desc().bias) {
    // The N block's bias row starts as many bytes into args.bias as the
    // block's first column of C into args.c (f32 only: both 4-byte).
    mov(reg_tmp_, ptr[reg_args_ + kArgBias]);
    add(reg_tmp_, reg_c_n_);
    sub(reg_tmp_, ptr[reg_args_ + kArgC]);
    for (int j = 0; j < nvecs && !b_from_memory_; ++j) {
      LoadVector(BVector(j), ptr[reg_tmp_ + j * kVectorBytes],
                 masked && j == nvecs - 1);
    }
  }
  if (desc().relu) vxorps(ConstRegister(), ConstRegister(), ConstRegister());
  if (desc().divide_rows) BroadcastDword(ConstRegister(), 0x3f800000u);  // 1.0f
  // The tile's first divisor or row of maxima, in reg_tmp_ through the store.
  if (desc().divide_rows || desc().row_max) mov(reg_tmp_, RowSlot());
  for (int i = 0; i < rows; ++i) {
    if (desc().divide_rows) {
      vbroadcastss(BVector(0), ptr[reg_tmp_ + i * 4]);
      vdivps(BVector(0), ConstRegister(), BVector(0));
    }
    for (int j = 0; j < nvecs; ++j) {
      const Xbyak::Ymm acc = Acc(i, j, nvecs);
      const bool tail = masked && j == nvecs - 1;
      const Xbyak::Address c =
          ptr[reg_c_ + i * desc().ldc * 4 + j * kVectorBytes];
      if (desc().accumulate) AddC(acc, c, tail, tmp);
      if (desc().bias && b_from_memory_) {
        LoadVector(BVector(j), ptr[reg_tmp_ + j * kVectorBytes], tail);
      }
      if (desc().divide_rows) vmulps(acc, acc, BVector(0));
      if (desc().scale && desc().bias) {
        vfmadd213ps(acc, ScaleRegister(), BVector(j));
      } else if (desc().scale) {
        vmulps(acc, acc, ScaleRegister());
      } else if (desc().bias) {
        vaddps(acc, acc, BVector(j));
      }
      if (desc().relu) {
        // x > 0 (or NaN) ? x : +0, the reference's relu.
        vcmpps(tmp, acc, ConstRegister(), 0x16);  // NLE_UQ
        vandps(acc, acc, tmp);
      }
      StoreVector(c, acc, tail);
      if (desc().row_max) {
        // Vector j of a 16-column block folds into lanes 8 (j % 2) + l:
        // vmaxps(old max, value), the tail's lanes past N left as they were.
        const Xbyak::Address lanes =
            ptr[reg_tmp_ + i * 64 + (j % 2) * kVectorBytes];
        vmovups(tmp, lanes);
        vmaxps(tmp, tmp, acc);
        StoreVector(lanes, tmp, tail);
      }
    }
  }
}

void BrgemmAvx2::StoreIntTile(int rows, int nvecs, bool masked) {
  const Xbyak::Ymm tmp = Reserved(1);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < nvecs; ++j) {
      // lo = (c0, c0, c1, c1 | c2, c2, c3, c3) pair sums, hi the same for
      // c4..c7. vphaddd: (c0, c1, c4, c5 | c2, c3, c6, c7); qwords 0, 2,
      // 1, 3 put them in order.
      const Xbyak::Ymm lo = Acc(i, 2 * j, 2 * nvecs);
      const Xbyak::Ymm hi = Acc(i, 2 * j + 1, 2 * nvecs);
      vphaddd(lo, lo, hi);
      vpermq(lo, lo, 0xD8);
      const bool tail = masked && j == nvecs - 1;
      const Xbyak::Address c =
          ptr[reg_c_ + i * desc().ldc * 4 + j * kVectorBytes];
      if (desc().accumulate) AddC(lo, c, tail, tmp);
      StoreVector(c, lo, tail);
    }
  }
}

}  // namespace microkernels
}  // namespace hgc
