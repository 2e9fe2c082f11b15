// Register blocking for the AVX-512 and AVX2 BRGEMM generators.
//
// A kernel walks C in register tiles of `rows` x (`nvecs` x 16 lanes; 8 on
// AVX2); each tile's accumulators stay in vector registers for the whole
// batch and K reduction. The heuristic (documented in brgemm_blocking.cc)
// maximizes the accumulator count under the register budget (32 ZMM, 16
// YMM) left by each generator's other live registers, so the two FMA ports stay
// busy despite the 4-cycle FMA latency and the load ports are never the
// bottleneck.
#ifndef HGC_MICROKERNELS_BRGEMM_BLOCKING_H_
#define HGC_MICROKERNELS_BRGEMM_BLOCKING_H_

#include <string>

#include "microkernels/brgemm_desc.h"

namespace hgc {
namespace microkernels {

// How one AVX-512 kernel is blocked.
struct BrgemmBlocking {
  int rows = 0;      // C rows per register tile (M blocking), >= 1.
  int nvecs = 0;     // vectors per tile row (N blocking): 1..4 of 16 lanes
                     // (AVX-512), 1..2 of 8 lanes (AVX2; up to 6 for an
                     // f32 M of 2 or 3 without row maxima or B panels, 8
                     // for an M of 1 that reads B from memory).
  int k_unroll = 0;  // K groups emitted per trip of the K loop, >= 1.
  // Registers, besides the accumulators, a tile row and a tile need: the
  // generator reserves them from the top of zmm31 down.
  int reserved_regs = 0;

  // "rows6x4v:ku4", for logs and dumps.
  std::string ToString() const;
};

// The vector registers a generator needs besides rows * nvecs accumulators,
// for a tile `nvecs` vectors wide: B vectors, broadcast A values, constants.
int ReservedVectorRegisters(const BrgemmDesc& desc, int nvecs);

// The vector registers an AVX2 kernel's inner product keeps besides the
// accumulators, for a tile `nvecs` vectors wide: B vectors and the A
// broadcast (bf16: both halves of each and a mask; int8: two s16 halves of
// each B vector, A and a product). brgemm_avx2.cc places the post-ops'
// registers after them.
int Avx2OperandRegisters(const BrgemmDesc& desc, int nvecs);

// Whether an AVX2 kernel for `desc` takes B straight from memory into its
// FMAs: an f32 M of 1 without row maxima, divisors or B panels, where each
// B vector feeds a single FMA, so that keeping B in registers only narrows
// the tile. One register remains for the N tail's masked load.
bool Avx2BFromMemory(const BrgemmDesc& desc);

// The blocking for `desc` (AVX2 or an AVX-512 ISA, not AMX). The register tile
// is never taller than M; tails in M and N get the same tile shape cut down.
BrgemmBlocking ChooseBlocking(const BrgemmDesc& desc);

// The columns of one register tile of ChooseBlocking(desc): nvecs vectors of
// 8 lanes (AVX2) or 16 (AVX-512). B panels (BrgemmDesc::b_panel_bytes) of a
// kernel wider than one tile are exactly this wide.
int64_t BlockColumns(const BrgemmDesc& desc);

// The width B panels must have for `desc`'s kernel: BlockColumns of the
// same kernel reading its B in panels (an AVX2 M of 1 to 3 takes wider
// tiles only without panels), whether or not `desc` has them yet.
int64_t PanelColumns(const BrgemmDesc& desc);

// Whether `desc` selects the bf16 kernel that widens bf16 to f32 and uses
// FMA (isa below avx512_core_bf16: AVX2's generator always widens) rather
// than vdpbf16ps.
bool UsesBf16Widening(const BrgemmDesc& desc);

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_BLOCKING_H_
