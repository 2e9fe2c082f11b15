#include "microkernels/brgemm_blocking.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace hgc {
namespace microkernels {
namespace {

constexpr int kVectorRegisters = 32;
// Taller tiles stop paying off: 12 rows already give >= 12 independent
// accumulators with one vector, more than the 8 that two FMA ports with a
// 4-cycle latency need, and each row adds a broadcast load.
constexpr int kMaxRows = 12;
// Widest tile: 4 vectors = 64 columns = one cache line of f32 per vector
// load of a packed B row, the shape oneDNN's brgemm uses too.
constexpr int kMaxVectors = 4;
// The longest step between two loads of one instruction that the L1 stride
// prefetcher follows (Intel's IP prefetcher: 2 KiB).
constexpr int64_t kPrefetchStrideBytes = 2048;

}  // namespace

std::string BrgemmBlocking::ToString() const {
  return absl::StrCat("rows", rows, "x", nvecs, "v:ku", k_unroll);
}

bool UsesBf16Widening(const BrgemmDesc& desc) {
  return desc.dtype == BrgemmDataType::kBf16 &&
         static_cast<int>(desc.isa) < static_cast<int>(Isa::kAvx512CoreBf16);
}

int Avx2OperandRegisters(const BrgemmDesc& desc, int nvecs) {
  switch (desc.dtype) {
    case BrgemmDataType::kF32:
      return Avx2BFromMemory(desc) ? 2 : 1 + nvecs;
    case BrgemmDataType::kBf16:
      return 3 + 2 * nvecs;
    case BrgemmDataType::kU8S8:
    case BrgemmDataType::kS8S8:
      return 2 + 2 * nvecs;
  }
  return 16;
}

bool Avx2BFromMemory(const BrgemmDesc& desc) {
  return desc.isa == Isa::kAvx2 && desc.dtype == BrgemmDataType::kF32 &&
         desc.m == 1 && !desc.row_max && !desc.divide_rows &&
         desc.b_panel_bytes == 0 && desc.b_layout == BLayout::kPlain;
}

int ReservedVectorRegisters(const BrgemmDesc& desc, int nvecs) {
  if (desc.isa == Isa::kAvx2) {
    // brgemm_avx2.cc: the operands, the N tail's lane mask, the scale, and
    // relu's zero or divide_rows' one.
    return Avx2OperandRegisters(desc, nvecs) + (desc.n % 8 != 0 ? 1 : 0) +
           (desc.scale ? 1 : 0) + (desc.relu || desc.divide_rows ? 1 : 0);
  }
  switch (desc.dtype) {
    case BrgemmDataType::kF32:
      // One register per B vector of the current k, one broadcast A value,
      // and the scale and the row max of those post-ops.
      return nvecs + 1 + (desc.scale ? 1 : 0) + (desc.row_max ? 1 : 0);
    case BrgemmDataType::kBf16:
      // Widening keeps B's even-k and odd-k halves (2 per vector), A's two
      // halves and the 0xffff0000 mask; vdpbf16ps is like f32.
      return UsesBf16Widening(desc) ? 2 * nvecs + 3 : nvecs + 1;
    case BrgemmDataType::kU8S8:
    case BrgemmDataType::kS8S8:
      // B vectors and the broadcast A group (s8s8's B arrives biased from
      // PackB, and its row sums run before the accumulators are live).
      return nvecs + 1;
  }
  return kVectorRegisters;
}

namespace {

// Step 2 of ChooseBlocking's heuristic (below): `fit` rows at most (at
// least 1, at most M), evened out over the tiles M then needs.
int EvenRows(int fit, int64_t m) {
  const int64_t rows = std::min<int64_t>(std::max(1, fit), m);
  const int64_t tiles = (m + rows - 1) / rows;
  return static_cast<int>((m + tiles - 1) / tiles);
}

// Step 3 of ChooseBlocking's heuristic (below).
int ChooseKUnroll(const BrgemmDesc& desc) {
  if (desc.dtype != BrgemmDataType::kF32) return 4;
  const int64_t b_row_bytes = desc.ldb * 4;
  return b_row_bytes * 8 > kPrefetchStrideBytes &&
                 b_row_bytes * 4 <= kPrefetchStrideBytes
             ? 4
             : 8;
}

// AVX2 (16 YMM registers of 8 lanes): at most 2 vectors a row, so that an
// N block of a row_max kernel is 16 columns, the row maxima's lane width
// (brgemm_avx2.h), and 1 for int8, whose vectors take two accumulators and
// two B registers each; then as many rows as the registers allow, up to 8 (6
// for two f32 vectors: the classic 6 x 16 tile), evened out as in step 2
// of ChooseBlocking's heuristic; K unrolled as in step 3.
// An f32 M of 1 to 3 without row maxima or B panels (whose width fixes the
// tiles') takes instead as many vectors a row (up to 6) as fit beside its
// rows' accumulators: such a call (a decoder step's P·V, a GEMV) reads each
// B row in runs of up to 48 columns rather than 16, and keeps more than 2
// accumulators in flight (on Zen 3 a 1 x 2048 x 2048 GEMV ran 1.48x and a
// decoder step 4-18 % faster). An M of 1 reads B from memory
// (Avx2BFromMemory) and so fits 8 vectors: a 64-column panel of packed
// weights in one pass instead of a 48-column and a 16-column one.
BrgemmBlocking ChooseAvx2Blocking(const BrgemmDesc& desc) {
  constexpr int kAvx2Registers = 16, kAvx2MaxRows = 8;
  const bool is_int = desc.dtype == BrgemmDataType::kU8S8 ||
                      desc.dtype == BrgemmDataType::kS8S8;
  BrgemmBlocking b;
  b.nvecs = desc.n > 8 && !is_int ? 2 : 1;
  if (desc.dtype == BrgemmDataType::kF32 && !desc.row_max && desc.m <= 3 &&
      desc.b_panel_bytes == 0) {
    const int widest = static_cast<int>(
        std::min<int64_t>(Avx2BFromMemory(desc) ? 8 : 6, (desc.n + 7) / 8));
    for (int nvecs = widest; nvecs > b.nvecs; --nvecs) {
      if (desc.m * nvecs + ReservedVectorRegisters(desc, nvecs) <=
          kAvx2Registers) {
        b.nvecs = nvecs;
        break;
      }
    }
  }
  b.reserved_regs = ReservedVectorRegisters(desc, b.nvecs);
  const int accs = b.nvecs * (is_int ? 2 : 1);
  b.rows = EvenRows(
      std::min(kAvx2MaxRows, (kAvx2Registers - b.reserved_regs) / accs),
      desc.m);
  b.k_unroll = ChooseKUnroll(desc);
  return b;
}

}  // namespace

// The heuristic:
//  1. nvecs = min(4, ceil(N / 16)): as wide as N allows, up to a cache line
//     of f32 per vector, so each broadcast A value feeds several FMAs. An N
//     above 64 that is not a multiple of 64 takes 3 vectors instead when
//     that needs no more column tiles: 80 and 96 as 48 + 32 and 48 + 48
//     rather than 64 + 16 and 64 + 32, whose narrow tiles feed few FMAs per
//     load (P·V of heads 80 and 96 measured 7-9 % faster; 112 = 64 + 48
//     stays).
//  2. rows = the most rows whose rows * nvecs accumulators fit beside the
//     generator's other registers, capped at 12 and at M, then evened out:
//     the same number of tiles, as equal in height as they can be (64 rows
//     as 8 tiles of 8, not 7 of 9 and a lone row).
//  3. k_unroll: enough K groups per loop trip that the two pointer bumps
//     and the branch are noise (they share ports with nothing hot), while
//     keeping each block variant's code under a few KB for the uop cache:
//     4 for bf16 and int8; 8 for f32, but 4 where that keeps each B load's
//     step per trip within 2 KiB (B rows 257-512 bytes apart), the longest
//     stride the L1 stride prefetcher of Intel cores follows. P·V of heads
//     96 and 128 (B rows 384 and 512 bytes apart, streamed from L2) ran
//     2-3 % faster with 4 than with 8, kernel and attention block alike.
BrgemmBlocking ChooseBlocking(const BrgemmDesc& desc) {
  if (desc.isa == Isa::kAvx2) return ChooseAvx2Blocking(desc);
  BrgemmBlocking b;
  b.nvecs = static_cast<int>(std::min<int64_t>(kMaxVectors, (desc.n + 15) / 16));
  const int64_t wide = 16 * kMaxVectors, narrower = wide - 16;
  if (desc.n > wide && desc.n % wide != 0 &&
      (desc.n + narrower - 1) / narrower <= (desc.n + wide - 1) / wide) {
    b.nvecs = kMaxVectors - 1;
  }
  b.reserved_regs = ReservedVectorRegisters(desc, b.nvecs);
  const int budget = kVectorRegisters - b.reserved_regs;
  b.rows = EvenRows(std::min(kMaxRows, budget / b.nvecs), desc.m);
  b.k_unroll = ChooseKUnroll(desc);
  return b;
}

int64_t BlockColumns(const BrgemmDesc& desc) {
  return ChooseBlocking(desc).nvecs * (desc.isa == Isa::kAvx2 ? 8 : 16);
}

int64_t PanelColumns(const BrgemmDesc& desc) {
  BrgemmDesc in_panels = desc;
  // Any size: only whether B is in panels changes the tiles.
  if (in_panels.b_panel_bytes == 0) in_panels.b_panel_bytes = 4;
  return BlockColumns(in_panels);
}

}  // namespace microkernels
}  // namespace hgc
