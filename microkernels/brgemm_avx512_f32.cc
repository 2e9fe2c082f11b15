#include "microkernels/brgemm_avx512_f32.h"

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT

void BrgemmAvx512F32::ComputeGroup(int rows, int nvecs, bool masked,
                                   int64_t a_off, int64_t b_off, int valid) {
  // Registers: B vectors at Reserved(1..nvecs), the broadcast at Reserved(0).
  const Xbyak::Zmm bcast = Reserved(0);
  for (int j = 0; j < nvecs; ++j) {
    const Xbyak::Zmm b = Reserved(1 + j);
    if (masked && j == nvecs - 1) {
      vmovups(b | k1 | T_z, BAddr(j, b_off));
    } else {
      vmovups(b, BAddr(j, b_off));
    }
  }
  for (int i = 0; i < rows; ++i) {
    vbroadcastss(bcast, AAddr(i, a_off));
    for (int j = 0; j < nvecs; ++j) {
      vfmadd231ps(Acc(i, j, nvecs), bcast, Reserved(1 + j));
    }
  }
}

}  // namespace microkernels
}  // namespace hgc
