// Packing B into the layouts the microkernels read (brgemm_desc.h, BLayout).
//
// The compiler calls these once per constant weight, so they favour
// obviously-correct loops over speed. The packed VNNI-2 and VNNI-4 layouts
// are also the AMX B-tile layouts: one tile row is one K group of 16
// consecutive columns (64 bytes), and consecutive tile rows are ldb * g
// elements apart, so AMX kernels load tiles straight from the same buffer.
#ifndef HGC_MICROKERNELS_PACK_H_
#define HGC_MICROKERNELS_PACK_H_

#include <cstdint>

#include "absl/status/status.h"
#include "microkernels/brgemm_desc.h"

namespace hgc {
namespace microkernels {

// Where the unpacked B comes from.
struct BSource {
  const void* data = nullptr;
  // Row-major K x N with leading dimension `ld` (>= N) when !transposed;
  // row-major N x K (i.e. B^T, as `matmul(transpose_b = true)` stores it)
  // with leading dimension `ld` (>= K) when transposed.
  int64_t ld = 0;
  bool transposed = false;
};

// Packs the K x N block `src` for `desc` (its dtype, K, N, ldb, b_layout,
// and for s8s8 its ISA) into `dst`, which must hold PackedBBytes(desc)
// bytes. s8s8 for the VNNI kernels is stored as u8 B + 128 (sign bits
// flipped; PackedBIsBiased in brgemm_desc.h); AMX s8s8 and every other
// type are copied unchanged. Padding (columns N..ldb-1 and K rows past K in
// the last group, and the gaps between f32 column panels) is written as
// zero values (0x80 bytes when biased), so kernels may rely on it.
// ValidateBLayout's error for a bad descriptor; InvalidArgument for a bad
// ld or a null buffer.
absl::Status PackB(const BrgemmDesc& desc, const BSource& src, void* dst);

// Inverse of PackB for the N x K valid region, for tests and debugging:
// writes B row-major K x N with leading dimension `ld` into `dst` (s8s8
// biased B un-biased again).
absl::Status UnpackB(const BrgemmDesc& desc, const void* packed, int64_t ld,
                     void* dst);

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_PACK_H_
