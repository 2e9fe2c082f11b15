#include "microkernels/brgemm_avx512_bf16.h"

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT

void BrgemmAvx512Bf16::ComputeGroup(int rows, int nvecs, bool masked,
                                    int64_t a_off, int64_t b_off, int valid) {
  const Xbyak::Zmm bcast = Reserved(0);
  LoadBVectors(nvecs, masked, b_off, /*float_domain=*/false);
  for (int i = 0; i < rows; ++i) {
    if (valid == 2) {
      vpbroadcastd(bcast, AAddr(i, a_off));
    } else {
      // Odd K: the pair's second half is zero, not whatever follows A[K-1]
      // (an Inf or NaN there would poison the zero-padded B product).
      BroadcastPartialGroup(bcast, i, a_off, valid);
    }
    for (int j = 0; j < nvecs; ++j) {
      vdpbf16ps(Acc(i, j, nvecs), bcast, Reserved(1 + j));
    }
  }
}

}  // namespace microkernels
}  // namespace hgc
