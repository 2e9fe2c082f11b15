// BrgemmGemm: a single-threaded C[M x N] = A[M x K] * B[K x N] built from
// BRGEMM kernels, the way the compiler's generated loops will use them.
//
// B is packed once (outside any timed loop, as a constant weight would be)
// into column panels `nb` wide, each cut into K chunks of `kb`; every
// (panel, chunk) block is a packed B block of its own descriptor. Running
// walks row blocks of `mb` (so the A block stays in L2), then panels, then
// chunks, calling one kernel per (rows, panel, chunk): the chunk of B
// (nb x kb) stays in L1 while the kernel sweeps the rows, and the first
// chunk overwrites C (beta 0) while later ones accumulate.
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

// Blocking of a BrgemmGemm; zeros pick the defaults for the ISA and data
// type.
struct GemmBlocking {
  int64_t nb = 0;  // panel width (columns)
  int64_t kb = 0;  // K chunk
  int64_t mb = 0;  // rows per kernel call (A block kept in L2)
};

class BrgemmGemm {
 public:
  // Kernels come from the global cache. Errors as BrgemmKernel::Create.
  static absl::StatusOr<std::unique_ptr<BrgemmGemm>> Create(
      Isa isa, BrgemmDataType dtype, int64_t m, int64_t n, int64_t k,
      GemmBlocking blocking = GemmBlocking());

  // Bytes of packed B.
  int64_t packed_b_bytes() const { return packed_bytes_; }
  // Packs row-major B (K x N, leading dimension ldb) into `packed`
  // (packed_b_bytes() bytes).
  absl::Status PackB(const void* b, int64_t ldb, void* packed) const;
  // C = A * B with A row-major (lda = K) and C row-major (ldc = N): f32 for
  // f32 and bf16, s32 for int8.
  void Run(const void* a, const void* packed_b, void* c) const;

  // "gemm:M256N256K256:nb64:kb128 over brgemm:..."
  std::string ToString() const;

 private:
  struct Block {
    int64_t m0, n0, k0;
    int64_t packed_offset;
    const BrgemmKernel* kernel;  // owned by the cache
    BrgemmDesc desc;
  };
  BrgemmGemm() = default;

  BrgemmDataType dtype_;
  int64_t m_ = 0, n_ = 0, k_ = 0;
  GemmBlocking blocking_;
  int64_t packed_bytes_ = 0;
  std::vector<Block> blocks_;  // in execution order
  std::vector<std::shared_ptr<const BrgemmKernel>> kernels_;
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_GEMM_DRIVER_H_
