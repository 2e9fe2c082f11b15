// Every kernel variant against the reference over the tail grid:
// M in {1 .. tile rows + 1}, N in {1, 15, 16, 17, 31, 48, 64, 65, 80, 94},
// K in {1, 2, 3, 4, 5, 16, 63, 150, 257}, batch in {1, 3}, beta 0 and 1,
// pointer lists and strided batches (also with A's stride 0, and batch 0),
// guard pages and guard bytes around every buffer (brgemm_test_util.h).
// AMX plans run on the tile simulator everywhere and natively where the
// CPU has AMX. The f32 kernels' post-ops and forms are
// in brgemm_f32_test.cc.
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

// 150 and 257: int8 on AVX2 widens A in segments of 32 groups (a segment
// and a rest, two segments), each with a partial group after.
const int64_t kKs[] = {1, 2, 3, 4, 5, 16, 63, 150, 257};

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
        // Pointer lists, strided batches, and strided batches that share
        // one A (A's stride 0, as the lowerings call attention's kernels).
        for (int form = 0; form < 3; ++form) {
          BrgemmDesc desc = MakeBrgemmDesc(v.isa, v.dtype, m, n, k);
          // Gaps after K in A and after N in C (checked by the harness).
          desc.lda = k + 3;
          desc.ldc = n + 2;
          desc.accumulate = accumulate;
          desc.batch_kind =
              form == 0 ? BatchKind::kPointerList : BatchKind::kStrided;
          SetTestStrides(&desc);
          if (form == 2) desc.stride_a_bytes = 0;
          std::shared_ptr<BrgemmKernel> kernel;
          AmxPlan plan;
          if (v.path == Path::kJit) {
            auto created = BrgemmKernel::Create(desc);
            ASSERT_TRUE(created.ok()) << created.status();
            kernel = std::move(*created);
          } else {
            plan = BuildAmxPlan(desc);
          }
          // Batch 0 (no A at all) where the kernel may widen A up front.
          const std::vector<int64_t> batches =
              form == 2 ? std::vector<int64_t>{0, 1, 3}
                        : std::vector<int64_t>{1, 3};
          for (int64_t batch : batches) {
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

// The descriptors attention's int8 and bf16 paths build (codegen/
// attention_kernels.h: OneKeyBlockKernels): Q·Kᵀ over Q rows (lda the
// head rounded up to 16, or a row stride of Q itself), Kᵀ packed with the
// keys rounded up to 16 columns, the score tile's spread rows; P·V over P
// rows whole cache lines apart, V's packed columns rounded up to 16; one
// strided block. Every family that runs them, AMX on its emulator where
// the CPU has none: heads and keys off every group and tile size.
TEST(BrgemmAttentionTest, OneKeyBlockDescriptorsOnEveryFamily) {
  struct Block {
    int64_t rows, keys, head;
  };
  const Block blocks[] = {
      {20, 20, 16}, {33, 37, 18}, {22, 150, 96}, {64, 128, 64}, {7, 45, 33}};
  auto round_up = [](int64_t x, int64_t to) { return (x + to - 1) / to * to; };
  uint32_t seed = 500;
  int cases = 0;
  for (const Variant& v : kVariants) {
    if (v.dtype != BrgemmDataType::kBf16 && v.dtype != BrgemmDataType::kU8S8) {
      continue;
    }
    if (v.path == Path::kJit && !IsaAvailable(v.isa)) continue;
    const int64_t p_line = v.dtype == BrgemmDataType::kBf16 ? 32 : 64;
    for (const Block& blk : blocks) {
      BrgemmDesc qk =
          MakeBrgemmDesc(v.isa, v.dtype, blk.rows, blk.keys, blk.head);
      qk.lda = round_up(blk.head, 16);
      qk.ldb = round_up(blk.keys, 16);
      qk.ldc = round_up(blk.keys, 16) + 16;
      BrgemmDesc pv =
          MakeBrgemmDesc(v.isa, v.dtype, blk.rows, blk.head, blk.keys);
      pv.lda = round_up(blk.keys, p_line) + p_line;
      pv.ldb = round_up(blk.head, 16);
      pv.ldc = blk.head;
      for (BrgemmDesc* d : {&qk, &pv}) {
        d->batch_kind = BatchKind::kStrided;
        std::shared_ptr<BrgemmKernel> kernel;
        AmxPlan plan;
        if (v.path == Path::kJit) {
          auto created = BrgemmKernel::Create(*d);
          ASSERT_TRUE(created.ok()) << v.name << ": " << created.status();
          kernel = std::move(*created);
        } else {
          plan = BuildAmxPlan(*d);
        }
        auto make_runner = [&](const BrgemmDesc&) -> BrgemmRunner {
          if (kernel) {
            return [&](const BrgemmCallArgs& args) { kernel->fn()(&args); };
          }
          return [&](const BrgemmCallArgs& args) {
            ASSERT_TRUE(EmulateAmxPlan(plan, args).ok());
          };
        };
        ASSERT_TRUE(CheckBrgemmCase(*d, 1, seed++, make_runner))
            << v.name << " " << d->ToString();
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 0);
}

std::string GridName(
    const ::testing::TestParamInfo<std::tuple<int, int64_t>>& info) {
  return std::string(kVariants[std::get<0>(info.param)].name) + "_N" +
         std::to_string(std::get<1>(info.param));
}

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
