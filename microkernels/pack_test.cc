#include "microkernels/pack.h"

#include <cstdint>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace hgc {
namespace microkernels {
namespace {

TEST(PackTest, Vnni2InterleavesPairsAndZeroPads) {
  // B is 3 x 2 (K x N), bf16 bit patterns 1..6; ldb 3 pads a column.
  BrgemmDesc d = MakeBrgemmDesc(Isa::kAvx512CoreBf16, BrgemmDataType::kBf16,
                                1, 2, 3);
  d.ldb = 3;
  const uint16_t b[] = {1, 2, 3, 4, 5, 6};
  std::vector<uint16_t> packed(PackedBBytes(d) / 2, 0xffff);
  ASSERT_TRUE(PackB(d, {b, 2, false}, packed.data()).ok());
  // Group 0: (k0,k1) per column; group 1: (k2, pad).
  const std::vector<uint16_t> want = {1, 3, 2, 4, 0, 0, 5, 0, 6, 0, 0, 0};
  EXPECT_EQ(packed, want);
}

TEST(PackTest, Vnni4GroupsFour) {
  BrgemmDesc d = MakeBrgemmDesc(Isa::kAvx512CoreVnni, BrgemmDataType::kU8S8,
                                1, 2, 5);
  std::vector<int8_t> b(10);
  std::iota(b.begin(), b.end(), 1);  // B[k][n] = 2k + n + 1
  std::vector<int8_t> packed(PackedBBytes(d));
  ASSERT_TRUE(PackB(d, {b.data(), 2, false}, packed.data()).ok());
  const std::vector<int8_t> want = {1, 3, 5, 7, 2, 4, 6, 8,
                                    9, 0, 0, 0, 10, 0, 0, 0};
  EXPECT_EQ(packed, want);
}

// f32 B in panels of 2 columns, 16 bytes apart: K = 2 rows of each panel,
// the gap after each and the last panel's missing column zero.
TEST(PackTest, PanelsSplitTheColumns) {
  BrgemmDesc d = MakeBrgemmDesc(Isa::kAvx2, BrgemmDataType::kF32, 1, 3, 2);
  d.ldb = 2;
  d.b_panel_bytes = 24;
  const float b[] = {1, 2, 3, 4, 5, 6};  // B[k][n] = 3k + n + 1
  std::vector<float> packed(PackedBBytes(d) / 4, -1.0f);
  ASSERT_EQ(packed.size(), 10u);
  ASSERT_TRUE(PackB(d, {b, 3, false}, packed.data()).ok());
  const std::vector<float> want = {1, 2, 4, 5, 0, 0, 3, 0, 6, 0};
  EXPECT_EQ(packed, want);
  std::vector<float> unpacked(6);
  ASSERT_TRUE(UnpackB(d, packed.data(), 3, unpacked.data()).ok());
  EXPECT_EQ(unpacked, std::vector<float>(b, b + 6));
}

// s8s8 for the VNNI kernels is stored as u8 B + 128, padding as 0x80 (B = 0);
// AMX s8s8 (tdpbssd) keeps s8 B. UnpackB inverts both.
TEST(PackTest, S8s8IsBiasedForVnniOnly) {
  std::vector<int8_t> b = {-128, 127, 0, -1, 1, 5, -7, 100, 3, -3};
  const std::vector<int8_t> plain = {-128, 0, 1, -7, 127, -1, 5, 100,
                                     3, 0, 0, 0, -3, 0, 0, 0};
  for (Isa isa : {Isa::kAvx512CoreVnni, Isa::kAvx512CoreAmx}) {
    BrgemmDesc d = MakeBrgemmDesc(isa, BrgemmDataType::kS8S8, 1, 2, 5);
    const bool biased = isa != Isa::kAvx512CoreAmx;
    EXPECT_EQ(PackedBIsBiased(d), biased);
    std::vector<int8_t> packed(PackedBBytes(d));
    ASSERT_TRUE(PackB(d, {b.data(), 2, false}, packed.data()).ok());
    std::vector<int8_t> want = plain;
    if (biased) {
      for (int8_t& v : want) v = static_cast<int8_t>(v ^ 0x80);
    }
    EXPECT_EQ(packed, want) << IsaName(isa);
    std::vector<int8_t> back(b.size());
    ASSERT_TRUE(UnpackB(d, packed.data(), 2, back.data()).ok());
    EXPECT_EQ(back, b) << IsaName(isa);
  }
  EXPECT_FALSE(PackedBIsBiased(MakeBrgemmDesc(
      Isa::kAvx512CoreVnni, BrgemmDataType::kU8S8, 1, 2, 5)));
}

TEST(PackTest, TransposedSourceGivesTheSamePacking) {
  for (BrgemmDataType dt : {BrgemmDataType::kF32, BrgemmDataType::kBf16,
                            BrgemmDataType::kU8S8, BrgemmDataType::kS8S8}) {
    BrgemmDesc d = MakeBrgemmDesc(Isa::kAvx512CoreVnni, dt, 1, 19, 11);
    d.ldb = 32;
    const int64_t es = InputElementSize(dt);
    std::vector<uint8_t> b(d.k * d.n * es), bt(d.n * (d.k + 1) * es);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 7 + 1);
    for (int64_t k = 0; k < d.k; ++k) {
      for (int64_t n = 0; n < d.n; ++n) {
        for (int64_t e = 0; e < es; ++e) {
          bt[(n * (d.k + 1) + k) * es + e] = b[(k * d.n + n) * es + e];
        }
      }
    }
    std::vector<uint8_t> p1(PackedBBytes(d)), p2(PackedBBytes(d));
    ASSERT_TRUE(PackB(d, {b.data(), d.n, false}, p1.data()).ok());
    ASSERT_TRUE(PackB(d, {bt.data(), d.k + 1, true}, p2.data()).ok());
    EXPECT_EQ(p1, p2) << DataTypeName(dt);
    std::vector<uint8_t> back(b.size());
    ASSERT_TRUE(UnpackB(d, p1.data(), d.n, back.data()).ok());
    EXPECT_EQ(back, b);
  }
}

// PackB against PackedBIndex element by element, over the data types, tail
// shapes, panels (f32) and both source orders: the fast VNNI path places every
// byte where the layout's index says, and leaves padding at the bias of 0.
TEST(PackTest, MatchesPackedBIndexEverywhere) {
  struct Case {
    Isa isa;
    BrgemmDataType dtype;
  };
  const Case cases[] = {{Isa::kAvx2, BrgemmDataType::kF32},
                        {Isa::kAvx512CoreBf16, BrgemmDataType::kBf16},
                        {Isa::kAvx512CoreVnni, BrgemmDataType::kU8S8},
                        {Isa::kAvx512CoreVnni, BrgemmDataType::kS8S8}};
  for (const Case& c : cases) {
    for (int64_t k : {1, 3, 4, 7, 9}) {
      for (int64_t n : {1, 5, 16}) {
        for (bool panels : {false, true}) {
          for (bool transposed : {false, true}) {
            BrgemmDesc d = MakeBrgemmDesc(c.isa, c.dtype, 1, n, k);
            const int64_t es = InputElementSize(d.dtype);
            const int64_t g = VnniGranularity(d.dtype);
            // Panels exist on the f32 kernels only.
            if (panels && c.dtype != BrgemmDataType::kF32) continue;
            if (panels) {
              d.ldb = 4;
              d.b_panel_bytes = ((k + g - 1) / g * 4 * g + 8) * es;
            }
            std::vector<uint8_t> b(k * n * es);
            std::iota(b.begin(), b.end(), 1);
            std::vector<uint8_t> packed(PackedBBytes(d), 0x55);
            ASSERT_TRUE(PackB(d, {b.data(), transposed ? k : n, transposed},
                              packed.data())
                            .ok());
            const uint8_t pad = PackedBIsBiased(d) ? 0x80 : 0;
            std::vector<uint8_t> want(PackedBBytes(d), pad);
            for (int64_t kk = 0; kk < k; ++kk) {
              for (int64_t nn = 0; nn < n; ++nn) {
                const int64_t from = transposed ? nn * k + kk : kk * n + nn;
                const int64_t to = PackedBIndex(d, kk, nn);
                for (int64_t i = 0; i < es; ++i) {
                  want[to * es + i] = b[from * es + i] ^ (pad ? 0x80 : 0);
                }
              }
            }
            EXPECT_EQ(packed, want)
                << "dtype " << static_cast<int>(c.dtype) << " k " << k
                << " n " << n << " panels " << panels << " transposed "
                << transposed;
          }
        }
      }
    }
  }
}

TEST(PackTest, RejectsBadInput) {
  BrgemmDesc d = MakeBrgemmDesc(Isa::kAvx512Core, BrgemmDataType::kF32, 1, 8, 8);
  float b[64] = {};
  float out[64];
  EXPECT_EQ(PackB(d, {b, 4, false}, out).code(),
            absl::StatusCode::kInvalidArgument);  // ld < N
  EXPECT_EQ(PackB(d, {nullptr, 8, false}, out).code(),
            absl::StatusCode::kInvalidArgument);
  d.b_layout = BLayout::kVnni4;
  EXPECT_EQ(PackB(d, {b, 8, false}, out).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace microkernels
}  // namespace hgc
