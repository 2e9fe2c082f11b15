// AmxPlan: the explicit tile schedule an AMX BRGEMM kernel executes.
//
// C is cut into blocks of up to 32 x 32 elements, each held in up to 2 x 2
// accumulator tiles (tmm0-3); a block's A rows come through tmm4-5 and its B
// columns through tmm6-7, one K chunk (32 bf16 or 64 int8 elements, i.e. 64
// bytes of an A row and 16 packed B rows) at a time:
//
//   for each N block kind (full 32 columns, then the tail)  x its count
//     for each M block kind (full 32 rows, then the tail)    x its count
//       [ldtilecfg when the block kind's shapes differ]
//       C tiles = 0, or loaded from C when accumulating
//       for each batch element, for each K chunk: chunk_ops in order
//       (a last partial K chunk is first staged, zero-padded, into a
//        64-byte-stride scratch so no load passes the end of A or B)
//       store the C tiles
//
// The plan is data: the generator (brgemm_amx.h) emits it as tile
// instructions and the simulator (amx_emulator.h) executes it in C++, so the
// schedule is tested on every machine and run natively where AMX exists.
#ifndef HGC_MICROKERNELS_AMX_PLAN_H_
#define HGC_MICROKERNELS_AMX_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "microkernels/amx.h"
#include "microkernels/brgemm_desc.h"

namespace hgc {
namespace microkernels {

// Tile numbers of the plan's fixed roles.
constexpr int AmxCTile(int row_tile, int col_tile) {
  return row_tile * 2 + col_tile;
}
constexpr int AmxATile(int row_tile) { return 4 + row_tile; }
constexpr int AmxBTile(int col_tile) { return 6 + col_tile; }

// Elements per C block side.
constexpr int kAmxBlock = 32;
// Bytes of scratch: A staging (2 tiles x 16 rows x 64 B) then B staging.
constexpr int kAmxStageBytes = 4 * 1024;
constexpr int kAmxStageBOffset = 2 * 1024;

// One step of a K chunk.
struct AmxOp {
  enum Kind : uint8_t {
    kLoadA,  // tile <- rows of A row-tile `index` for this chunk
    kLoadB,  // tile <- 16 packed B rows of column-tile `index`
    kDot,    // tile (C) += tile a * tile b (tdpbf16ps / tdpbusd / tdpbssd)
  };
  Kind kind;
  int tile;
  int index = 0;  // kLoadA / kLoadB
  int a = 0;      // kDot
  int b = 0;      // kDot
  std::string ToString() const;
};

// One (M kind, N kind) combination of blocks sharing tile shapes.
struct AmxBlockKind {
  int row_tiles = 0;  // 1 or 2
  int rows[2] = {0, 0};
  int col_tiles = 0;  // 1 or 2
  int cols[2] = {0, 0};  // C columns per col tile (f32 / s32 elements)
  TileConfig config;
  std::vector<AmxOp> chunk_ops;
};

struct AmxPlan {
  BrgemmDesc desc;
  int chunk_k = 0;          // K elements per chunk (32 bf16, 64 int8)
  int64_t full_chunks = 0;  // chunks of chunk_k
  int tail_k = 0;           // K elements in the last, staged chunk (0: none)
  // Block counts along M and N per kind: [0] full blocks, [1] the tail
  // (count 0 or 1).
  int64_t m_count[2] = {0, 0};
  int64_t n_count[2] = {0, 0};
  // kinds[mi][ni]; a kind with zero count is left empty.
  AmxBlockKind kinds[2][2];
  // Whether all used kinds share one TileConfig (one ldtilecfg per call).
  bool single_config = true;

  // Multi-line listing of counts, configs and chunk ops.
  std::string ToString() const;
};

// The plan for `desc` (isa kAvx512CoreAmx, dtype bf16 or int8, validated).
AmxPlan BuildAmxPlan(const BrgemmDesc& desc);

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_AMX_PLAN_H_
