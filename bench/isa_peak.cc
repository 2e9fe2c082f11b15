#include "bench/isa_peak.h"

#include <time.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "microkernels/amx.h"
#include "microkernels/jit_generator.h"
#include "support/status_macros.h"

namespace hgc {
namespace bench {
namespace {

using namespace Xbyak::util;  // NOLINT

constexpr int kAccumulators = 24;
constexpr int kYmmAccumulators = 12;

// void loop(int64_t iterations): each iteration issues the instruction
// 4 x 24 times (AVX-512), 4 x 12 times (YMM; for vpmaddwd, 4 x 12 pairs) or
// 16 times (AMX) with no dependence between consecutive issues to the same
// accumulator closer than 24 (12, 4) apart.
class PeakLoop : public microkernels::JitGenerator {
 public:
  explicit PeakLoop(PeakInstruction instr)
      : JitGenerator(PeakInstructionName(instr)), instr_(instr) {}
  int per_iteration() const {
    return amx() ? 16 : 4 * (ymm() ? kYmmAccumulators : kAccumulators);
  }

 protected:
  bool ymm() const {
    return instr_ == PeakInstruction::kVfmadd231psYmm ||
           instr_ == PeakInstruction::kVpmaddwdYmm;
  }
  bool amx() const {
    return instr_ == PeakInstruction::kTdpbf16ps ||
           instr_ == PeakInstruction::kTdpbusd;
  }
  absl::Status Generate() override {
    Xbyak::Label loop, config;
    if (amx()) ldtilecfg(ptr[rip + config]);
    if (ymm()) {
      for (int i = 0; i < 16; ++i) {
        vxorps(Xbyak::Ymm(i), Xbyak::Ymm(i), Xbyak::Ymm(i));
      }
    } else if (!amx()) {
      for (int i = 0; i < 26; ++i) {
        vpxord(Xbyak::Zmm(i), Xbyak::Zmm(i), Xbyak::Zmm(i));
      }
    }
    L(loop);
    for (int u = 0; u < 4; ++u) {
      if (instr_ == PeakInstruction::kVpmaddwdYmm) {
        // As the AVX2 int8 kernel: products into a scratch register (two,
        // alternating; renaming removes the reuse), then into accumulators.
        for (int i = 0; i < kYmmAccumulators; ++i) {
          const Xbyak::Ymm acc(i), product(12 + i % 2), x(14), y(15);
          vpmaddwd(product, x, y);
          vpaddd(acc, acc, product);
        }
        continue;
      }
      if (ymm()) {
        for (int i = 0; i < kYmmAccumulators; ++i) {
          vfmadd231ps(Xbyak::Ymm(i), Xbyak::Ymm(12), Xbyak::Ymm(13));
        }
        continue;
      }
      if (amx()) {
        for (int t = 0; t < 4; ++t) {
          const Xbyak::Tmm c(t), a(4 + t / 2), b(6 + t % 2);
          if (instr_ == PeakInstruction::kTdpbf16ps) tdpbf16ps(c, a, b);
          else tdpbusd(c, a, b);
        }
        continue;
      }
      for (int i = 0; i < kAccumulators; ++i) {
        const Xbyak::Zmm acc(i), x(24), y(25);
        switch (instr_) {
          case PeakInstruction::kVfmadd231ps: vfmadd231ps(acc, x, y); break;
          case PeakInstruction::kVdpbf16ps: vdpbf16ps(acc, x, y); break;
          default: vpdpbusd(acc, x, y); break;
        }
      }
    }
    dec(rdi);
    jnz(loop, T_NEAR);
    if (amx()) tilerelease();
    vzeroupper();
    ret();
    if (amx()) {
      align(64);
      L(config);
      microkernels::TileConfig cfg;
      for (int t = 0; t < 8; ++t) cfg.Set(t, 16, 64);
      for (uint8_t byte : cfg.ToBytes()) db(byte);
    }
    return absl::OkStatus();
  }

 private:
  PeakInstruction instr_;
};

double Seconds(void (*fn)(int64_t), int64_t iterations) {
  const double start = ThreadSeconds();
  fn(iterations);
  return ThreadSeconds() - start;
}

}  // namespace

double ThreadSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

const char* PeakInstructionName(PeakInstruction instr) {
  switch (instr) {
    case PeakInstruction::kVfmadd231ps: return "vfmadd231ps";
    case PeakInstruction::kVfmadd231psYmm: return "vfmadd231ps/ymm";
    case PeakInstruction::kVpmaddwdYmm: return "vpmaddwd+vpaddd/ymm";
    case PeakInstruction::kVdpbf16ps: return "vdpbf16ps";
    case PeakInstruction::kVpdpbusd: return "vpdpbusd";
    case PeakInstruction::kTdpbf16ps: return "tdpbf16ps";
    case PeakInstruction::kTdpbusd: return "tdpbusd";
  }
  return "?";
}

Isa PeakInstructionIsa(PeakInstruction instr) {
  switch (instr) {
    case PeakInstruction::kVfmadd231ps: return Isa::kAvx512Core;
    case PeakInstruction::kVfmadd231psYmm:
    case PeakInstruction::kVpmaddwdYmm: return Isa::kAvx2;
    case PeakInstruction::kVdpbf16ps: return Isa::kAvx512CoreBf16;
    case PeakInstruction::kVpdpbusd: return Isa::kAvx512CoreVnni;
    case PeakInstruction::kTdpbf16ps:
    case PeakInstruction::kTdpbusd: return Isa::kAvx512CoreAmx;
  }
  return Isa::kNone;
}

double OpsPerInstruction(PeakInstruction instr) {
  switch (instr) {
    case PeakInstruction::kVfmadd231ps: return 32;
    case PeakInstruction::kVfmadd231psYmm: return 16;
    case PeakInstruction::kVpmaddwdYmm: return 32;
    case PeakInstruction::kVdpbf16ps: return 64;
    case PeakInstruction::kVpdpbusd: return 128;
    case PeakInstruction::kTdpbf16ps: return 16 * 16 * 32 * 2;
    case PeakInstruction::kTdpbusd: return 16 * 16 * 64 * 2;
  }
  return 0;
}

PeakInstruction F32PeakInstruction() {
  return IsaAvailable(Isa::kAvx512Core) ? PeakInstruction::kVfmadd231ps
                                        : PeakInstruction::kVfmadd231psYmm;
}

struct PeakMeter::Impl {
  explicit Impl(PeakInstruction i) : instr(i), loop(i) {}
  PeakInstruction instr;
  PeakLoop loop;
  void (*fn)(int64_t) = nullptr;
  double iterations_per_second = 0;
};

absl::StatusOr<std::unique_ptr<PeakMeter>> PeakMeter::Create(
    PeakInstruction instr) {
  const Isa isa = PeakInstructionIsa(instr);
  if (!IsaAvailable(isa)) {
    return absl::FailedPreconditionError(
        absl::StrCat(IsaName(isa), " not available"));
  }
  if (isa == Isa::kAvx512CoreAmx) {
    HGC_RETURN_IF_ERROR(microkernels::RequestAmxPermission());
  }
  std::unique_ptr<PeakMeter> meter(new PeakMeter());
  meter->impl_ = std::make_unique<Impl>(instr);
  HGC_RETURN_IF_ERROR(meter->impl_->loop.Create());
  meter->impl_->fn = reinterpret_cast<void (*)(int64_t)>(
      const_cast<uint8_t*>(meter->impl_->loop.code()));
  int64_t iterations = 1000;
  Seconds(meter->impl_->fn, iterations);
  double t;
  while ((t = Seconds(meter->impl_->fn, iterations)) < 0.005) iterations *= 2;
  meter->impl_->iterations_per_second = iterations / t;
  return meter;
}

PeakMeter::~PeakMeter() = default;

double PeakMeter::Sample(double seconds) {
  const int64_t iterations =
      static_cast<int64_t>(impl_->iterations_per_second * seconds) + 1;
  const double t = Seconds(impl_->fn, iterations);
  return iterations * impl_->loop.per_iteration() *
         OpsPerInstruction(impl_->instr) / t * 1e-9;
}

absl::StatusOr<double> MeasurePeakGops(PeakInstruction instr) {
  HGC_ASSIGN_OR_RETURN(std::unique_ptr<PeakMeter> meter,
                       PeakMeter::Create(instr));
  std::vector<double> gops;
  for (int rep = 0; rep < 5; ++rep) gops.push_back(meter->Sample(0.03));
  std::sort(gops.begin(), gops.end());
  return gops[gops.size() / 2];
}

}  // namespace bench
}  // namespace hgc
