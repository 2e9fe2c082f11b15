// The oneDNN 2.6 baseline: one matmul primitive C = A * B.
//
// Weights use format_tag::any, and B is reordered into the primitive's
// preferred layout at creation, outside any timed loop (the same treatment
// hgc's prepacked weights get). Threads are whatever the process gives
// oneDNN's OpenMP runtime; the benchmark sets one.
#ifndef HGC_BENCH_ONEDNN_MATMUL_H_
#define HGC_BENCH_ONEDNN_MATMUL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "microkernels/brgemm_desc.h"

namespace hgc {
namespace bench {

class OnednnMatmul {
 public:
  // A is M x K and B is K x N, row-major, of `dtype`'s input types (bf16 as
  // uint16 bits); C is f32 (f32, bf16) or s32 (int8). B is copied and
  // reordered now. Internal with oneDNN's message on failure.
  static absl::StatusOr<std::unique_ptr<OnednnMatmul>> Create(
      microkernels::BrgemmDataType dtype, int64_t m, int64_t n, int64_t k,
      const void* b);
  ~OnednnMatmul();

  // Runs the primitive on `a` into `c` (both caller-owned).
  void Run(const void* a, void* c);
  // oneDNN's implementation name, e.g. "brg:avx512_core_amx".
  const std::string& impl() const;

 private:
  struct State;
  explicit OnednnMatmul(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Caps oneDNN's ISA to match hgc's cap (cpu_features.h); call before the
// first primitive. Ignored when oneDNN refuses (it was already used).
void CapOnednnIsa(Isa isa);

}  // namespace bench
}  // namespace hgc

#endif  // HGC_BENCH_ONEDNN_MATMUL_H_
