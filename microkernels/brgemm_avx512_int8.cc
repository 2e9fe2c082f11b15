#include "microkernels/brgemm_avx512_int8.h"

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT

// Reserved registers: 0 = broadcast A (u8s8) or K-tail broadcast (s8s8);
// 1.. = B vectors; s8s8 also keeps the 0x80 bytes in Reserved(nvecs_max+1).
void BrgemmAvx512Int8::InitConstants() {
  if (!signed_a()) return;
  mov(reg_tmp_.cvt32(), 0x80808080u);
  vpbroadcastd(Reserved(blocking().nvecs + 1), reg_tmp_.cvt32());
  const int64_t tail = desc().k % 64;
  if (tail != 0) {
    // k2 selects the bytes of a row's last partial 64-byte chunk.
    mov(reg_tmp_, (tail == 64 ? ~uint64_t{0} : (uint64_t{1} << tail) - 1));
    kmovq(k2, reg_tmp_);
  }
}

void BrgemmAvx512Int8::BatchPrologue(int rows, int nvecs) {
  if (!signed_a()) return;
  const Xbyak::Zmm bias = Reserved(blocking().nvecs + 1);
  // The broadcast and first B registers are free here (Reserved(2) may be
  // the bias itself when the tile is one vector wide).
  const Xbyak::Zmm sum = Reserved(1);
  const Xbyak::Zmm tmp = Reserved(0);
  const int64_t chunks = desc().k / 64;
  for (int i = 0; i < rows; ++i) {
    vpxord(sum, sum, sum);
    const int64_t row = i * desc().lda;
    for (int64_t c = 0; c < chunks; ++c) {
      vpdpbusd(sum, bias, ptr[reg_a_ + row + c * 64]);
    }
    if (desc().k % 64 != 0) {
      vmovdqu8(tmp | k2 | T_z, ptr[reg_a_ + row + chunks * 64]);
      vpdpbusd(sum, bias, tmp);
    }
    // Horizontal sum into every lane, then out of each accumulator.
    vextracti64x4(Xbyak::Ymm(tmp.getIdx()), sum, 1);
    vpaddd(Xbyak::Ymm(sum.getIdx()), Xbyak::Ymm(sum.getIdx()),
           Xbyak::Ymm(tmp.getIdx()));
    vextracti32x4(Xbyak::Xmm(tmp.getIdx()), Xbyak::Ymm(sum.getIdx()), 1);
    vpaddd(Xbyak::Xmm(sum.getIdx()), Xbyak::Xmm(sum.getIdx()),
           Xbyak::Xmm(tmp.getIdx()));
    vpshufd(Xbyak::Xmm(tmp.getIdx()), Xbyak::Xmm(sum.getIdx()), 0x4e);
    vpaddd(Xbyak::Xmm(sum.getIdx()), Xbyak::Xmm(sum.getIdx()),
           Xbyak::Xmm(tmp.getIdx()));
    vpshufd(Xbyak::Xmm(tmp.getIdx()), Xbyak::Xmm(sum.getIdx()), 0xb1);
    vpaddd(Xbyak::Xmm(sum.getIdx()), Xbyak::Xmm(sum.getIdx()),
           Xbyak::Xmm(tmp.getIdx()));
    vpbroadcastd(sum, Xbyak::Xmm(sum.getIdx()));
    for (int j = 0; j < nvecs; ++j) {
      vpsubd(Acc(i, j, nvecs), Acc(i, j, nvecs), sum);
    }
  }
}

void BrgemmAvx512Int8::ComputeGroup(int rows, int nvecs, bool masked,
                                    int64_t a_off, int64_t b_off, int valid) {
  const Xbyak::Zmm bcast = Reserved(0);
  for (int j = 0; j < nvecs; ++j) {
    const Xbyak::Zmm b = Reserved(1 + j);
    if (masked && j == nvecs - 1) {
      vmovdqu32(b | k1 | T_z, BAddr(j, b_off));
    } else {
      vmovdqu32(b, BAddr(j, b_off));
    }
    // Masked-off lanes become 0x80 (B = 0 after the bias): harmless, their
    // results are never stored.
    if (signed_a()) vpxord(b, b, Reserved(blocking().nvecs + 1));
  }
  for (int i = 0; i < rows; ++i) {
    // One broadcast load per row feeds every vector: an embedded-broadcast
    // operand per instruction would need rows * nvecs loads per group and
    // saturate the load ports before the VNNI ports.
    if (valid != 4) {
      BroadcastPartialGroup(bcast, i, a_off, valid);
    } else {
      vpbroadcastd(bcast, AAddr(i, a_off));
    }
    for (int j = 0; j < nvecs; ++j) {
      const Xbyak::Zmm b = Reserved(1 + j);
      if (signed_a()) {
        // Padded K bytes of B' are 0x80 (B = 0) but A's are zero: no term.
        vpdpbusd(Acc(i, j, nvecs), b, bcast);
      } else {
        vpdpbusd(Acc(i, j, nvecs), bcast, b);
      }
    }
  }
}

}  // namespace microkernels
}  // namespace hgc
