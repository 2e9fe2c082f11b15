#include "microkernels/brgemm_avx512_bf16_fma.h"

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT

// Reserved registers: 0 = 0xffff0000 mask, 1 = A low half (element k),
// 2 = A high half (element k + 1), 3.. = B halves (low, high) per vector.
void BrgemmAvx512Bf16Fma::InitConstants() {
  mov(reg_tmp_.cvt32(), 0xffff0000u);
  vpbroadcastd(Reserved(0), reg_tmp_.cvt32());
}

// DAZ for the call, the MXCSR pair in an 8-byte frame.
void BrgemmAvx512Bf16Fma::CallPrologue() {
  sub(rsp, 8);
  EnterDaz();
}

void BrgemmAvx512Bf16Fma::CallEpilogue() {
  RestoreMxcsr();
  add(rsp, 8);
}

void BrgemmAvx512Bf16Fma::ComputeGroup(int rows, int nvecs, bool masked,
                                       int64_t a_off, int64_t b_off,
                                       int valid) {
  const Xbyak::Zmm hi_mask = Reserved(0);
  const Xbyak::Zmm a_lo = Reserved(1);
  const Xbyak::Zmm a_hi = Reserved(2);
  auto b_lo = [&](int j) { return Reserved(3 + 2 * j); };
  auto b_hi = [&](int j) { return Reserved(4 + 2 * j); };
  const bool both = valid == 2;
  for (int j = 0; j < nvecs; ++j) {
    // The shift/and read B straight from memory: no extra register, and the
    // load micro-fuses. The N tail's masked lanes are zeroed and not read.
    const bool tail = masked && j == nvecs - 1;
    vpslld(tail ? b_lo(j) | k1 | T_z : b_lo(j), BAddr(j, b_off), 16);
    if (both) {
      vpandd(tail ? b_hi(j) | k1 | T_z : b_hi(j), hi_mask, BAddr(j, b_off));
    }
  }
  for (int i = 0; i < rows; ++i) {
    if (both) {
      vpslld(a_lo, ptr_b[reg_a_ + i * desc().lda * 2 + a_off], 16);
      vpandd(a_hi, hi_mask, ptr_b[reg_a_ + i * desc().lda * 2 + a_off]);
    } else {
      // Odd K: only element k exists; B's padded element k + 1 is skipped.
      BroadcastPartialGroup(a_lo, i, a_off, valid);
      vpslld(a_lo, a_lo, 16);
    }
    for (int j = 0; j < nvecs; ++j) {
      vfmadd231ps(Acc(i, j, nvecs), a_lo, b_lo(j));
      if (both) vfmadd231ps(Acc(i, j, nvecs), a_hi, b_hi(j));
    }
  }
}

}  // namespace microkernels
}  // namespace hgc
