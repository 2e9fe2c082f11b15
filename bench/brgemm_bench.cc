// bazel run -c opt //bench:microkernels
//
// One thread, pinned to one core. Prints:
//  1. the measured peak of each instruction the kernels use;
//  2. each microkernel variant on blocks of a register tile times K = 64 ..
//     1024 and batch 1 .. 16, in GFLOP/s (GOP/s for int8) and % of its
//     instruction's peak, with the working set and whether it fits L2;
//  3. single-threaded GEMMs (256^3, 512^3, 1024^3) built from the kernels
//     (microkernels/gemm_driver.h) beside oneDNN 2.6's matmul primitive in
//     the same run, both with weights packed/reordered before timing.
// Every figure is the median of repeated timed runs, timed in thread CPU time
// (isa_peak.h: ThreadSeconds) so that other work on a shared machine does
// not count. HGC_MAX_ISA caps hgc and oneDNN alike. Flags: --only=kernels or
// --only=gemm runs one table; --dtype=f32|bf16|u8s8|s8s8 one data type.
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "bench/isa_peak.h"
#include "bench/onednn_matmul.h"
#include "microkernels/brgemm_blocking.h"
#include "microkernels/brgemm_dispatch.h"
#include "microkernels/brgemm_kernel.h"
#include "microkernels/gemm_driver.h"
#include "microkernels/pack.h"
#include "support/cpu_features.h"

extern "C" void omp_set_num_threads(int);

namespace hgc {
namespace bench {
namespace {

using microkernels::BrgemmDataType;
using microkernels::BrgemmDesc;
using microkernels::BrgemmKernel;

constexpr int64_t kL2Bytes = 2 * 1024 * 1024;

// Calls of `fn` that take at least `seconds` of thread CPU time.
int64_t CallsFor(const std::function<void()>& fn, double seconds) {
  fn();
  int64_t calls = 1;
  for (;;) {
    const double start = ThreadSeconds();
    for (int64_t i = 0; i < calls; ++i) fn();
    if (ThreadSeconds() - start > seconds) return calls;
    calls *= 2;
  }
}

// Thread CPU seconds per call over `calls` calls.
double SecondsPerCall(const std::function<void()>& fn, int64_t calls) {
  const double start = ThreadSeconds();
  for (int64_t i = 0; i < calls; ++i) fn();
  return (ThreadSeconds() - start) / calls;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A zeroed, 64-byte aligned buffer: every operand of both libraries starts
// on a cache line, as a framework's tensors and a compiler's arena do (tile
// and vector loads that straddle lines would otherwise cost both twice).
class Buffer {
 public:
  explicit Buffer(int64_t bytes)
      : size_(bytes),
        data_(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64))) {
    std::memset(data_.get(), 0, (bytes + 63) / 64 * 64);
  }
  char* data() const { return data_.get(); }
  int64_t size() const { return size_; }
  template <typename T>
  T* as() const { return reinterpret_cast<T*>(data_.get()); }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  int64_t size_;
  std::unique_ptr<char, Free> data_;
};

// Random bytes that are valid inputs of every type: small bf16 / f32 values
// and arbitrary int8.
void FillInputs(BrgemmDataType dt, void* p, int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-8, 8);
  for (int64_t i = 0; i < count; ++i) {
    switch (dt) {
      case BrgemmDataType::kF32:
        static_cast<float*>(p)[i] = small(rng) / 8.0f;
        break;
      case BrgemmDataType::kBf16: {
        const float f = small(rng) / 8.0f;
        uint32_t u;
        std::memcpy(&u, &f, 4);
        static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(u >> 16);
        break;
      }
      default:
        static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(rng());
        break;
    }
  }
}

// Which parts of the benchmark run (argv: --only=kernels|gemm,
// --dtype=f32|bf16|u8s8|s8s8, --size=N, --blocking=nb,kb,mb[,pack_a] for tuning);
// the peaks are always measured.
struct Filter {
  bool kernels = true;
  bool gemm = true;
  std::string dtype;  // empty: all
  int64_t size = 0;   // --size=N: one GEMM size instead of 256, 512, 1024
  microkernels::GemmBlocking blocking;  // --blocking (0 / -1: default)
  bool Wants(BrgemmDataType dt) const {
    return dtype.empty() ||
           std::string(microkernels::DataTypeName(dt)).rfind(dtype, 0) == 0;
  }
};

struct KernelVariant {
  const char* name;
  Isa isa;
  BrgemmDataType dtype;
  PeakInstruction peak;
};

// Median GFLOP/s of `fn` (`ops` per call) and of `meter`, sampled in
// alternation so both see the same machine state.
std::pair<double, double> MedianBeside(const std::function<void()>& fn,
                                       double ops, PeakMeter* meter) {
  const int64_t calls = CallsFor(fn, 0.01);
  std::vector<double> kernel, peak;
  for (int rep = 0; rep < 7; ++rep) {
    kernel.push_back(ops / SecondsPerCall(fn, calls) * 1e-9);
    if (meter != nullptr) peak.push_back(meter->Sample(0.01));
  }
  return {Median(kernel), peak.empty() ? 0.0 : Median(peak)};
}

void KernelTable(const Filter& filter) {
  const KernelVariant variants[] = {
      {"f32", Isa::kAvx512Core, BrgemmDataType::kF32,
       PeakInstruction::kVfmadd231ps},
      {"f32 avx2", Isa::kAvx2, BrgemmDataType::kF32,
       PeakInstruction::kVfmadd231psYmm},
      {"bf16 avx2", Isa::kAvx2, BrgemmDataType::kBf16,
       PeakInstruction::kVfmadd231psYmm},
      {"bf16 widen+fma", Isa::kAvx512Core, BrgemmDataType::kBf16,
       PeakInstruction::kVfmadd231ps},
      {"bf16 vdpbf16ps", Isa::kAvx512CoreBf16, BrgemmDataType::kBf16,
       PeakInstruction::kVdpbf16ps},
      {"u8s8 avx2", Isa::kAvx2, BrgemmDataType::kU8S8,
       PeakInstruction::kVpmaddwdYmm},
      {"s8s8 avx2", Isa::kAvx2, BrgemmDataType::kS8S8,
       PeakInstruction::kVpmaddwdYmm},
      {"u8s8 vpdpbusd", Isa::kAvx512CoreVnni, BrgemmDataType::kU8S8,
       PeakInstruction::kVpdpbusd},
      {"s8s8 vpdpbusd", Isa::kAvx512CoreVnni, BrgemmDataType::kS8S8,
       PeakInstruction::kVpdpbusd},
      {"bf16 amx", Isa::kAvx512CoreAmx, BrgemmDataType::kBf16,
       PeakInstruction::kTdpbf16ps},
      {"u8s8 amx", Isa::kAvx512CoreAmx, BrgemmDataType::kU8S8,
       PeakInstruction::kTdpbusd},
  };
  std::printf("\n== BRGEMM microkernels (1 thread; strided batch; peak = the "
              "instruction's loop sampled between the kernel's runs) ==\n");
  std::printf("%-15s %-5s %5s %5s %3s %9s %3s %9s %8s %7s  %s\n", "variant",
              "M", "N", "K", "bs", "set(KB)", "L2", "G(FL)OP/s", "peak",
              "%peak", "descriptor");
  for (const KernelVariant& v : variants) {
    if (!filter.Wants(v.dtype)) continue;
    if (!IsaAvailable(v.isa)) {
      std::printf("%-15s skipped: %s not available (%s)\n", v.name,
                  std::string(IsaName(v.isa)).c_str(), DescribeCpu().c_str());
      continue;
    }
    auto meter = PeakMeter::Create(v.peak);
    if (!meter.ok()) continue;
    const bool amx = v.isa == Isa::kAvx512CoreAmx;
    BrgemmDesc probe = microkernels::MakeBrgemmDesc(v.isa, v.dtype, 1000, 64, 64);
    // Four register tiles tall (AMX: one 32-row block... two of them).
    const int64_t m = amx ? 64 : 4 * microkernels::ChooseBlocking(probe).rows;
    for (int64_t k : {64, 256, 1024}) {
      for (int64_t bs : {1, 4, 16}) {
        BrgemmDesc d = microkernels::MakeBrgemmDesc(v.isa, v.dtype, m, 64, k);
        d.batch_kind = microkernels::BatchKind::kStrided;
        const int64_t es = microkernels::InputElementSize(v.dtype);
        d.stride_a_bytes = m * k * es;
        d.stride_b_bytes = microkernels::PackedBBytes(d);
        auto kernel = BrgemmKernel::Create(d);
        if (!kernel.ok()) {
          std::printf("%-15s error: %s\n", v.name,
                      std::string(kernel.status().message()).c_str());
          continue;
        }
        Buffer a(d.stride_a_bytes * bs), b(d.stride_b_bytes * bs);
        Buffer c(m * 64 * 4);
        FillInputs(v.dtype, a.data(), a.size() / es, 1);
        FillInputs(v.dtype, b.data(), b.size() / es, 2);
        const BrgemmKernel* kr = kernel->get();
        const auto [gops, pk] = MedianBeside(
            [&] { kr->ExecuteStrided(a.data(), b.data(), bs, c.data()); },
            2.0 * m * 64 * k * bs, meter->get());
        const int64_t set = a.size() + b.size() + c.size();
        std::printf(
            "%-15s %-5ld %5d %5ld %3ld %9.0f %3s %9.1f %8.1f %6.1f%%  %s\n",
            v.name, static_cast<long>(m), 64, static_cast<long>(k),
            static_cast<long>(bs), set / 1024.0,
            set <= kL2Bytes ? "yes" : "no", gops, pk,
            pk > 0 ? 100.0 * gops / pk : 0.0, d.ToString().c_str());
      }
    }
  }
}

// Max |x - y| / max(1, |y|) between two outputs (f32 or s32).
double MaxRelDiff(BrgemmDataType dt, const void* x, const void* y,
                  int64_t count) {
  double worst = 0;
  for (int64_t i = 0; i < count; ++i) {
    double a, b;
    if (dt == BrgemmDataType::kF32 || dt == BrgemmDataType::kBf16) {
      a = static_cast<const float*>(x)[i];
      b = static_cast<const float*>(y)[i];
    } else {
      a = static_cast<const int32_t*>(x)[i];
      b = static_cast<const int32_t*>(y)[i];
    }
    worst = std::max(worst, std::fabs(a - b) / std::max(1.0, std::fabs(b)));
  }
  return worst;
}

// One GEMM size of one data type: oneDNN and every hgc way are sampled in
// turn, 9 times, so all of them see the same machine state; the ratio is the
// median of the per-round ratios.
void GemmRow(BrgemmDataType dt, int64_t s, const std::vector<Isa>& isas,
             Isa chosen, const microkernels::GemmBlocking& blocking) {
  const int64_t es = microkernels::InputElementSize(dt);
  Buffer a(s * s * es), b(s * s * es);
  Buffer c_hgc(s * s * 4), c_dnnl(s * s * 4);
  FillInputs(dt, a.data(), s * s, 3);
  FillInputs(dt, b.data(), s * s, 4);
  auto dnnl = OnednnMatmul::Create(dt, s, s, s, b.data());
  if (!dnnl.ok()) {
    std::printf("oneDNN failed: %s\n",
                std::string(dnnl.status().message()).c_str());
    return;
  }
  OnednnMatmul* dn = dnnl->get();
  struct Way {
    Isa isa;
    std::unique_ptr<microkernels::BrgemmGemm> gemm;
    std::unique_ptr<Buffer> packed;
    std::function<void()> run;
    int64_t calls = 0;
    std::vector<double> gops, ratio;
  };
  std::vector<Way> ways;
  for (Isa isa : isas) {
    auto gemm = microkernels::BrgemmGemm::Create(isa, dt, s, s, s, blocking);
    if (!gemm.ok()) {
      std::printf("hgc gemm failed: %s\n",
                  std::string(gemm.status().message()).c_str());
      continue;
    }
    Way w;
    w.isa = isa;
    w.gemm = std::move(*gemm);
    w.packed = std::make_unique<Buffer>(w.gemm->packed_b_bytes());
    if (!w.gemm->PackB(b.data(), s, w.packed->data()).ok()) continue;
    ways.push_back(std::move(w));
  }
  const double ops = 2.0 * s * s * s;
  const std::function<void()> run_dnnl = [&] { dn->Run(a.data(), c_dnnl.data()); };
  const int64_t calls_dnnl = CallsFor(run_dnnl, 0.02);
  for (Way& w : ways) {
    const microkernels::BrgemmGemm* g = w.gemm.get();
    const char* packed = w.packed->data();
    w.run = [&a, &c_hgc, g, packed] { g->Run(a.data(), packed, c_hgc.data()); };
    w.calls = CallsFor(w.run, 0.02);
  }
  std::vector<double> dnnl_gops;
  for (int rep = 0; rep < 9; ++rep) {
    const double d = ops / SecondsPerCall(run_dnnl, calls_dnnl) * 1e-9;
    dnnl_gops.push_back(d);
    for (Way& w : ways) {
      w.gops.push_back(ops / SecondsPerCall(w.run, w.calls) * 1e-9);
      w.ratio.push_back(w.gops.back() / d);
    }
  }
  for (Way& w : ways) {
    w.run();  // the last output, for the comparison
    std::printf("%-6s %-16s %5ld %10.1f %10.1f %7.2fx %9.2g  %s%s\n",
                microkernels::DataTypeName(dt),
                std::string(IsaName(w.isa)).c_str(), static_cast<long>(s),
                Median(w.gops), Median(dnnl_gops), Median(w.ratio),
                MaxRelDiff(dt, c_hgc.data(), c_dnnl.data(), s * s),
                dn->impl().c_str(), w.isa == chosen ? "" : "  (not picked)");
  }
}

void GemmTable(const Filter& filter) {
  std::printf("\n== Single-threaded GEMM C = A * B: hgc kernels vs oneDNN 2.6 "
              "matmul (weights prepacked / reordered outside the timing; "
              "samples interleaved, ratio = median of per-round ratios) ==\n");
  std::printf("%-6s %-16s %5s %10s %10s %8s %9s  %s\n", "dtype", "hgc isa",
              "size", "hgc G/s", "oneDNN G/s", "hgc/dnnl", "max diff",
              "oneDNN impl");
  const BrgemmDataType dtypes[] = {BrgemmDataType::kF32, BrgemmDataType::kBf16,
                                   BrgemmDataType::kU8S8,
                                   BrgemmDataType::kS8S8};
  for (BrgemmDataType dt : dtypes) {
    if (!filter.Wants(dt)) continue;
    std::vector<Isa> isas;
    auto chosen = microkernels::SelectBrgemmIsa(dt);
    if (!chosen.ok()) {
      std::printf("%-6s skipped: %s\n", microkernels::DataTypeName(dt),
                  std::string(chosen.status().message()).c_str());
      continue;
    }
    isas.push_back(*chosen);
    // Show both AVX-512 bf16 ways beside the dispatcher's pick.
    if (dt == BrgemmDataType::kBf16) {
      for (Isa alt : {Isa::kAvx512Core, Isa::kAvx512CoreBf16}) {
        if (alt != *chosen && IsaAvailable(alt)) isas.push_back(alt);
      }
    }
    std::vector<int64_t> sizes = {256, 512, 1024};
    if (filter.size > 0) sizes = {filter.size};
    for (int64_t s : sizes) GemmRow(dt, s, isas, *chosen, filter.blocking);
  }
}

int Main(int argc, char** argv) {
  Filter filter;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--only=kernels") filter.gemm = false;
    if (arg == "--only=gemm") filter.kernels = false;
    if (arg.rfind("--dtype=", 0) == 0) filter.dtype = arg.substr(8);
    if (arg.rfind("--size=", 0) == 0) filter.size = std::atol(arg.c_str() + 7);
    if (arg.rfind("--blocking=", 0) == 0) {
      long nb = 0, kb = 0, mb = 0;
      int pack_a = -1;
      std::sscanf(arg.c_str() + 11, "%ld,%ld,%ld,%d", &nb, &kb, &mb, &pack_a);
      filter.blocking = {nb, kb, mb, pack_a};
    }
  }
  // One core, one thread: pin the process to the core it starts on (the
  // scheduler's idle pick) and tell oneDNN's OpenMP runtime.
  const int cpu = std::max(0, sched_getcpu());
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  const bool pinned = sched_setaffinity(0, sizeof(one), &one) == 0;
  omp_set_num_threads(1);
  CapOnednnIsa(MaxIsa());
  std::printf("hgc microkernel benchmark: %s; 1 thread%s; oneDNN via "
              "omp_set_num_threads(1)\n",
              DescribeCpu().c_str(),
              pinned ? absl::StrFormat(", pinned to CPU %d", cpu).c_str() : "");
  std::printf("\n== Instruction peaks (this core, this run) ==\n");
  for (PeakInstruction p :
       {PeakInstruction::kVfmadd231ps, PeakInstruction::kVfmadd231psYmm,
        PeakInstruction::kVpmaddwdYmm, PeakInstruction::kVdpbf16ps,
        PeakInstruction::kVpdpbusd, PeakInstruction::kTdpbf16ps,
        PeakInstruction::kTdpbusd}) {
    auto g = MeasurePeakGops(p);
    if (!g.ok()) {
      std::printf("%-19s skipped: %s\n", PeakInstructionName(p),
                  std::string(g.status().message()).c_str());
      continue;
    }
    // For vpmaddwd+vpaddd/ymm an "instruction" is the pair.
    std::printf("%-19s %9.1f G(FL)OP/s  (%.2f instructions/ns)\n",
                PeakInstructionName(p), *g, *g / OpsPerInstruction(p));
  }
  auto cal = microkernels::CalibrateBf16();
  if (cal.ok()) std::printf("%s\n", cal->ToString().c_str());
  if (filter.kernels) KernelTable(filter);
  if (filter.gemm) GemmTable(filter);
  return 0;
}

}  // namespace
}  // namespace bench
}  // namespace hgc

int main(int argc, char** argv) { return hgc::bench::Main(argc, argv); }
