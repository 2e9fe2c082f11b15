#include "microkernels/gemm_driver.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "microkernels/amx.h"
#include "microkernels/kernel_cache.h"
#include "microkernels/pack.h"
#include "support/status_macros.h"

namespace hgc {
namespace microkernels {
namespace {

constexpr int64_t kAlign = 64;

int64_t RoundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Defaults, measured on Sapphire Rapids (bench/brgemm_bench.cc --blocking):
//  - AVX-512: a B chunk of kb x 64 columns = 32 KB, so it stays in the 48 KB
//    L1 while the kernel sweeps the register tiles of a row block; 192 rows
//    of A (768 KB of f32 at K = 1024) stay in L2 across panels.
//  - AMX: long K runs per call (the C tiles stay in registers across the
//    whole chunk): 1024 elements for every data type, so that a GEMM with
//    K <= 1024 stores each C block exactly once. bf16 used 512 (1024
//    bytes, as int8) before the kernels prefetched C (brgemm_amx.cc); with
//    the prefetch, bf16 1024^3 measured hgc/oneDNN 1.06-1.16 at kb 1024
//    against 1.03-1.04 at 512 and 0.95 at 256 (C is 4 MB there, and each
//    extra chunk is one more load and store of every C tile). Same panel
//    width and row block: mb 128 / 256 and nb 32 were equal within noise.
//  - A packing: the copy is a pass over A per GEMM, which measured as a net
//    loss wherever A's rows are already 64-byte aligned, including the
//    4 KB-strided f32 rows at K = 1024 (equal within noise) and AMX at
//    256^3 (-15%: the tiles outrun the copy). So it is on only for AMX with
//    unaligned rows and for s8s8 on VNNI with N, K >= 1024, where it selects
//    the compensation path (hgc/oneDNN at 1024^3: 1.22-1.28x with it,
//    1.16-1.18x with the s8s8 kernel; at 256^3 and 512^3 the s8s8 kernel
//    wins, 1.22-1.28x against 1.12-1.17x).
GemmBlocking DefaultBlocking(Isa isa, BrgemmDataType dtype, int64_t n,
                             int64_t k) {
  GemmBlocking b;
  const int64_t es = InputElementSize(dtype);
  b.nb = 64;
  b.mb = 192;
  if (isa == Isa::kAvx512CoreAmx) {
    b.kb = 1024;
    b.pack_a = (k * es) % kAlign != 0;
  } else {
    b.kb = 128 * 4 / es;
    // s8s8 on VNNI: the packing path (u8s8 kernel on a sign-flipped copy
    // of A plus compensation) only where both N and K are long; see the
    // header. A family that reads B unbiased (AVX2) takes s8 A as it is.
    b.pack_a = dtype == BrgemmDataType::kS8S8 && S8s8ReadsBiasedB(isa) &&
               n >= 1024 && k >= 1024;
  }
  return b;
}

// C[rows x cols] (leading dimension ldc) += comp[cols], s32.
__attribute__((target("avx512f"))) void AddCompensation(
    int32_t* c, int64_t ldc, int64_t rows, int64_t cols, const int32_t* comp) {
  for (int64_t i = 0; i < rows; ++i) {
    int32_t* row = c + i * ldc;
    int64_t j = 0;
    for (; j + 16 <= cols; j += 16) {
      const __m512i sum = _mm512_add_epi32(_mm512_loadu_si512(row + j),
                                           _mm512_loadu_si512(comp + j));
      _mm512_storeu_si512(row + j, sum);
    }
    for (; j < cols; ++j) row[j] += comp[j];
  }
}

// dst[i] = src[i] ^ 0x80 for `bytes` bytes: s8 -> u8 plus 128.
__attribute__((target("avx512f"))) void FlipSignBits(const uint8_t* src,
                                                     uint8_t* dst,
                                                     int64_t bytes) {
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  int64_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    _mm512_storeu_si512(dst + i,
                        _mm512_xor_si512(_mm512_loadu_si512(src + i), bias));
  }
  for (; i < bytes; ++i) dst[i] = src[i] ^ 0x80;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BrgemmGemm>> BrgemmGemm::Create(
    Isa isa, BrgemmDataType dtype, int64_t m, int64_t n, int64_t k,
    GemmBlocking blocking) {
  if (m < 1 || n < 1 || k < 1) {
    return absl::InvalidArgumentError("gemm sizes must be >= 1");
  }
  const GemmBlocking def = DefaultBlocking(isa, dtype, n, k);
  if (blocking.nb <= 0) blocking.nb = def.nb;
  if (blocking.kb <= 0) blocking.kb = def.kb;
  if (blocking.mb <= 0) blocking.mb = def.mb;
  if (blocking.pack_a < 0) blocking.pack_a = def.pack_a;
  std::unique_ptr<BrgemmGemm> g(new BrgemmGemm());
  g->dtype_ = dtype;
  g->m_ = m;
  g->n_ = n;
  g->k_ = k;
  g->blocking_ = blocking;
  g->amx_ = isa == Isa::kAvx512CoreAmx;
  g->s8s8_comp_ = dtype == BrgemmDataType::kS8S8 && S8s8ReadsBiasedB(isa) &&
                  blocking.pack_a;
  // The kernels' data type: s8s8 on VNNI with A packing runs the u8s8
  // kernel.
  const BrgemmDataType kdt = g->s8s8_comp_ ? BrgemmDataType::kU8S8 : dtype;
  const int64_t es = InputElementSize(dtype);
  const int64_t mb = std::min(blocking.mb, m);
  int64_t lda = k;
  if (blocking.pack_a) {
    // An odd number of cache lines per row: consecutive rows fall in
    // consecutive L1 sets.
    int64_t lines = RoundUp(k * es, kAlign) / kAlign;
    if (lines % 2 == 0) ++lines;
    g->lda_pack_ = lines * kAlign / es;
    lda = g->lda_pack_;
    g->scratch_bytes_ = mb * g->lda_pack_ * es;
  }
  // Packed B offsets depend on (panel, chunk) only; every row block reuses
  // them.
  const int64_t chunks = (k + blocking.kb - 1) / blocking.kb;
  std::vector<int64_t> offsets;
  for (int64_t n0 = 0; n0 < n; n0 += blocking.nb) {
    for (int64_t k0 = 0; k0 < k; k0 += blocking.kb) {
      offsets.push_back(g->packed_bytes_);
      BrgemmDesc d = MakeBrgemmDesc(isa, kdt, 1, std::min(blocking.nb, n - n0),
                                    std::min(blocking.kb, k - k0));
      g->packed_bytes_ += RoundUp(PackedBBytes(d), kAlign);
    }
  }
  if (g->s8s8_comp_) {
    g->comp_offset_ = g->packed_bytes_;
    g->packed_bytes_ += RoundUp(n * 4, kAlign);
  }
  const int64_t row_blocks[2] = {m / mb, m % mb};
  for (int kind = 0; kind < 2; ++kind) {
    const int64_t rows = kind == 0 ? mb : m % mb;
    if (row_blocks[kind] == 0) continue;
    for (int64_t n0 = 0; n0 < n; n0 += blocking.nb) {
      for (int64_t k0 = 0; k0 < k; k0 += blocking.kb) {
        BrgemmDesc d =
            MakeBrgemmDesc(isa, kdt, rows, std::min(blocking.nb, n - n0),
                           std::min(blocking.kb, k - k0));
        d.lda = lda;
        d.ldc = n;
        d.accumulate = k0 > 0;
        HGC_ASSIGN_OR_RETURN(std::shared_ptr<const BrgemmKernel> kernel,
                             BrgemmKernelCache::Global().Get(d));
        const size_t idx = (n0 / blocking.nb) * chunks + k0 / blocking.kb;
        g->calls_[kind].push_back({n0, k0, offsets[idx], kernel.get(), d,
                                   k0 + blocking.kb >= k});
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
  if (reinterpret_cast<uintptr_t>(packed) % kAlign != 0) {
    return absl::InvalidArgumentError("packed B must be 64-byte aligned");
  }
  const int64_t es = InputElementSize(dtype_);
  const std::vector<Call>& calls = calls_[calls_[0].empty() ? 1 : 0];
  for (const Call& call : calls) {
    const BSource src{
        static_cast<const char*>(b) + (call.k0 * ldb + call.n0) * es, ldb,
        false};
    HGC_RETURN_IF_ERROR(microkernels::PackB(
        call.desc, src, static_cast<char*>(packed) + call.packed_offset));
  }
  if (s8s8_comp_) {
    int32_t* comp =
        reinterpret_cast<int32_t*>(static_cast<char*>(packed) + comp_offset_);
    const int8_t* bs = static_cast<const int8_t*>(b);
    for (int64_t j = 0; j < n_; ++j) {
      int32_t sum = 0;
      for (int64_t kk = 0; kk < k_; ++kk) sum += bs[kk * ldb + j];
      comp[j] = -128 * sum;
    }
  }
  return absl::OkStatus();
}

void BrgemmGemm::PackA(const void* a, int64_t m0, int64_t rows,
                       void* dst) const {
  const int64_t es = InputElementSize(dtype_);
  const uint8_t* src = static_cast<const uint8_t*>(a) + m0 * k_ * es;
  uint8_t* out = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < rows; ++i) {
    if (s8s8_comp_) {
      FlipSignBits(src + i * k_, out + i * lda_pack_, k_);
    } else {
      std::memcpy(out + i * lda_pack_ * es, src + i * k_ * es, k_ * es);
    }
  }
}

void BrgemmGemm::Run(const void* a, const void* packed_b, void* c,
                     void* scratch) const {
  const int64_t es = InputElementSize(dtype_);
  const int64_t mb = std::min(blocking_.mb, m_);
  const char* pb = static_cast<const char*>(packed_b);
  const int32_t* comp = reinterpret_cast<const int32_t*>(pb + comp_offset_);
  for (int64_t m0 = 0; m0 < m_; m0 += mb) {
    const int64_t rows = std::min(mb, m_ - m0);
    const std::vector<Call>& calls = calls_[rows == mb ? 0 : 1];
    const char* a_blk = static_cast<const char*>(a) + m0 * k_ * es;
    if (blocking_.pack_a) {
      PackA(a, m0, rows, scratch);
      a_blk = static_cast<const char*>(scratch);
    }
    char* c_blk = static_cast<char*>(c) + m0 * n_ * 4;
    for (const Call& call : calls) {
      const void* a_ptr = a_blk + call.k0 * es;
      const void* b_ptr = pb + call.packed_offset;
      char* c_ptr = c_blk + call.n0 * 4;
      call.kernel->Execute(&a_ptr, &b_ptr, 1, c_ptr);
      if (s8s8_comp_ && call.last_chunk) {
        AddCompensation(reinterpret_cast<int32_t*>(c_ptr), n_, rows,
                        call.desc.n, comp + call.n0);
      }
    }
  }
  // The kernels configured the tiles once for all their calls; leave none
  // of it to the caller.
  if (amx_) ReleaseTiles();
}

void BrgemmGemm::Run(const void* a, const void* packed_b, void* c) const {
  struct Scratch {
    ~Scratch() { std::free(data); }
    void* data = nullptr;
    int64_t bytes = 0;
  };
  thread_local Scratch scratch;
  if (scratch.bytes < scratch_bytes_) {
    std::free(scratch.data);
    scratch.bytes = RoundUp(scratch_bytes_, kAlign);
    scratch.data = std::aligned_alloc(kAlign, scratch.bytes);
  }
  Run(a, packed_b, c, scratch.data);
}

std::string BrgemmGemm::ToString() const {
  const std::vector<Call>& calls = calls_[calls_[0].empty() ? 1 : 0];
  return absl::StrCat("gemm:M", m_, "N", n_, "K", k_, ":mb", blocking_.mb,
                      ":nb", blocking_.nb, ":kb", blocking_.kb,
                      blocking_.pack_a ? ":packa" : "",
                      s8s8_comp_ ? ":s8s8comp" : "", " over ",
                      calls.empty() ? "" : calls[0].desc.ToString());
}

}  // namespace microkernels
}  // namespace hgc
