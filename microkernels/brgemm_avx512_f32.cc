#include "microkernels/brgemm_avx512_f32.h"

#include "microkernels/brgemm_abi.h"

namespace hgc {
namespace microkernels {

using namespace Xbyak::util;  // NOLINT

namespace {
// Each register tile prefetches (prefetcht1, into L2) an equal share of the
// B region right after the call's own: in a GEMM (gemm_driver.cc) the packed
// B chunks lie in call order, so that is the next call's chunk (32 KB at
// nb 64 / kb 128: 16 lines per tile of 32), which otherwise the next call's
// first tile waits for from L3 once B outgrows L2. Only for calls with K at
// least kPrefetchBMinK and C rows at least kPrefetchBMinLdcBytes apart (a
// large GEMM; the kernel benchmark's narrow C never prefetches). Measured
// with bench/brgemm_bench.cc, single-threaded f32, hgc/oneDNN with / without
// (10 alternating runs, median and range): 1024^3 1.03 (1.03-1.11) / 0.995
// (0.98-1.02); 512^3 (ldc 2 KB) 1.03 (1.01-1.10) / 1.015 (1.00-1.08);
// 256^3 (ldc 1 KB, off) 1.01 / 1.005. The kernel figures are unchanged.
// prefetcht0 and two chunks ahead were no better; prefetching the next C
// tile for writing (as brgemm_amx.cc does) or the next tile's A rows into
// L1 measured equal or worse.
constexpr int64_t kPrefetchBMinK = 64;
constexpr int64_t kPrefetchBMinLdcBytes = 2048;
}  // namespace

int64_t BrgemmAvx512F32::PrefetchBLinesPerTile() const {
  const BrgemmDesc& d = desc();
  if (d.k < kPrefetchBMinK || d.ldc * 4 < kPrefetchBMinLdcBytes) return 0;
  const int full_cols = blocking().nvecs * 16;
  const int64_t tiles = ((d.n + full_cols - 1) / full_cols) *
                        ((d.m + blocking().rows - 1) / blocking().rows);
  const int64_t lines = (PackedBBytes(d) + 63) / 64;
  return (lines + tiles - 1) / tiles;
}

void BrgemmAvx512F32::CallPrologue() {
  if (PrefetchBLinesPerTile() == 0) return;
  // reg_tmp2_ (unused by f32 otherwise): the B region right after the first
  // batch element's, which in a GEMM (gemm_driver.cc) is the next call's.
  mov(reg_tmp2_, ptr[reg_args_ + kArgB]);
  if (desc().batch_kind == BatchKind::kPointerList) {
    mov(reg_tmp2_, ptr[reg_tmp2_]);
  }
  AddImm(reg_tmp2_, (PackedBBytes(desc()) + 63) / 64 * 64, reg_tmp_);
}

void BrgemmAvx512F32::TilePrologue(int rows, int cols) {
  const int64_t lines = PrefetchBLinesPerTile();
  if (lines == 0) return;
  for (int64_t i = 0; i < lines; ++i) prefetcht1(ptr[reg_tmp2_ + i * 64]);
  AddImm(reg_tmp2_, lines * 64, reg_tmp_);
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
