#include "microkernels/brgemm_test_util.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "microkernels/brgemm_kernel.h"
#include "microkernels/pack.h"
#include "microkernels/reference_brgemm.h"
#include "support/check.h"
#include "support/float16.h"

namespace hgc {
namespace microkernels {
namespace {

constexpr unsigned char kGuardByte = 0xa5;

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

// A value the kernels must never read: NaN for floating types, a large
// byte for int8 (it would change an exact integer result).
void FillPoison(BrgemmDataType dt, void* p, int64_t count) {
  const int64_t es = InputElementSize(dt);
  for (int64_t i = 0; i < count; ++i) {
    char* e = static_cast<char*>(p) + i * es;
    if (dt == BrgemmDataType::kF32) {
      const float nan = std::nanf("");
      std::memcpy(e, &nan, 4);
    } else if (dt == BrgemmDataType::kBf16) {
      const uint16_t nan = 0x7fc1;
      std::memcpy(e, &nan, 2);
    } else {
      *e = 0x7b;
    }
  }
}

// Small exact values: multiples of 1/8 in [-2, 2] for floats, full range
// for int8 (u8 and s8 per the type).
void FillRandom(BrgemmDataType dt, bool is_a, void* p, int64_t count,
                std::mt19937* rng) {
  std::uniform_int_distribution<int> eighths(-16, 16);
  std::uniform_int_distribution<int> bytes(0, 255);
  for (int64_t i = 0; i < count; ++i) {
    switch (dt) {
      case BrgemmDataType::kF32:
        static_cast<float*>(p)[i] = eighths(*rng) / 8.0f;
        break;
      case BrgemmDataType::kBf16:
        static_cast<uint16_t*>(p)[i] = FloatToBf16(eighths(*rng) / 8.0f);
        break;
      case BrgemmDataType::kU8S8:
      case BrgemmDataType::kS8S8:
        static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(bytes(*rng));
        break;
    }
  }
  (void)is_a;
}

int64_t ABlockBytes(const BrgemmDesc& d) {
  // The last row stops at K: nothing of the lda gap follows it.
  return ((d.m - 1) * d.lda + d.k) * InputElementSize(d.dtype);
}

}  // namespace

GuardedBuffer::GuardedBuffer(size_t bytes) : bytes_(bytes) {
  const size_t page = PageSize();
  const size_t body = (bytes + kGuardBytes + page - 1) / page * page;
  map_bytes_ = body + page;
  void* m = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  HGC_CHECK(m != MAP_FAILED);
  map_ = static_cast<char*>(m);
  HGC_CHECK(mprotect(map_ + body, page, PROT_NONE) == 0);
  data_ = map_ + body - bytes;
  std::memset(data_ - kGuardBytes, kGuardByte, kGuardBytes);
}

GuardedBuffer::~GuardedBuffer() { munmap(map_, map_bytes_); }

bool GuardedBuffer::GuardIntact() const {
  for (size_t i = 0; i < kGuardBytes; ++i) {
    if (static_cast<unsigned char>(data_[-1 - static_cast<ptrdiff_t>(i)]) !=
        kGuardByte) {
      return false;
    }
  }
  return true;
}

void SetTestStrides(BrgemmDesc* d) {
  if (d->batch_kind != BatchKind::kStrided) return;
  // A's stride 0 beside a B stride already set: the test shares one A among
  // the batch, and it stays so.
  const bool shared_a = d->stride_a_bytes == 0 && d->stride_b_bytes != 0;
  // Strides that are not multiples of 64 also exercise unaligned blocks.
  d->stride_a_bytes =
      shared_a ? 0 : d->m * d->lda * InputElementSize(d->dtype);
  d->stride_b_bytes = PackedBBytes(*d);
}

::testing::AssertionResult CheckBrgemmCase(
    BrgemmDesc desc, int64_t batch, uint32_t seed,
    const std::function<BrgemmRunner(const BrgemmDesc&)>& make_runner) {
  SetTestStrides(&desc);
  std::mt19937 rng(seed);
  const int64_t es = InputElementSize(desc.dtype);
  const bool strided = desc.batch_kind == BatchKind::kStrided;
  const int64_t a_bytes = ABlockBytes(desc);
  const int64_t b_bytes = PackedBBytes(desc);
  // Strided batches live in one buffer each; lists get one buffer per block.
  std::vector<std::unique_ptr<GuardedBuffer>> bufs;
  std::vector<const void*> a_ptrs(batch), b_ptrs(batch);
  std::unique_ptr<GuardedBuffer> a_all, b_all;
  if (strided && batch > 0) {
    a_all = std::make_unique<GuardedBuffer>((batch - 1) * desc.stride_a_bytes + a_bytes);
    b_all = std::make_unique<GuardedBuffer>((batch - 1) * desc.stride_b_bytes + b_bytes);
    // Everything between blocks is poison too.
    FillPoison(desc.dtype, a_all->data(), a_all->size() / es);
  }
  std::vector<char> plain_b(desc.k * desc.n * es);
  for (int64_t i = 0; i < batch; ++i) {
    char* a;
    char* b;
    if (strided) {
      a = static_cast<char*>(a_all->data()) + i * desc.stride_a_bytes;
      b = static_cast<char*>(b_all->data()) + i * desc.stride_b_bytes;
    } else {
      bufs.push_back(std::make_unique<GuardedBuffer>(a_bytes));
      a = static_cast<char*>(bufs.back()->data());
      bufs.push_back(std::make_unique<GuardedBuffer>(b_bytes));
      b = static_cast<char*>(bufs.back()->data());
    }
    FillPoison(desc.dtype, a, a_bytes / es);
    for (int64_t m = 0; m < desc.m; ++m) {
      FillRandom(desc.dtype, true, a + m * desc.lda * es, desc.k, &rng);
    }
    FillRandom(desc.dtype, false, plain_b.data(), desc.k * desc.n, &rng);
    absl::Status packed = PackB(desc, {plain_b.data(), desc.n, false}, b);
    if (!packed.ok()) return ::testing::AssertionFailure() << packed;
    a_ptrs[i] = a;
    b_ptrs[i] = b;
  }
  // C: known values everywhere (the ldc gap must keep them).
  const int64_t c_elems = (desc.m - 1) * desc.ldc + desc.n;
  GuardedBuffer c(c_elems * 4);
  std::vector<char> expected(c_elems * 4);
  for (int64_t i = 0; i < c_elems; ++i) {
    if (desc.dtype == BrgemmDataType::kF32 || desc.dtype == BrgemmDataType::kBf16) {
      static_cast<float*>(c.data())[i] = static_cast<float>(i % 7) - 3.0f;
    } else {
      static_cast<int32_t*>(c.data())[i] = static_cast<int32_t>(i % 1001) - 500;
    }
  }
  std::memcpy(expected.data(), c.data(), c_elems * 4);
  // The bias row ends at the guard page: a read past N faults.
  std::unique_ptr<GuardedBuffer> bias;
  if (desc.bias) {
    bias = std::make_unique<GuardedBuffer>(desc.n * 4);
    for (int64_t i = 0; i < desc.n; ++i) {
      static_cast<float*>(bias->data())[i] = static_cast<float>(i % 9) * 0.5f - 2.0f;
    }
  }
  const float* bias_row =
      bias ? static_cast<const float*>(bias->data()) : nullptr;
  // Divisors whose reciprocals are inexact (3, 7, ...) and exact (2, 4),
  // ending at the guard page: a read past M faults.
  std::unique_ptr<GuardedBuffer> divisors;
  if (desc.divide_rows) {
    divisors = std::make_unique<GuardedBuffer>(desc.m * 4);
    for (int64_t i = 0; i < desc.m; ++i) {
      static_cast<float*>(divisors->data())[i] =
          static_cast<float>(i % 6 + 2) * (i % 2 ? 1.0f : -0.5f);
    }
  }
  const float* divisor_row =
      divisors ? static_cast<const float*>(divisors->data()) : nullptr;
  // A scale that rounds (0.3) and row maxima that start at -inf in lanes
  // of even rows and at 1 in odd ones (so that some lanes keep theirs),
  // ending at the guard page: a write past M rows faults.
  const float scale = 0.3f;
  std::unique_ptr<GuardedBuffer> row_max;
  std::vector<float> expected_max;
  if (desc.row_max) {
    row_max = std::make_unique<GuardedBuffer>(desc.m * 64);
    for (int64_t i = 0; i < desc.m * 16; ++i) {
      static_cast<float*>(row_max->data())[i] =
          (i / 16) % 2 ? 1.0f : -std::numeric_limits<float>::infinity();
    }
    expected_max.assign(static_cast<float*>(row_max->data()),
                        static_cast<float*>(row_max->data()) + desc.m * 16);
  }
  float* max_rows = row_max ? static_cast<float*>(row_max->data()) : nullptr;
  absl::Status ref = ReferenceBrgemm(
      desc, a_ptrs.data(), b_ptrs.data(), batch, expected.data(), bias_row,
      divisor_row, desc.scale ? &scale : nullptr,
      desc.row_max ? expected_max.data() : nullptr);
  if (!ref.ok()) return ::testing::AssertionFailure() << ref;

  BrgemmRunner run = make_runner(desc);
  if (!run) return ::testing::AssertionFailure() << "no runner";
  BrgemmCallArgs args{};
  args.a = strided ? (batch > 0 ? a_ptrs[0] : nullptr)
                   : static_cast<const void*>(a_ptrs.data());
  args.b = strided ? (batch > 0 ? b_ptrs[0] : nullptr)
                   : static_cast<const void*>(b_ptrs.data());
  args.c = c.data();
  args.batch = batch;
  args.bias = bias_row;
  args.row_divisors = divisor_row;
  args.scale = desc.scale ? &scale : nullptr;
  args.row_max = max_rows;
  // The region a prefetching kernel reads ahead (prefetches never fault,
  // but a real region keeps the test to what callers pass).
  std::unique_ptr<GuardedBuffer> ahead;
  if (desc.prefetch_lines > 0) {
    ahead = std::make_unique<GuardedBuffer>(desc.prefetch_lines * 64);
    args.prefetch = ahead->data();
  }
  run(args);
  if (desc.row_max &&
      std::memcmp(max_rows, expected_max.data(), desc.m * 64) != 0) {
    for (int64_t i = 0; i < desc.m * 16; ++i) {
      if (std::memcmp(&max_rows[i], &expected_max[i], 4) != 0) {
        return ::testing::AssertionFailure()
               << desc.ToString() << " batch " << batch << ": row max lane "
               << i % 16 << " of row " << i / 16 << " is " << max_rows[i]
               << ", expected " << expected_max[i];
      }
    }
  }

  if (!c.GuardIntact()) {
    return ::testing::AssertionFailure() << "C front guard overwritten";
  }
  for (const auto& buf : bufs) {
    if (!buf->GuardIntact()) return ::testing::AssertionFailure() << "guard";
  }
  if (std::memcmp(c.data(), expected.data(), c_elems * 4) != 0) {
    for (int64_t i = 0; i < c_elems; ++i) {
      const int64_t m = i / desc.ldc, n = i % desc.ldc;
      uint32_t got, want;
      std::memcpy(&got, static_cast<char*>(c.data()) + 4 * i, 4);
      std::memcpy(&want, expected.data() + 4 * i, 4);
      if (got != want) {
        float gf, wf;
        std::memcpy(&gf, &got, 4);
        std::memcpy(&wf, &want, 4);
        return ::testing::AssertionFailure()
               << desc.ToString() << " batch " << batch << ": C[" << m << "]["
               << n << "] " << (n >= desc.n ? "(ldc gap) " : "") << "is "
               << (desc.dtype == BrgemmDataType::kU8S8 ||
                           desc.dtype == BrgemmDataType::kS8S8
                       ? absl::StrCat(static_cast<int32_t>(got))
                       : absl::StrCat(gf))
               << ", expected "
               << (desc.dtype == BrgemmDataType::kU8S8 ||
                           desc.dtype == BrgemmDataType::kS8S8
                       ? absl::StrCat(static_cast<int32_t>(want))
                       : absl::StrCat(wf));
      }
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult CheckKernelOverBatches(const BrgemmDesc& desc,
                                                  uint32_t& seed) {
  auto kernel = BrgemmKernel::Create(desc);
  if (!kernel.ok()) return ::testing::AssertionFailure() << kernel.status();
  for (int64_t batch : {0, 1, 3}) {
    auto make_runner = [&](const BrgemmDesc&) -> BrgemmRunner {
      return [&](const BrgemmCallArgs& args) { (*kernel)->fn()(&args); };
    };
    ::testing::AssertionResult result =
        CheckBrgemmCase(desc, batch, seed++, make_runner);
    if (!result) {
      return result << " (" << desc.ToString() << ", batch " << batch << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace microkernels
}  // namespace hgc
