#include "microkernels/brgemm_dispatch.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "microkernels/brgemm_kernel.h"
#include "support/status_macros.h"

namespace hgc {
namespace microkernels {
namespace {

// The calibration block: one register-tile-friendly M x 64 block with K and
// batch chosen so A and B (~100 KB) sit in L2 like a GEMM's working set.
constexpr int64_t kM = 30, kN = 64, kK = 256, kBatch = 4;

// GFLOP/s of the kernel for `isa`, best of several timed bursts.
absl::StatusOr<double> TimeBf16(Isa isa) {
  BrgemmDesc desc = MakeBrgemmDesc(isa, BrgemmDataType::kBf16, kM, kN, kK);
  desc.batch_kind = BatchKind::kStrided;
  desc.stride_a_bytes = kM * kK * 2;
  desc.stride_b_bytes = PackedBBytes(desc);
  HGC_ASSIGN_OR_RETURN(std::unique_ptr<BrgemmKernel> kernel,
                       BrgemmKernel::Create(desc));
  // Small integers in bf16 (0x3f80 = 1.0 etc.) keep every value finite.
  std::vector<uint16_t> a(kM * kK * kBatch, 0x3f80);
  std::vector<uint16_t> b(desc.stride_b_bytes / 2 * kBatch, 0x3c00);
  std::vector<float> c(kM * kN);
  constexpr int kCalls = 40;
  double best = 1e30;
  for (int burst = 0; burst < 7; ++burst) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kCalls; ++i) {
      kernel->ExecuteStrided(a.data(), b.data(), kBatch, c.data());
    }
    const std::chrono::duration<double> t =
        std::chrono::steady_clock::now() - start;
    if (burst > 0) best = std::min(best, t.count());  // burst 0 warms up
  }
  return 2.0 * kM * kN * kK * kBatch * kCalls / best * 1e-9;
}

absl::StatusOr<Bf16Calibration> Measure() {
  if (!IsaAvailable(Isa::kAvx512Core)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no AVX-512 to calibrate bf16 on (", DescribeCpu(), ")"));
  }
  Bf16Calibration cal;
  HGC_ASSIGN_OR_RETURN(cal.widen_gflops, TimeBf16(Isa::kAvx512Core));
  cal.chosen = Isa::kAvx512Core;
  if (IsaAvailable(Isa::kAvx512CoreBf16)) {
    HGC_ASSIGN_OR_RETURN(cal.dot_gflops, TimeBf16(Isa::kAvx512CoreBf16));
    if (cal.dot_gflops > cal.widen_gflops) cal.chosen = Isa::kAvx512CoreBf16;
  }
  return cal;
}

}  // namespace

std::string Bf16Calibration::ToString() const {
  return absl::StrFormat(
      "bf16 dispatch: widen+fma %.1f GFLOP/s, vdpbf16ps %.1f GFLOP/s -> %s",
      widen_gflops, dot_gflops, IsaName(chosen));
}

absl::StatusOr<Bf16Calibration> CalibrateBf16() {
  static const absl::StatusOr<Bf16Calibration>* result =
      new absl::StatusOr<Bf16Calibration>(Measure());
  return *result;
}

absl::StatusOr<Isa> SelectBrgemmIsa(BrgemmDataType dtype) {
  const Isa max = MaxIsa();
  if (max == Isa::kNone) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no AVX2 + FMA for the microkernels (", DescribeCpu(), ")"));
  }
  // Without AVX-512 every data type runs on the AVX2 kernel.
  if (max == Isa::kAvx2) return Isa::kAvx2;
  switch (dtype) {
    case BrgemmDataType::kF32:
      return Isa::kAvx512Core;
    case BrgemmDataType::kU8S8:
    case BrgemmDataType::kS8S8:
      if (max == Isa::kAvx512CoreAmx) return max;
      if (max >= Isa::kAvx512CoreVnni) return Isa::kAvx512CoreVnni;
      // AVX-512 without VNNI (Skylake-SP): the AVX2 kernel.
      return Isa::kAvx2;
    case BrgemmDataType::kBf16: {
      if (max == Isa::kAvx512CoreAmx) return max;
      HGC_ASSIGN_OR_RETURN(Bf16Calibration cal, CalibrateBf16());
      // The calibration ran under the cap of its time; respect today's.
      return IsaAvailable(cal.chosen) ? cal.chosen : Isa::kAvx512Core;
    }
  }
  return absl::InternalError("unknown data type");
}

}  // namespace microkernels
}  // namespace hgc
