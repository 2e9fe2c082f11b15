#include "microkernels/brgemm_avx2_dot.h"

#include "microkernels/brgemm_abi.h"

namespace hgc {
namespace microkernels {

// Vector registers: ymm0-7 the accumulators of a group's 8 columns, ymm8
// A's vector, ymm9 a masked B vector (the K tail), ymm10 the K tail's lane
// mask, ymm11 the N tail's, ymm12 the broadcast scale, ymm13 C's old values
// or the bias row.
namespace {

constexpr int kLanes = 8;
const Xbyak::Ymm kA(8), kBTail(9), kKMask(10), kNMask(11), kScale(12),
    kOperand(13);

Xbyak::Ymm Acc(int j) { return Xbyak::Ymm(j); }

}  // namespace

BrgemmAvx2Dot::BrgemmAvx2Dot(const BrgemmDesc& desc)
    : JitGenerator(desc.ToString()), desc_(desc) {}

absl::Status BrgemmAvx2Dot::Generate() {
  Preamble();
  mov(reg_c_, ptr[reg_args_ + kArgC]);
  if (desc_.bias) mov(reg_bias_, ptr[reg_args_ + kArgBias]);
  if (desc_.scale) {
    mov(reg_tmp_, ptr[reg_args_ + kArgScale]);
    vbroadcastss(kScale, ptr[reg_tmp_]);
  }
  if (desc_.k % kLanes != 0) LoadLaneMask(kKMask, desc_.k % kLanes, reg_tmp_);
  xor_(reg_b_group_, reg_b_group_);
  const int64_t whole = desc_.n / kLanes;
  if (whole > 0) {
    Xbyak::Label group;
    mov(reg_groups_, whole);
    L(group);
    EmitGroup(kLanes);
    add(reg_c_, kLanes * 4);
    if (desc_.bias) add(reg_bias_, kLanes * 4);
    add(reg_b_group_, kLanes * desc_.ldb * 4);
    dec(reg_groups_);
    jnz(group, T_NEAR);
  }
  if (desc_.n % kLanes != 0) {
    LoadLaneMask(kNMask, desc_.n % kLanes, reg_tmp_);
    EmitGroup(desc_.n % kLanes);
  }
  Postamble();
  if (desc_.k % kLanes != 0 || desc_.n % kLanes != 0) EmitLaneMaskTable();
  return absl::OkStatus();
}

void BrgemmAvx2Dot::EmitGroup(int keys) {
  // All 8 accumulators start at 0: the fold reads them all, and a tail
  // group's missing columns sum to 0 in the lanes it does not store.
  for (int j = 0; j < kLanes; ++j) vxorps(Acc(j), Acc(j), Acc(j));
  EmitBatchLoop(keys);
  FoldAccumulators();
  const bool masked = keys < kLanes;
  auto load = [&](const Xbyak::Ymm& dst, const Xbyak::Reg64& base) {
    if (masked) {
      vmaskmovps(dst, kNMask, ptr[base]);
    } else {
      vmovups(dst, ptr[base]);
    }
  };
  if (desc_.accumulate) {
    load(kOperand, reg_c_);
    vaddps(Acc(0), Acc(0), kOperand);
  }
  if (desc_.bias) load(kOperand, reg_bias_);
  if (desc_.scale && desc_.bias) {
    vfmadd213ps(Acc(0), kScale, kOperand);  // C * scale + bias, rounded once
  } else if (desc_.scale) {
    vmulps(Acc(0), Acc(0), kScale);
  } else if (desc_.bias) {
    vaddps(Acc(0), Acc(0), kOperand);
  }
  if (masked) {
    vmaskmovps(ptr[reg_c_], kNMask, Acc(0));
  } else {
    vmovups(ptr[reg_c_], Acc(0));
  }
}

void BrgemmAvx2Dot::EmitBatchLoop(int keys) {
  const bool strided = desc_.batch_kind == BatchKind::kStrided;
  Xbyak::Label element, done;
  mov(reg_batch_, ptr[reg_args_ + kArgBatch]);
  test(reg_batch_, reg_batch_);
  jle(done, T_NEAR);
  mov(reg_iter_a_, ptr[reg_args_ + kArgA]);
  mov(reg_iter_b_, ptr[reg_args_ + kArgB]);
  L(element);
  if (strided) {
    mov(reg_a_, reg_iter_a_);
    mov(reg_b_, reg_iter_b_);
  } else {
    mov(reg_a_, ptr[reg_iter_a_]);
    mov(reg_b_, ptr[reg_iter_b_]);
  }
  add(reg_b_, reg_b_group_);
  EmitDotProducts(keys);
  if (strided) {
    AddImm(reg_iter_a_, desc_.stride_a_bytes, reg_tmp_);
    AddImm(reg_iter_b_, desc_.stride_b_bytes, reg_tmp_);
  } else {
    add(reg_iter_a_, 8);
    add(reg_iter_b_, 8);
  }
  dec(reg_batch_);
  jnz(element, T_NEAR);
  L(done);
}

// One batch element: A's row against `keys` rows of B, 8 K at a time.
void BrgemmAvx2Dot::EmitDotProducts(int keys) {
  const int64_t row_bytes = desc_.ldb * 4;
  const int64_t trips = desc_.k / kLanes;
  if (trips > 0) {
    Xbyak::Label trip;
    mov(reg_k_, trips);
    L(trip);
    vmovups(kA, ptr[reg_a_]);
    for (int j = 0; j < keys; ++j) {
      vfmadd231ps(Acc(j), kA, ptr[reg_b_ + j * row_bytes]);
    }
    add(reg_a_, kLanes * 4);
    add(reg_b_, kLanes * 4);
    dec(reg_k_);
    jnz(trip, T_NEAR);
  }
  if (desc_.k % kLanes != 0) {
    // Masked lanes are neither read nor summed (they load as 0).
    vmaskmovps(kA, kKMask, ptr[reg_a_]);
    for (int j = 0; j < keys; ++j) {
      vmaskmovps(kBTail, kKMask, ptr[reg_b_ + j * row_bytes]);
      vfmadd231ps(Acc(j), kA, kBTail);
    }
  }
}

// hadd pairs the accumulators' lanes: after two rounds ymm0 holds the sums
// of lanes 0-3 of accumulators 0-3 in its low half and of lanes 4-7 in its
// high half, ymm4 the same for accumulators 4-7; the low halves joined plus
// the high halves joined give one sum per accumulator, in order.
void BrgemmAvx2Dot::FoldAccumulators() {
  vhaddps(Acc(0), Acc(0), Acc(1));
  vhaddps(Acc(2), Acc(2), Acc(3));
  vhaddps(Acc(4), Acc(4), Acc(5));
  vhaddps(Acc(6), Acc(6), Acc(7));
  vhaddps(Acc(0), Acc(0), Acc(2));
  vhaddps(Acc(4), Acc(4), Acc(6));
  vperm2f128(Acc(1), Acc(0), Acc(4), 0x20);
  vperm2f128(Acc(3), Acc(0), Acc(4), 0x31);
  vaddps(Acc(0), Acc(1), Acc(3));
}

}  // namespace microkernels
}  // namespace hgc
