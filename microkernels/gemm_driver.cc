#include "microkernels/gemm_driver.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "microkernels/kernel_cache.h"
#include "microkernels/pack.h"
#include "support/status_macros.h"

namespace hgc {
namespace microkernels {
namespace {

// Defaults: a B chunk of about 32 KB, so it stays in the 48 KB L1 while the
// kernel sweeps all rows of A; AMX reads B through tile loads that prefer
// longer runs of K, so its chunk is L2-sized.
GemmBlocking DefaultBlocking(Isa isa, BrgemmDataType dtype) {
  GemmBlocking b;
  b.nb = 64;
  const int64_t es = InputElementSize(dtype);
  b.kb = isa == Isa::kAvx512CoreAmx ? 1024 / es : 128 * 4 / es;
  // 192 rows of a 1024-long K row block: 768 KB of f32 A, within L2 with
  // room for the B panel and C.
  b.mb = 192;
  return b;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BrgemmGemm>> BrgemmGemm::Create(
    Isa isa, BrgemmDataType dtype, int64_t m, int64_t n, int64_t k,
    GemmBlocking blocking) {
  if (m < 1 || n < 1 || k < 1) {
    return absl::InvalidArgumentError("gemm sizes must be >= 1");
  }
  const GemmBlocking def = DefaultBlocking(isa, dtype);
  if (blocking.nb <= 0) blocking.nb = def.nb;
  if (blocking.kb <= 0) blocking.kb = def.kb;
  if (blocking.mb <= 0) blocking.mb = def.mb;
  std::unique_ptr<BrgemmGemm> g(new BrgemmGemm());
  g->dtype_ = dtype;
  g->m_ = m;
  g->n_ = n;
  g->k_ = k;
  g->blocking_ = blocking;
  // Packed B offsets depend on (panel, chunk) only; every row block reuses
  // them.
  std::vector<int64_t> offsets;
  for (int64_t n0 = 0; n0 < n; n0 += blocking.nb) {
    for (int64_t k0 = 0; k0 < k; k0 += blocking.kb) {
      offsets.push_back(g->packed_bytes_);
      BrgemmDesc d = MakeBrgemmDesc(isa, dtype, 1, std::min(blocking.nb, n - n0),
                                    std::min(blocking.kb, k - k0));
      g->packed_bytes_ += (PackedBBytes(d) + 63) / 64 * 64;
    }
  }
  for (int64_t m0 = 0; m0 < m; m0 += blocking.mb) {
    size_t next = 0;
    for (int64_t n0 = 0; n0 < n; n0 += blocking.nb) {
      for (int64_t k0 = 0; k0 < k; k0 += blocking.kb) {
        BrgemmDesc d = MakeBrgemmDesc(
            isa, dtype, std::min(blocking.mb, m - m0),
            std::min(blocking.nb, n - n0), std::min(blocking.kb, k - k0));
        d.lda = k;
        d.ldc = n;
        d.accumulate = k0 > 0;
        HGC_ASSIGN_OR_RETURN(std::shared_ptr<const BrgemmKernel> kernel,
                             BrgemmKernelCache::Global().Get(d));
        g->blocks_.push_back({m0, n0, k0, offsets[next++], kernel.get(), d});
        if (std::find(g->kernels_.begin(), g->kernels_.end(), kernel) ==
            g->kernels_.end()) {
          g->kernels_.push_back(std::move(kernel));
        }
      }
    }
  }
  return g;
}

absl::Status BrgemmGemm::PackB(const void* b, int64_t ldb,
                               void* packed) const {
  const int64_t es = InputElementSize(dtype_);
  for (const Block& blk : blocks_) {
    if (blk.m0 != 0) break;  // later row blocks share the packed panels
    const BSource src{static_cast<const char*>(b) + (blk.k0 * ldb + blk.n0) * es,
                      ldb, false};
    HGC_RETURN_IF_ERROR(microkernels::PackB(
        blk.desc, src, static_cast<char*>(packed) + blk.packed_offset));
  }
  return absl::OkStatus();
}

void BrgemmGemm::Run(const void* a, const void* packed_b, void* c) const {
  const int64_t es = InputElementSize(dtype_);
  for (const Block& blk : blocks_) {
    const void* a_ptr =
        static_cast<const char*>(a) + (blk.m0 * k_ + blk.k0) * es;
    const void* b_ptr = static_cast<const char*>(packed_b) + blk.packed_offset;
    blk.kernel->Execute(&a_ptr, &b_ptr, 1,
                        static_cast<char*>(c) + (blk.m0 * n_ + blk.n0) * 4);
  }
}

std::string BrgemmGemm::ToString() const {
  return absl::StrCat("gemm:M", m_, "N", n_, "K", k_, ":mb", blocking_.mb,
                      ":nb", blocking_.nb,
                      ":kb", blocking_.kb, " over ",
                      blocks_.empty() ? "" : blocks_[0].desc.ToString());
}

}  // namespace microkernels
}  // namespace hgc
