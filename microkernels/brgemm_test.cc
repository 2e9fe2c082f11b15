// Every kernel variant against the reference over the tail grid:
// M in {1 .. tile rows + 1}, N in {1, 15, 16, 17, 31, 48, 64, 65, 80, 94},
// K in {1, 2, 3, 4, 5, 16, 63, 257}, batch in {1, 3}, beta 0 and 1, pointer
// lists and strided batches, guard pages and guard bytes around every buffer
// (brgemm_test_util.h). AMX plans run on the tile simulator everywhere and
// natively where the CPU has AMX.
#include <xmmintrin.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "microkernels/amx.h"
#include "microkernels/amx_emulator.h"
#include "microkernels/amx_plan.h"
#include "microkernels/brgemm_blocking.h"
#include "microkernels/brgemm_kernel.h"
#include "microkernels/brgemm_test_util.h"
#include "microkernels/pack.h"
#include "microkernels/reference_brgemm.h"
#include "support/cpu_features.h"

namespace hgc {
namespace microkernels {
namespace {

enum class Path { kJit, kEmulatedAmx };

struct Variant {
  const char* name;
  Isa isa;
  BrgemmDataType dtype;
  Path path;
};

const Variant kVariants[] = {
    {"f32", Isa::kAvx512Core, BrgemmDataType::kF32, Path::kJit},
    {"f32_avx2", Isa::kAvx2, BrgemmDataType::kF32, Path::kJit},
    {"bf16_avx2", Isa::kAvx2, BrgemmDataType::kBf16, Path::kJit},
    {"u8s8_avx2", Isa::kAvx2, BrgemmDataType::kU8S8, Path::kJit},
    {"s8s8_avx2", Isa::kAvx2, BrgemmDataType::kS8S8, Path::kJit},
    {"bf16_widen_fma", Isa::kAvx512Core, BrgemmDataType::kBf16, Path::kJit},
    {"bf16_vdpbf16ps", Isa::kAvx512CoreBf16, BrgemmDataType::kBf16, Path::kJit},
    {"u8s8_vnni", Isa::kAvx512CoreVnni, BrgemmDataType::kU8S8, Path::kJit},
    {"s8s8_vnni", Isa::kAvx512CoreVnni, BrgemmDataType::kS8S8, Path::kJit},
    {"bf16_amx", Isa::kAvx512CoreAmx, BrgemmDataType::kBf16, Path::kJit},
    {"u8s8_amx", Isa::kAvx512CoreAmx, BrgemmDataType::kU8S8, Path::kJit},
    {"s8s8_amx", Isa::kAvx512CoreAmx, BrgemmDataType::kS8S8, Path::kJit},
    {"bf16_amx_emulated", Isa::kAvx512CoreAmx, BrgemmDataType::kBf16,
     Path::kEmulatedAmx},
    {"u8s8_amx_emulated", Isa::kAvx512CoreAmx, BrgemmDataType::kU8S8,
     Path::kEmulatedAmx},
    {"s8s8_amx_emulated", Isa::kAvx512CoreAmx, BrgemmDataType::kS8S8,
     Path::kEmulatedAmx},
};

// 80 and 94: tile rows of 3 vectors (48 + 32 columns, 48 + 46 with a
// masked last vector).
const int64_t kNs[] = {1, 15, 16, 17, 31, 48, 64, 65, 80, 94};
const int64_t kKs[] = {1, 2, 3, 4, 5, 16, 63, 257};

// Generates `desc`'s kernel and checks it against the reference on
// batches of 0, 1 and 3 blocks (seeds from `seed` on).
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

// The M values for one N: every height up to one past the register tile
// (for AMX: one tile of 16 rows, plus the 32-row block edges).
std::vector<int64_t> MValues(const Variant& v, int64_t n) {
  int64_t tile_rows;
  if (v.isa == Isa::kAvx512CoreAmx) {
    tile_rows = 16;
  } else {
    BrgemmDesc probe = MakeBrgemmDesc(v.isa, v.dtype, 1000, n, 16);
    tile_rows = ChooseBlocking(probe).rows;
  }
  std::vector<int64_t> ms;
  for (int64_t m = 1; m <= tile_rows + 1; ++m) ms.push_back(m);
  if (v.isa == Isa::kAvx512CoreAmx) {
    ms.push_back(32);
    ms.push_back(33);
  } else {
    ms.push_back(2 * tile_rows + 1);  // a loop over two full tiles + tail
  }
  return ms;
}

class BrgemmGridTest
    : public ::testing::TestWithParam<std::tuple<int, int64_t>> {};

TEST_P(BrgemmGridTest, MatchesReferenceOverTails) {
  const Variant& v = kVariants[std::get<0>(GetParam())];
  const int64_t n = std::get<1>(GetParam());
  if (v.path == Path::kJit && !IsaAvailable(v.isa)) {
    if (v.isa == Isa::kAvx512CoreAmx) {
      GTEST_SKIP() << "SKIPPED: AMX not available on this CPU ("
                   << DescribeCpu() << ")";
    }
    GTEST_SKIP() << "SKIPPED: " << IsaName(v.isa)
                 << " not available on this CPU (" << DescribeCpu() << ")";
  }
  int cases = 0;
  uint32_t seed = 1;
  for (int64_t k : kKs) {
    for (int64_t m : MValues(v, n)) {
      for (bool accumulate : {false, true}) {
        for (BatchKind kind : {BatchKind::kPointerList, BatchKind::kStrided}) {
          BrgemmDesc desc = MakeBrgemmDesc(v.isa, v.dtype, m, n, k);
          // Gaps after K in A and after N in C (checked by the harness).
          desc.lda = k + 3;
          desc.ldc = n + 2;
          desc.accumulate = accumulate;
          desc.batch_kind = kind;
          SetTestStrides(&desc);
          std::shared_ptr<BrgemmKernel> kernel;
          AmxPlan plan;
          if (v.path == Path::kJit) {
            auto created = BrgemmKernel::Create(desc);
            ASSERT_TRUE(created.ok()) << created.status();
            kernel = std::move(*created);
          } else {
            plan = BuildAmxPlan(desc);
          }
          for (int64_t batch : {1, 3}) {
            auto make_runner = [&](const BrgemmDesc&) -> BrgemmRunner {
              if (kernel) {
                return [&](const BrgemmCallArgs& args) { kernel->fn()(&args); };
              }
              return [&](const BrgemmCallArgs& args) {
                ASSERT_TRUE(EmulateAmxPlan(plan, args).ok());
              };
            };
            ASSERT_TRUE(CheckBrgemmCase(desc, batch, seed++, make_runner))
                << v.name;
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

// s8s8 on VNNI sums A's rows before the N loop, 16 rows per reduction,
// into a stack frame when M <= 1024, and per register tile above that
// (brgemm_avx512_int8.h): both sides of the limit, several 16-row groups
// plus a partial one, several N blocks, K tails inside and past a 64-byte
// chunk, and a zero batch.
TEST(BrgemmS8s8Test, RowSumsUpfrontAndPerTile) {
  if (!IsaAvailable(Isa::kAvx512CoreVnni)) {
    GTEST_SKIP() << "SKIPPED: avx512_core_vnni not available";
  }
  struct Shape {
    int64_t m, n, k;
  };
  uint32_t seed = 100;
  for (const Shape& s : {Shape{16, 64, 64}, Shape{47, 130, 67},
                         Shape{1024, 17, 3}, Shape{1025, 17, 130},
                         Shape{1031, 33, 67}}) {
    for (BatchKind kind : {BatchKind::kPointerList, BatchKind::kStrided}) {
      BrgemmDesc desc = MakeBrgemmDesc(Isa::kAvx512CoreVnni,
                                       BrgemmDataType::kS8S8, s.m, s.n, s.k);
      desc.lda = s.k + 5;
      desc.ldc = s.n + 1;
      desc.accumulate = kind == BatchKind::kStrided;
      desc.batch_kind = kind;
      SetTestStrides(&desc);
      ASSERT_TRUE(CheckKernelOverBatches(desc, seed));
    }
  }
}

// The f32 post-op tests run on each f32 kernel family: AVX-512 and AVX2.
class BrgemmF32Test : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!IsaAvailable(GetParam())) {
      GTEST_SKIP() << "SKIPPED: " << IsaName(GetParam())
                   << " not available on this CPU (" << DescribeCpu() << ")";
    }
  }
  // An f32 strided-batch descriptor for the post-op tests: gaps after A's
  // rows and C's (lda = K + 3, ldc = N + 2), the test's batch strides.
  BrgemmDesc GappedF32Desc(int64_t m, int64_t n, int64_t k) const;
};

BrgemmDesc BrgemmF32Test::GappedF32Desc(int64_t m, int64_t n, int64_t k) const {
  BrgemmDesc desc = MakeBrgemmDesc(GetParam(), BrgemmDataType::kF32, m, n, k);
  desc.lda = k + 3;
  desc.ldc = n + 2;
  desc.batch_kind = BatchKind::kStrided;
  SetTestStrides(&desc);
  return desc;
}

// f32 post-ops (bias row, relu) on every tail: M up to two register tiles
// plus one, N tails (the bias row ends at a guard page, so an unmasked
// read past N faults), K with and without a K loop (the B prefetch runs
// only in the loop), beta 0 and 1, and a zero batch (C = 0 or C, then the
// post-ops). The inputs give C values of both signs, so relu clamps some.
TEST_P(BrgemmF32Test, BiasAndReluOverTails) {
  uint32_t seed = 500;
  int cases = 0;
  for (int64_t n : kNs) {
    for (int64_t k : {int64_t{1}, int64_t{5}, int64_t{63}, int64_t{257}}) {
      for (int64_t m : {int64_t{1}, int64_t{5}, int64_t{6}, int64_t{7},
                        int64_t{13}}) {
        for (int post = 1; post < 4; ++post) {
          BrgemmDesc desc = GappedF32Desc(m, n, k);
          desc.bias = post & 1;
          desc.relu = post & 2;
          desc.accumulate = (m + n + post) % 2 == 0;
          ASSERT_TRUE(CheckKernelOverBatches(desc, seed));
          cases += 3;
        }
      }
    }
  }
  EXPECT_EQ(cases, static_cast<int>(std::size(kNs)) * 4 * 5 * 3 * 3);
}

// One row (a GEMV, a decoder step's P·V): on AVX2 B feeds the FMAs from
// memory and the tiles are up to 8 vectors wide. Every N tail around one
// and two such tiles (the tail's masked B and bias loads end at guard
// pages), K with and without a K loop, each post-op combination, beta 0
// and 1, and a zero batch.
TEST_P(BrgemmF32Test, OneRowOverTails) {
  uint32_t seed = 700;
  int cases = 0;
  const int64_t kOneRowNs[] = {1, 7, 9, 56, 63, 64, 65, 71, 120, 128, 130};
  for (int64_t n : kOneRowNs) {
    for (int64_t k : {int64_t{1}, int64_t{5}, int64_t{63}, int64_t{257}}) {
      for (int post = 0; post < 8; ++post) {
        BrgemmDesc desc = GappedF32Desc(1, n, k);
        desc.scale = post & 1;
        desc.bias = post & 2;
        desc.relu = post & 4;
        desc.accumulate = (n + k + post) % 2 == 0;
        ASSERT_TRUE(CheckKernelOverBatches(desc, seed));
        cases += 3;
      }
    }
  }
  EXPECT_EQ(cases, static_cast<int>(std::size(kOneRowNs)) * 4 * 8 * 3);
}

// divide_rows on every tail: each row times the reciprocal of its divisor
// (inexact ones included, so that x * (1 / d) and x / d differ), read
// exactly M divisors, through M blocks and N blocks, beta 0 and 1.
TEST_P(BrgemmF32Test, DivideRowsOverTails) {
  uint32_t seed = 900;
  int cases = 0;
  for (int64_t n : kNs) {
    for (int64_t k : {int64_t{1}, int64_t{63}, int64_t{257}}) {
      for (int64_t m : {int64_t{1}, int64_t{5}, int64_t{6}, int64_t{7},
                        int64_t{13}, int64_t{64}}) {
        BrgemmDesc desc = GappedF32Desc(m, n, k);
        desc.divide_rows = true;
        desc.accumulate = (m + n) % 2 == 0;
        ASSERT_TRUE(CheckKernelOverBatches(desc, seed));
        cases += 3;
      }
    }
  }
  EXPECT_EQ(cases, static_cast<int>(std::size(kNs)) * 3 * 6 * 3);
}

// scale, bias and row_max together (attention's scores: times the scale,
// plus the mask row, their row maxima folded in) and each alone, on every
// tail: M blocks and N blocks, the masked N tail (whose lanes past N keep
// their maxima), beta 0 and 1.
TEST_P(BrgemmF32Test, ScaleBiasRowMaxOverTails) {
  uint32_t seed = 1300;
  int cases = 0;
  for (int64_t n : kNs) {
    for (int64_t k : {int64_t{1}, int64_t{64}, int64_t{97}}) {
      for (int64_t m :
           {int64_t{1}, int64_t{5}, int64_t{6}, int64_t{13}, int64_t{64}}) {
        for (int post = 1; post < 8; ++post) {
          BrgemmDesc desc = GappedF32Desc(m, n, k);
          desc.scale = post & 1;
          desc.bias = post & 2;
          desc.row_max = post & 4;
          desc.relu = post == 7 && m % 2;
          desc.accumulate = (m + n + post) % 2 == 0;
          ASSERT_TRUE(CheckKernelOverBatches(desc, seed));
          cases += 3;
        }
      }
    }
  }
  EXPECT_EQ(cases, static_cast<int>(std::size(kNs)) * 3 * 5 * 7 * 3);
}

// B in column panels as wide as the kernel's tiles (attention's V packed
// per head), gaps between them, on every tail: one panel (N within a tile)
// or several with a partial last one, K with and without a K loop, M tails,
// beta 0 and 1, with no post-op, the score post-ops (the bias row indexed
// by C's column, not B's offset) and divide_rows. Odd M take one panel
// wider than N instead, which holds every column as plain rows, however
// many tiles wide N is.
TEST_P(BrgemmF32Test, BPanelsOverTails) {
  uint32_t seed = 2100;
  int cases = 0;
  for (int64_t n : kNs) {
    for (int64_t k : {int64_t{1}, int64_t{63}, int64_t{257}}) {
      for (int64_t m : {int64_t{1}, int64_t{6}, int64_t{13}, int64_t{64}}) {
        for (int post = 0; post < 3; ++post) {
          BrgemmDesc desc = GappedF32Desc(m, n, k);
          desc.ldb = m % 2 ? n + 5 : BlockColumns(desc);
          desc.b_panel_bytes = (k * desc.ldb + 16) * 4;
          desc.scale = desc.bias = desc.row_max = post == 1;
          desc.divide_rows = post == 2;
          desc.accumulate = (m + n + k + post) % 2 == 0;
          SetTestStrides(&desc);
          ASSERT_TRUE(CheckKernelOverBatches(desc, seed));
          cases += 3;
        }
      }
    }
  }
  EXPECT_EQ(cases, static_cast<int>(std::size(kNs)) * 3 * 4 * 3 * 3);
}

// Transposed B (attention's K as keys x head, for one query row): N tails
// around the 8-column groups, K with and without the 8-wide loop and its
// masked tail, B rows with and without a gap after K, beta 0 and 1, each
// post-op mix, strided and pointer-list batches of 0, 1 and 3 blocks. Only
// the AVX2 dot-product kernel takes it; elsewhere it is Unimplemented.
TEST_P(BrgemmF32Test, TransposedBOverTails) {
  auto transposed = [&](int64_t m, int64_t n, int64_t k) {
    BrgemmDesc desc = MakeBrgemmDesc(GetParam(), BrgemmDataType::kF32, m, n, k);
    desc.b_layout = BLayout::kTransposed;
    desc.ldb = k + n % 3;
    desc.lda = k + 3;
    desc.ldc = n + 2;
    return desc;
  };
  if (GetParam() != Isa::kAvx2) {
    EXPECT_EQ(BrgemmKernel::Create(transposed(1, 16, 16)).status().code(),
              absl::StatusCode::kUnimplemented);
    return;
  }
  uint32_t seed = 2500;
  int cases = 0;
  const int64_t ns[] = {1, 7, 8, 9, 16, 23, 77};
  const int64_t ks[] = {1, 5, 8, 13, 64, 131};
  for (int64_t n : ns) {
    for (int64_t k : ks) {
      for (int post = 0; post < 4; ++post) {
        for (bool list : {false, true}) {
          BrgemmDesc desc = transposed(1, n, k);
          desc.scale = post & 1;
          desc.bias = post & 2;
          desc.accumulate = (n + k + post) % 2 == 0;
          if (!list) {
            desc.batch_kind = BatchKind::kStrided;
            SetTestStrides(&desc);
          }
          ASSERT_TRUE(CheckKernelOverBatches(desc, seed));
          cases += 3;
        }
      }
    }
  }
  EXPECT_EQ(cases, static_cast<int>(std::size(ns) * std::size(ks)) * 4 * 2 * 3);
  // More rows of A, and the other post-ops, have no transposed kernel.
  BrgemmDesc two_rows = transposed(2, 16, 16);
  BrgemmDesc relu = transposed(1, 16, 16);
  relu.relu = true;
  for (const BrgemmDesc& desc : {two_rows, relu}) {
    EXPECT_EQ(BrgemmKernel::Create(desc).status().code(),
              absl::StatusCode::kUnimplemented)
        << desc.ToString();
  }
}

// Panels narrower or wider than the tiles would split a tile's columns.
TEST_P(BrgemmF32Test, PanelsNotAsWideAsTheTilesAreRejected) {
  BrgemmDesc desc = GappedF32Desc(6, 64, 8);
  desc.ldb = BlockColumns(desc) / 2;
  desc.b_panel_bytes = 8 * desc.ldb * 4;
  absl::StatusOr<std::unique_ptr<BrgemmKernel>> kernel =
      BrgemmKernel::Create(desc);
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(kernel.status().message().find("panels"), std::string::npos);
}

// A prefetch region (attention's next head) leaves every result as it was:
// with each post-op set that shares the kernel's stack slots and scratch
// registers, regions smaller and larger than the kernel's K-loop trips,
// and K loops of no, two and many trips, over the M and N tails.
TEST_P(BrgemmF32Test, RegionLeavesResultsOverTails) {
  uint32_t seed = 1700;
  int cases = 0;
  for (int64_t n : {int64_t{16}, int64_t{33}, int64_t{128}}) {
    for (int64_t k : {int64_t{7}, int64_t{16}, int64_t{96}}) {
      for (int64_t m : {int64_t{1}, int64_t{7}, int64_t{64}}) {
        for (int post = 0; post < 3; ++post) {
          for (int64_t lines : {int64_t{1}, int64_t{37}, int64_t{4096}}) {
            BrgemmDesc desc = GappedF32Desc(m, n, k);
            desc.divide_rows = post == 1;
            desc.scale = desc.bias = desc.row_max = post == 2;
            desc.prefetch_lines = lines;
            desc.accumulate = (m + n + lines) % 2 == 0;
            ASSERT_TRUE(CheckKernelOverBatches(desc, seed));
            cases += 3;
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 3 * 3 * 3 * 3 * 3 * 3);
}

// relu keeps NaN (as the interpreter's relu does) and clamps the rest.
TEST_P(BrgemmF32Test, ReluKeepsNaN) {
  BrgemmDesc desc = MakeBrgemmDesc(GetParam(), BrgemmDataType::kF32, 3, 20, 2);
  desc.bias = true;
  desc.relu = true;
  auto kernel = BrgemmKernel::Create(desc);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Rows: NaN, x = 1, x = -1; B = 1 everywhere, bias = 0.5.
  std::vector<float> a = {nan, 0.0f, 0.5f, 0.5f, -0.5f, -0.5f};
  std::vector<float> b(2 * 20, 1.0f), bias(20, 0.5f), c(3 * 20, 7.0f);
  BrgemmCallArgs args{};
  const void* a_list[] = {a.data()};
  const void* b_list[] = {b.data()};
  args.a = a_list;
  args.b = b_list;
  args.c = c.data();
  args.batch = 1;
  args.bias = bias.data();
  (*kernel)->fn()(&args);
  for (int n = 0; n < 20; ++n) {
    EXPECT_TRUE(std::isnan(c[n])) << n;
    EXPECT_EQ(c[20 + n], 1.5f) << n;
    EXPECT_EQ(c[40 + n], 0.0f) << n;
    EXPECT_FALSE(std::signbit(c[40 + n])) << n;
  }
}

// A wide-C f32 call prefetches the B region after its first list entry;
// with an empty (null) list it must not read the list.
TEST_P(BrgemmF32Test, EmptyPointerListIsNotRead) {
  BrgemmDesc desc = MakeBrgemmDesc(GetParam(), BrgemmDataType::kF32, 6, 16, 64);
  desc.ldc = 512;  // wide enough for the B prefetch
  auto kernel = BrgemmKernel::Create(desc);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<float> c(6 * 512, 7.0f);
  (*kernel)->Execute(nullptr, nullptr, 0, c.data());
  for (int64_t m = 0; m < 6; ++m) {
    for (int64_t n = 0; n < 512; ++n) {
      EXPECT_EQ(c[m * 512 + n], n < 16 ? 0.0f : 7.0f) << m << "," << n;
    }
  }
}

TEST(BrgemmPostOpsTest, OnlyF32Kernels) {
  BrgemmDesc desc = MakeBrgemmDesc(Isa::kAvx512CoreBf16, BrgemmDataType::kBf16,
                                   16, 16, 16);
  desc.relu = true;
  EXPECT_EQ(ValidateBrgemmDesc(desc).code(), absl::StatusCode::kUnimplemented);
  desc.relu = false;
  desc.prefetch_lines = 4;
  EXPECT_EQ(ValidateBrgemmDesc(desc).code(), absl::StatusCode::kUnimplemented);
  desc = MakeBrgemmDesc(Isa::kAvx512Core, BrgemmDataType::kF32, 16, 16, 16);
  desc.bias = true;
  EXPECT_TRUE(ValidateBrgemmDesc(desc).ok());
  EXPECT_NE(desc.ToString().find(":bias"), std::string::npos);
  desc.prefetch_lines = 12;
  EXPECT_NE(desc.ToString().find(":bias:pf12"), std::string::npos);
  desc.prefetch_lines = -1;
  EXPECT_EQ(ValidateBrgemmDesc(desc).code(),
            absl::StatusCode::kInvalidArgument);
  desc.prefetch_lines = 0;
  // divide_rows stands alone.
  desc.divide_rows = true;
  EXPECT_EQ(ValidateBrgemmDesc(desc).code(), absl::StatusCode::kUnimplemented);
  desc.bias = false;
  EXPECT_TRUE(ValidateBrgemmDesc(desc).ok());
  EXPECT_NE(desc.ToString().find(":divrows"), std::string::npos);
  desc.row_max = true;
  EXPECT_EQ(ValidateBrgemmDesc(desc).code(), absl::StatusCode::kUnimplemented);
  desc.divide_rows = false;
  desc.scale = true;
  EXPECT_TRUE(ValidateBrgemmDesc(desc).ok());
  EXPECT_NE(desc.ToString().find(":scale:rowmax"), std::string::npos);
  desc =
      MakeBrgemmDesc(Isa::kAvx512CoreBf16, BrgemmDataType::kBf16, 16, 16, 16);
  desc.row_max = true;
  EXPECT_EQ(ValidateBrgemmDesc(desc).code(), absl::StatusCode::kUnimplemented);
}

// Every bf16 kernel reads bf16 denormal operands as zero (hgc's bf16
// matmul semantics: vdpbf16ps and AMX do so in hardware, the widening
// kernel under MXCSR.DAZ, which it restores before returning), and so
// does the reference it is checked against: inf * 1e-40 is NaN, and
// 2^126 * 1e-40 adds nothing.
TEST(BrgemmBf16Test, DenormalOperandsReadAsZero) {
  constexpr int64_t kM = 3, kN = 17, kK = 2;
  const uint16_t inf = 0x7F80, one = 0x3F80, big = 0x7E80;  // 2^126
  const uint16_t denormal = 0x0001;                         // 2^-133
  // A rows: (inf, 1), (2^126, 1), (1, -denormal); B rows: (denormal, 1)
  // in every column, then (1, 2) where the row index is odd.
  const uint16_t a[kM * kK] = {
      inf, one, big, one, one, static_cast<uint16_t>(0x8000 | denormal)};
  std::vector<uint16_t> b(kK * kN);
  for (int64_t n = 0; n < kN; ++n) {
    b[n] = denormal;
    b[kN + n] = one;
  }
  for (const Variant& v : kVariants) {
    if (v.dtype != BrgemmDataType::kBf16) continue;
    if (v.path == Path::kJit && !IsaAvailable(v.isa)) continue;
    BrgemmDesc desc = MakeBrgemmDesc(v.isa, BrgemmDataType::kBf16, kM, kN, kK);
    std::vector<uint8_t> packed(PackedBBytes(desc));
    ASSERT_TRUE(PackB(desc, BSource{b.data(), kN, false}, packed.data()).ok());
    std::vector<float> c(kM * kN, 7.0f), expected(kM * kN, 7.0f);
    const void* a_list[] = {a};
    const void* b_list[] = {packed.data()};
    ASSERT_TRUE(ReferenceBrgemm(desc, a_list, b_list, 1, expected.data()).ok());
    const unsigned mxcsr = _mm_getcsr();
    if (v.path == Path::kJit) {
      auto kernel = BrgemmKernel::Create(desc);
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      (*kernel)->Execute(a_list, b_list, 1, c.data());
    } else {
      BrgemmCallArgs args{};
      args.a = a_list;
      args.b = b_list;
      args.c = c.data();
      args.batch = 1;
      ASSERT_TRUE(EmulateAmxPlan(BuildAmxPlan(desc), args).ok());
    }
    EXPECT_EQ(_mm_getcsr(), mxcsr) << v.name;
    for (int64_t n = 0; n < kN; ++n) {
      EXPECT_TRUE(std::isnan(c[n])) << v.name << " " << n;
      EXPECT_EQ(c[kN + n], 1.0f) << v.name << " " << n;
      EXPECT_EQ(c[2 * kN + n], 0.0f) << v.name << " " << n;
      EXPECT_TRUE(std::isnan(expected[n])) << n;
      EXPECT_EQ(expected[kN + n], 1.0f) << n;
      EXPECT_EQ(expected[2 * kN + n], 0.0f) << n;
    }
  }
}

std::string GridName(
    const ::testing::TestParamInfo<std::tuple<int, int64_t>>& info) {
  return std::string(kVariants[std::get<0>(info.param)].name) + "_N" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(F32Kernels, BrgemmF32Test,
                         ::testing::Values(Isa::kAvx512Core, Isa::kAvx2),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

INSTANTIATE_TEST_SUITE_P(
    AllVariants, BrgemmGridTest,
    ::testing::Combine(
        ::testing::Range(0, static_cast<int>(sizeof(kVariants) /
                                             sizeof(kVariants[0]))),
        ::testing::ValuesIn(kNs)),
    GridName);

}  // namespace
}  // namespace microkernels
}  // namespace hgc
