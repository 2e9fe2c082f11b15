// BrgemmGemm: a single-threaded C[M x N] = A[M x K] * B[K x N] built from
// BRGEMM kernels, the way the compiler's generated loops will use them.
//
// Cache blocking (GotoBLAS/BLIS order, roles fitted to the kernels, whose
// broadcast operand is A and whose vector operand is packed B):
//
//   for each row block of `mb` rows              (A block: L2)
//     [copy the A block into scratch]            (see "A packing")
//     for each column panel `nb` wide
//       for each K chunk of `kb`                 (B chunk: L1, reused by
//         kernel(rows, panel, chunk)              every register tile of
//                                                 the row block)
//       [s8s8 with A packing on VNNI: C panel += compensation]
//
// B is packed once (outside any timed loop, as a constant weight would be)
// into (panel, chunk) blocks, each the packed B of its own descriptor,
// 64-byte aligned. The first chunk overwrites C (beta 0), later ones
// accumulate.
//
// A packing: the row block is copied into a 64-byte aligned scratch whose
// row stride is an odd number of cache lines, so that tile and broadcast
// loads never straddle lines and the rows of a register tile or AMX tile
// never pile up in a few L1 sets (a row-major A whose row is a multiple of
// 4 KB puts every row in the same set). The copy costs one pass over A per
// GEMM, which measured as a net loss where A's rows are already aligned, so
// by default it is on only for AMX when K * element size is not a multiple
// of 64 (A assumed 64-byte aligned) and for s8s8 on VNNI when N and K are
// both >= 1024 (see below).
//
// s8 * s8 on VNNI, two ways:
//  - Without A packing, the s8s8 kernel runs directly on B packed by PackB
//    (stored as u8 B + 128; brgemm_avx512_int8.h). Each call sums its A rows
//    for the correction, a few percent of the call, paid again per panel.
//  - With A packing, the copy flips each byte's sign bit (A + 128, a valid
//    u8), the u8s8 kernel runs, and PackB stores comp[n] = -128 * sum_k
//    B[k][n] after the panels; each finished C panel gets comp added, an
//    exact correction:
//      sum_k (A + 128) * B + comp = sum_k A * B.
//    The copy is paid once per row block and the add once per panel, so
//    this wins where N and K are long and loses on small GEMMs.
//
// Used by the benchmark against oneDNN and as a worked example for codegen.
#ifndef HGC_MICROKERNELS_GEMM_DRIVER_H_
#define HGC_MICROKERNELS_GEMM_DRIVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "microkernels/brgemm_desc.h"
#include "microkernels/brgemm_kernel.h"

namespace hgc {
namespace microkernels {

// Blocking of a BrgemmGemm; zeros (and pack_a < 0) pick the defaults for the
// ISA, data type and sizes.
struct GemmBlocking {
  int64_t nb = 0;  // panel width (columns)
  int64_t kb = 0;  // K chunk
  int64_t mb = 0;  // rows per row block (A block kept in L2)
  int pack_a = -1;  // 1: copy A blocks into scratch, 0: read A in place
};

class BrgemmGemm {
 public:
  // Kernels come from the global cache. Errors as BrgemmKernel::Create;
  // InvalidArgument for sizes < 1.
  static absl::StatusOr<std::unique_ptr<BrgemmGemm>> Create(
      Isa isa, BrgemmDataType dtype, int64_t m, int64_t n, int64_t k,
      GemmBlocking blocking = GemmBlocking());

  // Bytes of packed B (panels, then s8s8 compensation when used).
  int64_t packed_b_bytes() const { return packed_bytes_; }
  // Bytes of scratch Run needs (0 when A is read in place).
  int64_t scratch_bytes() const { return scratch_bytes_; }
  // Packs row-major B (K x N, leading dimension ldb) into `packed`
  // (packed_b_bytes() bytes, 64-byte aligned: InvalidArgument otherwise).
  absl::Status PackB(const void* b, int64_t ldb, void* packed) const;
  // C = A * B with A row-major (lda = K) and C row-major (ldc = N): f32 for
  // f32 and bf16, s32 for int8. `packed_b` from PackB; `scratch` holds
  // scratch_bytes() bytes, 64-byte aligned, and is clobbered. Calls on
  // distinct C and scratch may run concurrently. AMX kernels configure the
  // tiles on the first call and keep them for the rest (amx.h); Run
  // releases them before returning.
  void Run(const void* a, const void* packed_b, void* c, void* scratch) const;
  // As above with a scratch buffer owned by the calling thread (grown on
  // first use, never freed).
  void Run(const void* a, const void* packed_b, void* c) const;

  // "gemm:M256N256K256:mb192:nb64:kb128:packa over brgemm:..."
  std::string ToString() const;

 private:
  // One kernel call of a row block: panel n0, chunk k0.
  struct Call {
    int64_t n0, k0;
    int64_t packed_offset;
    const BrgemmKernel* kernel;  // owned by the cache
    BrgemmDesc desc;
    bool last_chunk;             // the panel is complete after this call
  };
  BrgemmGemm() = default;
  // Copies rows [m0, m0 + rows) of A into `dst` (lda_pack_ elements),
  // flipping sign bits for s8s8 with compensation.
  void PackA(const void* a, int64_t m0, int64_t rows, void* dst) const;

  BrgemmDataType dtype_;  // the GEMM's data type
  int64_t m_ = 0, n_ = 0, k_ = 0;
  GemmBlocking blocking_;
  bool amx_ = false;         // AMX kernels: release the tiles after Run
  bool s8s8_comp_ = false;   // s8s8 run as u8s8 plus compensation (VNNI
                             // with A packing)
  int64_t lda_pack_ = 0;     // row stride of packed A (elements)
  int64_t comp_offset_ = 0;  // byte offset of comp[N] in packed B
  int64_t packed_bytes_ = 0;
  int64_t scratch_bytes_ = 0;
  // calls_[0] for full row blocks, calls_[1] for the last, shorter one.
  std::vector<Call> calls_[2];
  std::vector<std::shared_ptr<const BrgemmKernel>> kernels_;
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_GEMM_DRIVER_H_
