// A C++ model of the AMX tile unit, and an executor of AmxPlans on it.
//
// The simulator implements ldtilecfg, tileloadd, tilestored, tilezero,
// tdpbf16ps, tdpbusd and tdpbssd after the pseudo-code in Intel's ISA
// reference (rows and bytes past a tile's configured shape read as zero and
// are never written); tdpbf16ps reads denormal inputs as zero and flushes
// denormal results, as the hardware does. EmulateAmxPlan walks a plan with
// exactly the loops, address arithmetic and K-tail staging the generated
// AMX code uses, so a plan that matches the reference here is the plan the
// hardware runs.
#ifndef HGC_MICROKERNELS_AMX_EMULATOR_H_
#define HGC_MICROKERNELS_AMX_EMULATOR_H_

#include <cstdint>

#include "absl/status/status.h"
#include "microkernels/amx.h"
#include "microkernels/amx_plan.h"
#include "microkernels/brgemm_abi.h"

namespace hgc {
namespace microkernels {

class AmxTileSimulator {
 public:
  // ldtilecfg: takes the shapes and zeroes every tile. InvalidArgument for
  // a palette other than 1 or a shape past 16 rows x 64 bytes.
  absl::Status LoadConfig(const TileConfig& config);

  // tileloadd: rows[t] rows of colsb[t] bytes from base + row * stride.
  void Load(int t, const void* base, int64_t stride);
  // tilestored: the configured rows and bytes only.
  void Store(int t, void* base, int64_t stride) const;
  void Zero(int t);
  // c += a * b for the three AMX products; operand shapes as the hardware
  // requires (c.rows == a.rows, c.colsb == b.colsb, a.colsb == 4 * b.rows).
  void DotBf16(int c, int a, int b);   // tdpbf16ps: f32 += bf16 pairs
  void DotU8S8(int c, int a, int b);   // tdpbusd: s32 += u8 * s8 quads
  void DotS8S8(int c, int a, int b);   // tdpbssd: s32 += s8 * s8 quads

  const TileConfig& config() const { return config_; }

 private:
  TileConfig config_;
  alignas(64) uint8_t tiles_[kAmxTiles][kAmxMaxRows][kAmxMaxColsBytes] = {};
};

// Runs `plan` on the simulator for one call, as the generated kernel would:
// args.a / args.b are pointer arrays or strided bases per plan.desc.
absl::Status EmulateAmxPlan(const AmxPlan& plan, const BrgemmCallArgs& args);

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_AMX_EMULATOR_H_
