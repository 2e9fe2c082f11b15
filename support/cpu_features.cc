#include "support/cpu_features.h"

#include <cpuid.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace hgc {
namespace {

struct NamedIsa {
  Isa isa;
  absl::string_view name;
};

constexpr NamedIsa kIsaNames[] = {
    {Isa::kNone, "none"},
    {Isa::kAvx2, "avx2"},
    {Isa::kAvx512Core, "avx512_core"},
    {Isa::kAvx512CoreVnni, "avx512_core_vnni"},
    {Isa::kAvx512CoreBf16, "avx512_core_bf16"},
    {Isa::kAvx512CoreFp16, "avx512_core_fp16"},
    {Isa::kAvx512CoreAmx, "avx512_core_amx"},
};

bool Bit(unsigned reg, int bit) { return (reg >> bit) & 1u; }

CpuFeatures Detect() {
  CpuFeatures f;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const bool osxsave = Bit(ecx, 27);
  f.fma = Bit(ecx, 12);
  f.f16c = Bit(ecx, 29);
  unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 7) return f;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  f.avx2 = Bit(ebx, 5);
  f.avx512f = Bit(ebx, 16);
  f.avx512dq = Bit(ebx, 17);
  f.avx512bw = Bit(ebx, 30);
  f.avx512vl = Bit(ebx, 31);
  f.avx512_vnni = Bit(ecx, 11);
  f.avx512_fp16 = Bit(edx, 23);
  f.amx_bf16 = Bit(edx, 22);
  f.amx_tile = Bit(edx, 24);
  f.amx_int8 = Bit(edx, 25);
  unsigned eax1 = 0, ebx1 = 0, ecx1 = 0, edx1 = 0;
  __cpuid_count(7, 1, eax1, ebx1, ecx1, edx1);
  f.avx512_bf16 = Bit(eax1, 5);
  if (osxsave) {
    // XGETBV(0) = XCR0: which register states the OS saves on context switch.
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    f.os_ymm = (lo & 0x6) == 0x6;                 // SSE, AVX.
    f.os_zmm = (lo & 0xe6) == 0xe6;               // SSE, AVX, opmask, ZMM.
    f.os_amx = (lo & 0x60000) == 0x60000;         // XTILECFG, XTILEDATA.
  }
  return f;
}

// The cap: kAvx512CoreAmx means none. A programmatic cap wins over the
// environment; -1 means "not set programmatically".
std::atomic<int> g_programmatic_cap{-1};

Isa EnvCap() {
  static const Isa cap = [] {
    const char* env = std::getenv("HGC_MAX_ISA");
    if (env == nullptr || *env == '\0') return Isa::kAvx512CoreAmx;
    absl::StatusOr<Isa> parsed = ParseIsa(env);
    if (!parsed.ok()) {
      std::fprintf(stderr, "hgc: ignoring HGC_MAX_ISA: %s\n",
                   std::string(parsed.status().message()).c_str());
      return Isa::kAvx512CoreAmx;
    }
    return *parsed;
  }();
  return cap;
}

}  // namespace

absl::string_view IsaName(Isa isa) {
  for (const NamedIsa& n : kIsaNames) {
    if (n.isa == isa) return n.name;
  }
  return "unknown";
}

absl::StatusOr<Isa> ParseIsa(absl::string_view name) {
  std::string lower = absl::AsciiStrToLower(name);
  if (lower == "all" || lower == "auto") return Isa::kAvx512CoreAmx;
  for (const NamedIsa& n : kIsaNames) {
    if (n.name == lower) return n.isa;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown ISA '", name,
      "'; expected one of none, avx2, avx512_core, avx512_core_vnni, "
      "avx512_core_bf16, avx512_core_fp16, avx512_core_amx, all"));
}

Isa CpuFeatures::HighestIsa() const {
  if (!(avx2 && fma && f16c && os_ymm)) return Isa::kNone;
  if (!(avx512f && avx512bw && avx512vl && avx512dq && os_zmm)) {
    return Isa::kAvx2;
  }
  Isa isa = Isa::kAvx512Core;
  if (!avx512_vnni) return isa;
  isa = Isa::kAvx512CoreVnni;
  if (!avx512_bf16) return isa;
  isa = Isa::kAvx512CoreBf16;
  if (!avx512_fp16) return isa;
  isa = Isa::kAvx512CoreFp16;
  if (!(amx_tile && amx_bf16 && amx_int8 && os_amx)) return isa;
  return Isa::kAvx512CoreAmx;
}

const CpuFeatures& DetectCpuFeatures() {
  static const CpuFeatures features = Detect();
  return features;
}

Isa MaxIsa() {
  const Isa cpu = DetectCpuFeatures().HighestIsa();
  const int programmatic = g_programmatic_cap.load(std::memory_order_acquire);
  const Isa cap = programmatic >= 0 ? static_cast<Isa>(programmatic) : EnvCap();
  return static_cast<int>(cap) < static_cast<int>(cpu) ? cap : cpu;
}

bool IsaAvailable(Isa isa) {
  return isa != Isa::kNone && static_cast<int>(isa) <= static_cast<int>(MaxIsa());
}

void SetMaxIsa(Isa cap) {
  g_programmatic_cap.store(static_cast<int>(cap), std::memory_order_release);
}

void ResetMaxIsa() { g_programmatic_cap.store(-1, std::memory_order_release); }

std::string DescribeCpu() {
  const Isa cpu = DetectCpuFeatures().HighestIsa();
  const Isa max = MaxIsa();
  std::string s = absl::StrCat("cpu: ", IsaName(cpu));
  if (max != cpu) absl::StrAppend(&s, " (cap: ", IsaName(max), ")");
  return s;
}

}  // namespace hgc
