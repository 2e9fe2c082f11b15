// AMX plumbing: the tile configuration block and Linux's permission request.
//
// AMX tiles are eight 2D registers (tmm0-7) of up to 16 rows x 64 bytes.
// Their shapes come from a 64-byte configuration loaded with ldtilecfg
// (palette 1). Linux (5.16+) keeps the 8 KB tile state off by default: a
// process must ask for it once with arch_prctl(ARCH_REQ_XCOMP_PERM,
// XFEATURE_XTILEDATA) before the first tile instruction, or that
// instruction faults.
#ifndef HGC_MICROKERNELS_AMX_H_
#define HGC_MICROKERNELS_AMX_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace hgc {
namespace microkernels {

constexpr int kAmxTiles = 8;
constexpr int kAmxMaxRows = 16;
constexpr int kAmxMaxColsBytes = 64;

// The ldtilecfg memory operand, palette 1 (Intel SDM vol. 1, 3.2.1):
// byte 0 palette, byte 1 start_row, bytes 2-15 zero, bytes 16-47 colsb of
// tiles 0-15 (16-bit each; only 0-7 exist), bytes 48-63 rows of tiles 0-15.
struct TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  std::array<uint16_t, kAmxTiles> colsb{};  // bytes per row, <= 64
  std::array<uint8_t, kAmxTiles> rows{};    // rows, <= 16

  // Sets tile `t` to `rows` x `colsb` bytes.
  void Set(int t, int rows_, int colsb_);
  // The exact 64 bytes ldtilecfg reads.
  std::array<uint8_t, 64> ToBytes() const;
  // "t0=16x64 t1=16x64 ..." (unused tiles omitted).
  std::string ToString() const;

  friend bool operator==(const TileConfig& a, const TileConfig& b) {
    return a.palette == b.palette && a.start_row == b.start_row &&
           a.colsb == b.colsb && a.rows == b.rows;
  }
  friend bool operator!=(const TileConfig& a, const TileConfig& b) {
    return !(a == b);
  }
};

// True when the CPU has AMX-TILE, AMX-BF16 and AMX-INT8 with OS support and
// the ISA cap (cpu_features.h) allows avx512_core_amx. Does not request
// permission.
bool AmxSupported();

// Requests the tile-data permission for this process, once; later calls
// return the first answer. FailedPrecondition("AMX not available ...") when
// the CPU or cap rules AMX out or the kernel refuses. Thread-safe.
absl::Status RequestAmxPermission();

// The tile configuration of a thread is cached where it lives: in the
// core's TILECFG state. AMX kernels (brgemm_amx.h) read it back with
// sttilecfg on entry (about 10 ns), run ldtilecfg (about 120 ns, and it
// zeroes the tiles) only when it differs from theirs, and return with the
// tiles still configured, so back-to-back calls of kernels with one shape
// configure once per thread. Reading the state rather than a software copy
// keeps this right when other code on the thread (oneDNN, another JIT)
// reconfigures or releases the tiles in between.
//
// The helpers below need AMX permission (RequestAmxPermission() OK); they
// act on the calling thread only.

// The calling thread's current configuration (sttilecfg): all zero bytes
// when the tiles are released (init state).
std::array<uint8_t, 64> CurrentTileConfig();
// ldtilecfg `config` on the calling thread (tests and foreign-code
// simulations; kernels configure themselves).
void LoadTileConfig(const TileConfig& config);
// tilerelease: returns the thread's tiles to the init state, so context
// switches stop saving 8 KB of tile data. Call when a thread is done with
// AMX work (BrgemmGemm::Run does at its end); harmless when released.
void ReleaseTiles();

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_AMX_H_
