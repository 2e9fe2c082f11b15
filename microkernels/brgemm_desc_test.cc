#include "microkernels/brgemm_desc.h"

#include "absl/hash/hash_testing.h"
#include "gtest/gtest.h"
#include "microkernels/brgemm_blocking.h"

namespace hgc {
namespace microkernels {
namespace {

TEST(BrgemmDescTest, PrintsEveryField) {
  BrgemmDesc d = MakeBrgemmDesc(Isa::kAvx512CoreBf16, BrgemmDataType::kBf16,
                                32, 64, 512);
  d.accumulate = true;
  EXPECT_EQ(d.ToString(),
            "brgemm:avx512_core_bf16:bf16bf16f32:M32N64K512:lda512:ldb64:"
            "ldc64:beta1:list:vnni2");
  d.batch_kind = BatchKind::kStrided;
  d.stride_a_bytes = 32768;
  d.stride_b_bytes = 65536;
  d.accumulate = false;
  EXPECT_EQ(d.ToString(),
            "brgemm:avx512_core_bf16:bf16bf16f32:M32N64K512:lda512:ldb64:"
            "ldc64:beta0:stride(32768,65536):vnni2");
}

TEST(BrgemmDescTest, EqualityAndHashCoverEveryField) {
  const BrgemmDesc base =
      MakeBrgemmDesc(Isa::kAvx512CoreVnni, BrgemmDataType::kU8S8, 6, 64, 256);
  std::vector<BrgemmDesc> variants(13, base);
  variants[1].m = 7;
  variants[2].n = 48;
  variants[3].k = 255;
  variants[4].lda = 300;
  variants[5].ldb = 80;
  variants[6].ldc = 70;
  variants[7].accumulate = true;
  variants[8].batch_kind = BatchKind::kStrided;
  variants[9].dtype = BrgemmDataType::kS8S8;
  variants[10].isa = Isa::kAvx512CoreAmx;
  variants[11].batch_kind = BatchKind::kStrided;
  variants[11].stride_a_bytes = 64;
  variants[12].b_panel_bytes = 1024;
  for (size_t i = 1; i < variants.size(); ++i) {
    EXPECT_NE(variants[i], base) << i;
  }
  EXPECT_EQ(base, variants[0]);
  EXPECT_TRUE(absl::VerifyTypeImplementsAbslHashCorrectly(variants));
}

TEST(BrgemmDescTest, LayoutsFollowTheDataType) {
  EXPECT_EQ(RequiredBLayout(BrgemmDataType::kF32), BLayout::kPlain);
  EXPECT_EQ(RequiredBLayout(BrgemmDataType::kBf16), BLayout::kVnni2);
  EXPECT_EQ(RequiredBLayout(BrgemmDataType::kS8S8), BLayout::kVnni4);
  EXPECT_EQ(VnniGranularity(BrgemmDataType::kBf16), 2);
  EXPECT_EQ(VnniGranularity(BrgemmDataType::kU8S8), 4);
  // K = 5 int8 rows pad to two groups of four.
  BrgemmDesc d = MakeBrgemmDesc(Isa::kAvx512CoreVnni, BrgemmDataType::kU8S8,
                                1, 17, 5);
  d.ldb = 32;
  EXPECT_EQ(PackedBBytes(d), 2 * 32 * 4);
}

TEST(BrgemmDescTest, ValidationNamesTheProblem) {
  BrgemmDesc d = MakeBrgemmDesc(Isa::kAvx512Core, BrgemmDataType::kF32, 4, 4, 4);
  EXPECT_TRUE(ValidateBrgemmDesc(d).ok());
  BrgemmDesc bad = d;
  bad.k = 0;
  EXPECT_EQ(ValidateBrgemmDesc(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = d;
  bad.lda = 3;
  EXPECT_NE(ValidateBrgemmDesc(bad).message().find("leading"), std::string::npos);
  bad = d;
  bad.b_layout = BLayout::kVnni2;
  EXPECT_EQ(ValidateBrgemmDesc(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = d;
  bad.stride_a_bytes = 16;  // strides on a pointer list
  EXPECT_EQ(ValidateBrgemmDesc(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = d;
  bad.isa = Isa::kAvx512CoreAmx;
  EXPECT_EQ(ValidateBrgemmDesc(bad).code(), absl::StatusCode::kUnimplemented);
  bad = MakeBrgemmDesc(Isa::kAvx512Core, BrgemmDataType::kU8S8, 4, 4, 4);
  EXPECT_NE(ValidateBrgemmDesc(bad).message().find("vnni"), std::string::npos);
}

// B in column panels: narrower than N, each K x ldb, none overlapping the
// next; f32 only.
TEST(BrgemmDescTest, PanelsHoldTheirColumns) {
  BrgemmDesc d = MakeBrgemmDesc(Isa::kAvx2, BrgemmDataType::kF32, 6, 40, 3);
  d.ldb = 16;
  EXPECT_FALSE(ValidateBrgemmDesc(d).ok());  // ldb < N without panels
  d.b_panel_bytes = 3 * 16 * 4 + 64;
  EXPECT_TRUE(ValidateBrgemmDesc(d).ok());
  EXPECT_EQ(d.ToString(),
            "brgemm:avx2:f32f32f32:M6N40K3:lda3:ldb16:ldc40:beta0:list:plain:"
            "panels256");
  // Columns 0-15, 16-31 and 32-39: two whole panels, then K rows of the
  // third one's 16 columns.
  EXPECT_EQ(PackedBBytes(d), 2 * 256 + 3 * 16 * 4);
  EXPECT_EQ(PackedBIndex(d, 2, 5), 2 * 16 + 5);
  EXPECT_EQ(PackedBIndex(d, 1, 21), 64 + 16 + 5);
  EXPECT_EQ(PackedBIndex(d, 0, 39), 128 + 7);
  BrgemmDesc bad = d;
  bad.b_panel_bytes = 3 * 16 * 4 - 4;  // overlapping panels
  EXPECT_EQ(ValidateBrgemmDesc(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = d;
  bad.b_panel_bytes = -64;
  EXPECT_EQ(ValidateBrgemmDesc(bad).code(), absl::StatusCode::kInvalidArgument);
  bad = MakeBrgemmDesc(Isa::kAvx2, BrgemmDataType::kBf16, 6, 40, 4);
  bad.ldb = 16;
  bad.b_panel_bytes = 4096;
  EXPECT_EQ(ValidateBrgemmDesc(bad).code(), absl::StatusCode::kUnimplemented);
}

// The avx512_core blocking of an M x N x 64 kernel.
BrgemmBlocking AvxBlocking(BrgemmDataType dt, int64_t m, int64_t n) {
  return ChooseBlocking(MakeBrgemmDesc(Isa::kAvx512Core, dt, m, n, 64));
}

TEST(BrgemmBlockingTest, FillsTheRegisterFileAndStaysInIt) {
  for (BrgemmDataType dt : {BrgemmDataType::kF32, BrgemmDataType::kBf16,
                            BrgemmDataType::kU8S8, BrgemmDataType::kS8S8}) {
    for (Isa isa : {Isa::kAvx512Core, Isa::kAvx512CoreBf16}) {
      for (int64_t n : {1, 16, 17, 33, 64, 1000}) {
        BrgemmDesc d = MakeBrgemmDesc(isa, dt, 1000, n, 64);
        const BrgemmBlocking b = ChooseBlocking(d);
        EXPECT_LE(b.rows * b.nvecs + b.reserved_regs, 32) << d.ToString();
        EXPECT_GE(b.rows, 1);
        EXPECT_EQ(b.nvecs, std::min<int64_t>(4, (n + 15) / 16));
      }
    }
  }
  // N above 64 and not a multiple of it: 3 vectors when that takes no
  // more column tiles (80 = 48 + 32, 96 = 48 + 48), else 4 (112 = 64 + 48).
  for (auto [n, nvecs] : {std::pair<int64_t, int>{80, 3},
                          {96, 3},
                          {112, 4},
                          {128, 4},
                          {144, 3},
                          {160, 4}}) {
    EXPECT_EQ(AvxBlocking(BrgemmDataType::kF32, 64, n).nvecs, nvecs) << n;
  }
  // Tiles of even height: 64 rows as 8 x 8 (at most 9 rows of 3 vectors),
  // 13 rows as 5 + 4 + 4 (at most 6 rows of 4 vectors).
  EXPECT_EQ(AvxBlocking(BrgemmDataType::kF32, 64, 96).rows, 8);
  EXPECT_EQ(AvxBlocking(BrgemmDataType::kF32, 13, 64).rows, 5);
  // The documented shapes: 6 x 4 for f32, 5 x 4 for widened bf16.
  EXPECT_EQ(AvxBlocking(BrgemmDataType::kF32, 100, 64).ToString(),
            "rows6x4v:ku8");
  EXPECT_EQ(AvxBlocking(BrgemmDataType::kBf16, 100, 64).rows, 5);
  // Never taller than M.
  EXPECT_EQ(AvxBlocking(BrgemmDataType::kF32, 2, 64).rows, 2);
}

// AVX2: 16 YMM registers, at most 2 vectors a row (1 for int8, whose
// vectors take two accumulators each), the 6 x 16 f32 tile.
TEST(BrgemmBlockingTest, Avx2FillsSixteenRegisters) {
  for (BrgemmDataType dt : {BrgemmDataType::kF32, BrgemmDataType::kBf16,
                            BrgemmDataType::kU8S8, BrgemmDataType::kS8S8}) {
    const bool int8 =
        dt == BrgemmDataType::kU8S8 || dt == BrgemmDataType::kS8S8;
    for (int64_t n : {1, 8, 9, 16, 17, 64, 1000}) {
      for (int post = 0; post < 4; ++post) {
        BrgemmDesc d = MakeBrgemmDesc(Isa::kAvx2, dt, 1000, n, 64);
        d.scale = dt == BrgemmDataType::kF32 && (post & 1);
        d.relu = dt == BrgemmDataType::kF32 && (post & 2);
        const BrgemmBlocking b = ChooseBlocking(d);
        const int accs = b.nvecs * (int8 ? 2 : 1);
        EXPECT_LE(b.rows * accs + b.reserved_regs, 16) << d.ToString();
        EXPECT_GE(b.rows, 1);
        EXPECT_EQ(b.nvecs, int8 || n <= 8 ? 1 : 2) << d.ToString();
      }
    }
  }
  const BrgemmDesc f32 =
      MakeBrgemmDesc(Isa::kAvx2, BrgemmDataType::kF32, 100, 64, 64);
  EXPECT_EQ(ChooseBlocking(f32).ToString(), "rows6x2v:ku8");
}

// AVX2 f32 with 1 to 3 rows: tiles as wide as the registers allow beside
// the rows' accumulators and the post-ops' constants, up to 6 vectors (8
// for one row reading B from memory, unless it divides rows) and never
// wider than N; row maxima and B panels keep 16-column blocks.
TEST(BrgemmBlockingTest, Avx2FewRowsTakeWideTiles) {
  struct Case {
    int64_t m, n;
    bool scale, divide_rows, row_max;
    int nvecs;
  };
  const Case kCases[] = {
      {1, 128, false, false, false, 8},  {1, 128, true, false, false, 8},
      {1, 127, true, true, false, 8},    {1, 128, false, true, false, 6},
      {1, 20, false, false, false, 3},   {1, 8, false, false, false, 1},
      {2, 128, true, false, false, 4},   {2, 127, true, true, false, 4},
      {3, 1000, false, false, false, 3}, {3, 1000, true, true, false, 3},
      {4, 1000, false, false, false, 2}, {1, 128, true, false, true, 2},
  };
  for (const Case& c : kCases) {
    BrgemmDesc d =
        MakeBrgemmDesc(Isa::kAvx2, BrgemmDataType::kF32, c.m, c.n, 352);
    d.scale = c.scale;
    d.bias = c.scale;
    d.divide_rows = c.divide_rows && !c.scale;
    d.relu = c.divide_rows && c.scale;
    d.row_max = c.row_max;
    const BrgemmBlocking b = ChooseBlocking(d);
    EXPECT_EQ(b.nvecs, c.nvecs) << d.ToString();
    EXPECT_EQ(b.rows, c.m) << d.ToString();
    EXPECT_LE(b.rows * b.nvecs + b.reserved_regs, 16) << d.ToString();
  }
  // B panels fix the tiles' width; bf16 and int8 keep their tiles.
  BrgemmDesc panels =
      MakeBrgemmDesc(Isa::kAvx2, BrgemmDataType::kF32, 1, 128, 352);
  panels.ldb = 16;
  panels.b_panel_bytes = 352 * 16 * 4;
  EXPECT_EQ(ChooseBlocking(panels).nvecs, 2);
  panels.b_panel_bytes = 0;
  EXPECT_EQ(BlockColumns(panels), 64);
  EXPECT_EQ(PanelColumns(panels), 16);
  for (auto [dt, nvecs] :
       {std::pair<BrgemmDataType, int>{BrgemmDataType::kBf16, 2},
        {BrgemmDataType::kU8S8, 1}}) {
    EXPECT_EQ(ChooseBlocking(MakeBrgemmDesc(Isa::kAvx2, dt, 1, 128, 64)).nvecs,
              nvecs);
  }
}

// f32 unrolls K by 8, or by 4 where that keeps a B load's step per trip
// within 2 KiB; bf16 and int8 by 4.
TEST(BrgemmBlockingTest, KUnrollKeepsBStepsWithinThePrefetchStride) {
  for (auto [ldb, unroll] : {std::pair<int64_t, int>{64, 8},
                             {65, 4},
                             {128, 4},
                             {129, 8},
                             {400, 8}}) {
    BrgemmDesc d =
        MakeBrgemmDesc(Isa::kAvx512Core, BrgemmDataType::kF32, 64, 64, 384);
    d.ldb = ldb;
    EXPECT_EQ(ChooseBlocking(d).k_unroll, unroll) << "ldb " << ldb;
  }
  EXPECT_EQ(AvxBlocking(BrgemmDataType::kU8S8, 64, 64).k_unroll, 4);
}

}  // namespace
}  // namespace microkernels
}  // namespace hgc
