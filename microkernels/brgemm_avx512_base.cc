#include "microkernels/brgemm_avx512_base.h"

#include "microkernels/brgemm_abi.h"

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT: register names read like assembly.

Xbyak::Address BrgemmAvx512Base::AAddr(int row, int64_t a_off) {
  return ptr[reg_a_ + row * desc().lda * a_elem_bytes() + a_off];
}

Xbyak::Address BrgemmAvx512Base::BAddr(int vec, int64_t b_off) {
  return ptr[reg_b_ + b_off + vec * 64];
}

void BrgemmAvx512Base::LoadBVectors(int nvecs, bool masked, int64_t b_off,
                                    bool float_domain) {
  LoadVectors(reg_b_, nvecs, masked, b_off, float_domain);
}

void BrgemmAvx512Base::LoadVectors(const Xbyak::Reg64& base, int nvecs,
                                   bool masked, int64_t off,
                                   bool float_domain) {
  for (int j = 0; j < nvecs; ++j) {
    const Xbyak::Zmm v = Reserved(1 + j);
    const Xbyak::Zmm dst = masked && j == nvecs - 1 ? v | k1 | T_z : v;
    const Xbyak::Address src = ptr[base + off + j * 64];
    if (float_domain) {
      vmovups(dst, src);
    } else {
      vmovdqu32(dst, src);
    }
  }
}

void BrgemmAvx512Base::BroadcastPartialGroup(const Xbyak::Zmm& dst, int row,
                                             int64_t a_off, int valid) {
  LoadPartialGroup(row, a_off, valid);
  vpbroadcastd(dst, reg_tmp_.cvt32());
}

absl::Status BrgemmAvx512Base::Generate() {
  Preamble();
  InitConstants();
  mov(reg_c_n_, ptr[reg_args_ + kArgC]);
  xor_(reg_boff_, reg_boff_);
  CallPrologue();
  EmitTiles();
  CallEpilogue();
  Postamble();
  return absl::OkStatus();
}

void BrgemmAvx512Base::BeforeNTail(int cols) {
  // The N tail's opmask, set once before the one partial block.
  mov(reg_tmp_.cvt32(), (1u << (cols % 16)) - 1);
  kmovw(k1, reg_tmp_.cvt32());
}

void BrgemmAvx512Base::InitAccumulators(int rows, int nvecs) {
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < nvecs; ++j) {
      const Xbyak::Zmm acc = Acc(i, j, nvecs);
      vpxord(acc, acc, acc);
    }
  }
}

void BrgemmAvx512Base::EmitTile(int rows, int cols) {
  const int nvecs = (cols + 15) / 16;
  const bool masked = cols % 16 != 0;
  InitAccumulators(rows, nvecs);
  EmitBatchLoop([&] { EmitKLoop(rows, nvecs, masked); });
  FinishAccumulators(rows, nvecs);
  StoreAcc(rows, nvecs, masked);
}

void BrgemmAvx512Base::StoreAcc(int rows, int nvecs, bool masked) {
  PreparePostOps(nvecs, masked);
  for (int i = 0; i < rows; ++i) {
    PrepareRowPostOps(i);
    for (int j = 0; j < nvecs; ++j) {
      const Xbyak::Zmm acc = Acc(i, j, nvecs);
      const bool tail = masked && j == nvecs - 1;
      const Xbyak::Address c = ptr[reg_c_ + i * desc().ldc * 4 + j * 64];
      if (desc().accumulate) {
        // Masked, zeroing loads never touch the lanes past N.
        const Xbyak::Zmm dst = tail ? acc | k1 | T_z : acc;
        if (IsInt()) {
          vpaddd(dst, acc, c);
        } else {
          vaddps(dst, acc, c);
        }
      }
      ApplyPostOps(acc, j);
      if (tail) {
        vmovups(c | k1, acc);
      } else {
        vmovups(c, acc);
      }
    }
    FinishRowPostOps(i, nvecs, masked);
  }
}

}  // namespace microkernels
}  // namespace hgc
