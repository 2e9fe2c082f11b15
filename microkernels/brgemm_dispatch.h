// Picks the kernel family for a data type on the CPU the process runs on.
//
// Without AVX-512 every data type uses the AVX2 kernel (bf16 widened to
// f32, int8 to s16). With it, f32 uses the AVX-512 FMA kernel, int8 AMX
// where allowed, else VNNI, else (no VNNI) the AVX2 kernel. bf16 uses AMX where
// allowed; below that there are two AVX-512 ways, vdpbf16ps and widening to f32
// + FMA, and which is faster depends on the core (vdpbf16ps issues at half the
// FMA rate on Sapphire/Emerald Rapids, at the full rate on others). The
// dispatcher settles it by measurement: the first bf16 query times both kernels
// on the same in-cache block for a few milliseconds and keeps the faster one
// for the life of the process.
#ifndef HGC_MICROKERNELS_BRGEMM_DISPATCH_H_
#define HGC_MICROKERNELS_BRGEMM_DISPATCH_H_

#include <string>

#include "absl/status/statusor.h"
#include "microkernels/brgemm_desc.h"
#include "support/cpu_features.h"

namespace hgc {
namespace microkernels {

// The measured bf16 choice below AMX.
struct Bf16Calibration {
  double widen_gflops = 0;  // BrgemmAvx512Bf16Fma on the calibration block
  double dot_gflops = 0;    // BrgemmAvx512Bf16 (0 when AVX512_BF16 is absent)
  Isa chosen = Isa::kNone;  // kAvx512Core (widen) or kAvx512CoreBf16 (dot)
  std::string ToString() const;
};

// Measures once per process (thread-safe); later calls return the same
// result. FailedPrecondition when no AVX-512 is available under the cap at
// the first call.
absl::StatusOr<Bf16Calibration> CalibrateBf16();

// The ISA family to put in a descriptor for `dtype` under the current cap:
// the fastest kernel this CPU can run. FailedPrecondition when none can
// (no AVX2 + FMA).
absl::StatusOr<Isa> SelectBrgemmIsa(BrgemmDataType dtype);

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_DISPATCH_H_
