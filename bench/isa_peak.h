// Measured per-core peak of the instructions the microkernels are built on.
//
// Each measurement runs a JIT loop of one instruction over 24 independent
// accumulators (12 for the YMM forms, which have 16 registers; enough to
// cover latency x ports on any current core) in the calling thread, so the
// benchmark's "% of peak" compares kernels with what this core actually
// sustains at this moment, clock and license included.
#ifndef HGC_BENCH_ISA_PEAK_H_
#define HGC_BENCH_ISA_PEAK_H_

#include <memory>

#include "absl/status/statusor.h"
#include "support/cpu_features.h"

namespace hgc {
namespace bench {

enum class PeakInstruction {
  kVfmadd231ps,     // f32: 32 flops (16 lanes x mul + add)
  kVfmadd231psYmm,  // f32 on AVX2: 16 flops (8 lanes), 12 accumulators
  kVpmaddwdYmm,     // exact int8 on AVX2 (brgemm_avx2_int8.cc): vpmaddwd
                    // ymm (16 s16 products summed in pairs into 8 s32
                    // lanes) + vpaddd into the accumulator, counted as one
                    // "instruction" of 32 ops (16 multiply-adds); 12
                    // accumulators
  kVdpbf16ps,       // bf16: 64 flops
  kVpdpbusd,        // int8: 128 ops
  kTdpbf16ps,       // AMX bf16: 16 x 16 x 32 x 2 = 16384 flops
  kTdpbusd,         // AMX int8: 16 x 16 x 64 x 2 = 32768 ops
};

const char* PeakInstructionName(PeakInstruction instr);
// The ISA family the instruction needs.
Isa PeakInstructionIsa(PeakInstruction instr);
// Floating-point (or integer) operations one instruction (for kVpmaddwdYmm,
// one vpmaddwd + vpaddd pair) performs.
double OpsPerInstruction(PeakInstruction instr);
// The f32 FMA the microkernels use here: the ZMM form where AVX-512 is
// available (under the cap), else the YMM form.
PeakInstruction F32PeakInstruction();

// A generated throughput loop of one instruction, timed on demand so that
// peaks can be sampled right beside the kernels they are compared with (on a
// shared machine the available throughput drifts).
class PeakMeter {
 public:
  // FailedPrecondition when the ISA is missing (or capped).
  static absl::StatusOr<std::unique_ptr<PeakMeter>> Create(
      PeakInstruction instr);
  ~PeakMeter();
  // GFLOP/s (GOP/s) of one timed run of about `seconds`.
  double Sample(double seconds = 0.01);

 private:
  PeakMeter() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Seconds of CPU time this thread has used (CLOCK_THREAD_CPUTIME_ID). Every
// figure of the benchmark is timed with it: on a machine shared with other
// work, time the thread spends descheduled is not counted, while the cost of
// refilling caches that others disturbed still is.
double ThreadSeconds();

// The median of 5 Sample(0.03) runs.
absl::StatusOr<double> MeasurePeakGops(PeakInstruction instr);

}  // namespace bench
}  // namespace hgc

#endif  // HGC_BENCH_ISA_PEAK_H_
