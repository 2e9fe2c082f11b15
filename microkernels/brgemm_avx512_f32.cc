#include "microkernels/brgemm_avx512_f32.h"

#include "microkernels/brgemm_abi.h"

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT

namespace {
// Each register tile prefetches (prefetcht1, into L2) an equal share of the
// B region right after the call's own, a few lines per trip of its K loop:
// in the compiler's tile loop and in a GEMM (gemm_driver.cc) the packed B
// chunks lie in call order, so that is the next call's chunk, which the
// next call's first register tile otherwise waits for from L3 once B
// outgrows L2 (MLP-2's 8.5 MB of weights, at every batch). The prefetches
// are spread over the loop, not issued in one burst, so that the few
// line-fill buffers stay free for the tile's own misses (a burst per tile
// measured no better than no prefetch on MLP-2). Only for calls with K of at
// least kPrefetchBMinK (a K loop of several trips) and C rows at least
// kPrefetchBMinLdcBytes apart: a wide GEMM, whose B outgrows L2. Calls on
// one small B that stays in L2 (the kernel benchmark's narrow C) lose 3-5 %
// to the prefetches' load slots; MLP-2's 256-wide layer measured the same
// with and without. prefetcht0 and two chunks ahead were no better. The
// share is sized for one batch element; a longer batch prefetches further.
//
// A descriptor's own prefetch region (prefetch_lines) replaces that rule:
// its lines are shared out over every K-loop trip of every register tile
// the same way, the pointer clamped at the region's end (kept in a stack
// slot) so that rounding the share up overshoots by one trip's lines at
// most.
constexpr int64_t kPrefetchBMinK = 64;
constexpr int64_t kPrefetchBMinLdcBytes = 2048;
}  // namespace

int64_t BrgemmAvx512F32::PrefetchLinesPerTrip() const {
  const BrgemmDesc& d = desc();
  if (d.prefetch_lines > 0) return RegionLinesPerTrip();
  const int64_t trips = d.k / blocking().k_unroll;
  if (trips < 2) return 0;
  const int64_t tiles = RegisterTiles();
  if (d.k < kPrefetchBMinK || d.ldc * 4 < kPrefetchBMinLdcBytes) return 0;
  const int64_t lines = (PackedBBytes(d) + 63) / 64;
  const int64_t per_tile = (lines + tiles - 1) / tiles;
  return (per_tile + trips - 1) / trips;
}

int BrgemmAvx512F32::StackSlots() const {
  const bool pointer = desc().divide_rows || desc().row_max;
  const bool region_end =
      desc().prefetch_lines > 0 && PrefetchLinesPerTrip() > 0;
  return (pointer ? 1 : 0) + (region_end ? 1 : 0);
}

// divide_rows: the M block's first divisor lives in a stack slot (every
// general-purpose register is taken), set per N block and advanced per M
// block; each tile row's reciprocal is computed once, before its store.
// row_max keeps the M block's first row of maxima there the same way.
void BrgemmAvx512F32::CallPrologue() {
  if (StackSlots() > 0) sub(rsp, 8 * StackSlots());
  if (PrefetchLinesPerTrip() == 0) return;
  if (desc().prefetch_lines > 0) {
    // reg_tmp2_ (unused by f32 otherwise): the call's region; its end in
    // the last stack slot.
    mov(reg_tmp2_, ptr[reg_args_ + kArgPrefetch]);
    mov(reg_tmp_, reg_tmp2_);
    AddImm(reg_tmp_, desc().prefetch_lines * 64, reg_n_);
    mov(qword[rsp + 8 * (StackSlots() - 1)], reg_tmp_);
    return;
  }
  // The B region right after the first batch element's, which in a GEMM
  // (gemm_driver.cc) is the next call's.
  mov(reg_tmp2_, ptr[reg_args_ + kArgB]);
  if (desc().batch_kind == BatchKind::kPointerList) {
    // An empty list may be null: then prefetch near it (prefetches never
    // fault) rather than read its first entry.
    Xbyak::Label empty;
    cmp(qword[reg_args_ + kArgBatch], 0);
    jle(empty);
    mov(reg_tmp2_, ptr[reg_tmp2_]);
    L(empty);
  }
  AddImm(reg_tmp2_, (PackedBBytes(desc()) + 63) / 64 * 64, reg_tmp_);
}

void BrgemmAvx512F32::CallEpilogue() {
  if (StackSlots() > 0) add(rsp, 8 * StackSlots());
}

void BrgemmAvx512F32::NBlockPrologue() {
  if (!desc().divide_rows && !desc().row_max) return;
  mov(reg_tmp_,
      ptr[reg_args_ + (desc().divide_rows ? kArgRowDivisors : kArgRowMax)]);
  mov(qword[rsp], reg_tmp_);
}

void BrgemmAvx512F32::MBlockEpilogue(int rows) {
  if (desc().divide_rows) add(qword[rsp], rows * 4);
  if (desc().row_max) add(qword[rsp], rows * 64);
}

void BrgemmAvx512F32::KLoopTrip() {
  const int64_t lines = PrefetchLinesPerTrip();
  if (lines == 0) return;
  const Xbyak::Address end = qword[rsp + 8 * (StackSlots() - 1)];
  EmitPrefetchTrip(lines, desc().prefetch_lines > 0 ? &end : nullptr);
}

void BrgemmAvx512F32::PreparePostOps(int nvecs, bool masked) {
  // After the K loop the broadcast register (the relu's zero) and B's
  // (the bias row) are free. The N block's bias row starts as many bytes
  // into args.bias as the block's first column of C into args.c (both
  // 4-byte elements).
  if (desc().bias) {
    mov(reg_tmp_, ptr[reg_args_ + kArgBias]);
    add(reg_tmp_, reg_c_n_);
    sub(reg_tmp_, ptr[reg_args_ + kArgC]);
    LoadVectors(reg_tmp_, nvecs, masked, 0, /*float_domain=*/true);
  }
  if (desc().scale) {
    mov(reg_tmp_, ptr[reg_args_ + kArgScale]);
    vbroadcastss(ScaleRegister(), ptr[reg_tmp_]);
  }
  if (desc().relu) vpxord(Reserved(0), Reserved(0), Reserved(0));
  // The tile's first row of maxima, in reg_tmp_ through the store.
  if (desc().row_max) mov(reg_tmp_, qword[rsp]);
  if (desc().divide_rows) {
    // 1.0f in every lane (all ones >> 25 << 23 = 0x3f800000) and the
    // tile's first divisor.
    const Xbyak::Zmm one = Reserved(0);
    vpternlogd(one, one, one, 0xff);
    vpsrld(one, one, 25);
    vpslld(one, one, 23);
    mov(reg_tmp_, qword[rsp]);
  }
}

void BrgemmAvx512F32::PrepareRowPostOps(int row) {
  if (!desc().divide_rows) return;
  vdivps(Reserved(1), Reserved(0), ptr_b[reg_tmp_ + row * 4]);
}

void BrgemmAvx512F32::ApplyPostOps(const Xbyak::Zmm& acc, int vec) {
  if (desc().divide_rows) vmulps(acc, acc, Reserved(1));
  if (desc().scale && desc().bias) {
    vfmadd213ps(acc, ScaleRegister(), Reserved(1 + vec));
  } else if (desc().scale) {
    vmulps(acc, acc, ScaleRegister());
  } else if (desc().bias) {
    vaddps(acc, acc, Reserved(1 + vec));
  }
  if (desc().relu) {
    // x > 0 (or NaN) ? x : +0, the reference's relu; vmaxps would turn NaN
    // into 0. k2 is free in f32 kernels.
    vcmpps(k2, acc, Reserved(0), 0x16);  // NLE_UQ: greater, or unordered
    vmovaps(acc | k2 | T_z, acc);
  }
}

void BrgemmAvx512F32::FinishRowPostOps(int row, int nvecs, bool masked) {
  if (!desc().row_max) return;
  // Lane l folds in column 16 j + l of each vector j: vmaxps(max, value),
  // the tail vector's lanes past N left as they were.
  const Xbyak::Zmm max = RowMaxRegister();
  const Xbyak::Address lanes = ptr[reg_tmp_ + row * 64];
  vmovups(max, lanes);
  for (int j = 0; j < nvecs; ++j) {
    const Xbyak::Zmm acc = Acc(row, j, nvecs);
    if (masked && j == nvecs - 1) {
      vmaxps(max | k1, max, acc);
    } else {
      vmaxps(max, max, acc);
    }
  }
  vmovups(lanes, max);
}

void BrgemmAvx512F32::ComputeGroup(int rows, int nvecs, bool masked,
                                   int64_t a_off, int64_t b_off, int valid) {
  // Registers: B vectors at Reserved(1..nvecs), the broadcast at Reserved(0).
  const Xbyak::Zmm bcast = Reserved(0);
  LoadBVectors(nvecs, masked, b_off, /*float_domain=*/true);
  for (int i = 0; i < rows; ++i) {
    vbroadcastss(bcast, AAddr(i, a_off));
    for (int j = 0; j < nvecs; ++j) {
      vfmadd231ps(Acc(i, j, nvecs), bcast, Reserved(1 + j));
    }
  }
}

}  // namespace microkernels
}  // namespace hgc
