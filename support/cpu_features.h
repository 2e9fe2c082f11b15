// Which x86 ISA families this CPU (and its OS) offers, and a cap on them.
//
// The families follow oneDNN's cpu_isa ladder: each one includes everything
// below it. A cap, from the environment variable HGC_MAX_ISA (spelled like
// ONEDNN_MAX_CPU_ISA, e.g. `HGC_MAX_ISA=avx512_core_vnni`) or from
// SetMaxIsa(), makes lower code paths testable on machines that have higher
// ones. Nothing here requests AMX permission from the kernel; that lives with
// the AMX code (microkernels/amx.h).
#ifndef HGC_SUPPORT_CPU_FEATURES_H_
#define HGC_SUPPORT_CPU_FEATURES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace hgc {

// ISA families, ordered: a larger value implies every smaller one.
enum class Isa : int {
  kNone = 0,          // below AVX2 + FMA: hgc's microkernels cannot run.
  kAvx2,              // AVX2 + FMA + F16C, 16 YMM registers (Zen 1-3).
  kAvx512Core,        // AVX-512 F, BW, VL, DQ (Skylake-SP).
  kAvx512CoreVnni,    // + AVX512_VNNI (vpdpbusd; Cascade Lake).
  kAvx512CoreBf16,    // + AVX512_BF16 (vdpbf16ps; Cooper Lake).
  kAvx512CoreFp16,    // + AVX512_FP16 (Sapphire Rapids without AMX).
  kAvx512CoreAmx,     // + AMX-TILE, AMX-BF16, AMX-INT8, enabled by the OS.
};

// Lower-case name as accepted by HGC_MAX_ISA ("avx512_core_bf16"), or "none".
absl::string_view IsaName(Isa isa);

// Parses a name accepted by HGC_MAX_ISA; "all" and "auto" mean no cap.
// InvalidArgument names the accepted spellings otherwise.
absl::StatusOr<Isa> ParseIsa(absl::string_view name);

// Raw feature bits read from CPUID and XGETBV.
struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  bool avx512_fp16 = false;
  bool amx_tile = false;
  bool amx_bf16 = false;
  bool amx_int8 = false;
  // The OS saves the YMM state (XCR0 bits 1-2), the ZMM state (bits 5-7)
  // and, separately, the AMX tile state (bits 17-18). Without these the
  // instructions fault.
  bool os_ymm = false;
  bool os_zmm = false;
  bool os_amx = false;

  // The highest family all of whose bits are present.
  Isa HighestIsa() const;
};

// Reads CPUID/XGETBV once and caches the answer. Thread-safe.
const CpuFeatures& DetectCpuFeatures();

// The highest family usable here: what the CPU has, lowered by the cap.
// The first call reads HGC_MAX_ISA; an unparsable value is reported once on
// stderr and ignored. Thread-safe.
Isa MaxIsa();

// True when `isa` is at or below MaxIsa().
bool IsaAvailable(Isa isa);

// Sets the cap programmatically, overriding HGC_MAX_ISA (Isa::kAvx512CoreAmx
// means "no cap"). Meant for tests and tools; call it before generating
// kernels, since kernels already created keep their ISA.
void SetMaxIsa(Isa cap);

// Drops a cap set by SetMaxIsa(), going back to HGC_MAX_ISA (if any).
void ResetMaxIsa();

// One line describing the CPU's families and the cap, for benchmark headers
// and logs: "cpu: avx512_core_amx (cap: avx512_core_bf16)".
std::string DescribeCpu();

}  // namespace hgc

#endif  // HGC_SUPPORT_CPU_FEATURES_H_
