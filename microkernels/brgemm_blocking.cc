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

}  // namespace

std::string BrgemmBlocking::ToString() const {
  return absl::StrCat("rows", rows, "x", nvecs, "v:ku", k_unroll);
}

bool UsesBf16Widening(const BrgemmDesc& desc) {
  return desc.dtype == BrgemmDataType::kBf16 &&
         static_cast<int>(desc.isa) < static_cast<int>(Isa::kAvx512CoreBf16);
}

int ReservedVectorRegisters(const BrgemmDesc& desc, int nvecs) {
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

// The heuristic:
//  1. nvecs = min(4, ceil(N / 16)): as wide as N allows, up to a cache line
//     of f32 per vector, so each broadcast A value feeds several FMAs.
//  2. rows = the most rows whose rows * nvecs accumulators fit beside the
//     generator's other registers, capped at 12 and at M.
//  3. k_unroll: enough K groups per loop trip that the two pointer bumps
//     and the branch are noise (they share ports with nothing hot), while
//     keeping each block variant's code under a few KB for the uop cache.
BrgemmBlocking ChooseBlocking(const BrgemmDesc& desc) {
  BrgemmBlocking b;
  b.nvecs = static_cast<int>(std::min<int64_t>(kMaxVectors, (desc.n + 15) / 16));
  b.reserved_regs = ReservedVectorRegisters(desc, b.nvecs);
  const int budget = kVectorRegisters - b.reserved_regs;
  b.rows = std::max(1, std::min(kMaxRows, budget / b.nvecs));
  b.rows = static_cast<int>(std::min<int64_t>(b.rows, desc.m));
  b.k_unroll = desc.dtype == BrgemmDataType::kF32 ? 8 : 4;
  return b;
}

}  // namespace microkernels
}  // namespace hgc
