// The f32 kernels' post-ops and forms against the reference, on each f32
// kernel family (AVX-512 and AVX2), over the tails: bias and relu, one row,
// divide_rows, scale / bias / row_max, B panels, transposed B, prefetch
// regions, relu on NaN and empty pointer lists; and which kernels take
// post-ops at all. Guard pages and guard bytes around every buffer
// (brgemm_test_util.h).
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "microkernels/brgemm_blocking.h"
#include "microkernels/brgemm_kernel.h"
#include "microkernels/brgemm_test_util.h"
#include "microkernels/pack.h"
#include "microkernels/reference_brgemm.h"
#include "support/cpu_features.h"

namespace hgc {
namespace microkernels {
namespace {

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

INSTANTIATE_TEST_SUITE_P(F32Kernels, BrgemmF32Test,
                         ::testing::Values(Isa::kAvx512Core, Isa::kAvx2),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace microkernels
}  // namespace hgc
