// AVX2 BRGEMM for one row of A against a transposed f32 B
// (BLayout::kTransposed: N rows of K, B[k][n] at n * ldb + k): each output
// is a dot product along K. A decoder step's Q·Kᵀ has this shape (one query
// row, K as keys x head), and the kernel reads K's rows as they are stored,
// in order, where the tile kernels (brgemm_avx2.h) need Kᵀ copied first.
//
// For each group of 8 columns of C (8 rows of B), 8 accumulators of 8
// lanes each sum A[k .. k + 7] * B[n + j][k .. k + 7] over K (the K tail
// under a lane mask) and over the batch; a tree of vhaddps and one
// vperm2f128 pair then folds them into the group's 8 sums, one per lane.
// beta 1 adds C's old values, then the post-ops apply as in every f32
// kernel (scale, bias, or one fma for both), and the group is stored (the
// N tail under a lane mask: no byte past C's row is read or written).
#ifndef HGC_MICROKERNELS_BRGEMM_AVX2_DOT_H_
#define HGC_MICROKERNELS_BRGEMM_AVX2_DOT_H_

#include "absl/status/status.h"
#include "microkernels/brgemm_desc.h"
#include "microkernels/jit_generator.h"

namespace hgc {
namespace microkernels {

class BrgemmAvx2Dot : public JitGenerator {
 public:
  // `desc` must have passed ValidateBrgemmDesc with isa kAvx2, f32, M = 1
  // and b_layout kTransposed.
  explicit BrgemmAvx2Dot(const BrgemmDesc& desc);

 protected:
  absl::Status Generate() override;

 private:
  // One group of `keys` (1..8) columns of C at reg_c_, its B rows at
  // reg_b_group_.
  void EmitGroup(int keys);
  // The batch loop of one group: accumulators 0..keys-1 summed over K.
  void EmitBatchLoop(int keys);
  void EmitDotProducts(int keys);
  // ymm0 = the 8 sums of accumulators 0..7 (lane j: accumulator j's).
  void FoldAccumulators();

  const BrgemmDesc desc_;

  // General-purpose registers (System V; rdi carries the arguments).
  const Xbyak::Reg64 reg_args_ = Xbyak::util::rdi;
  const Xbyak::Reg64 reg_c_ = Xbyak::util::rsi;        // C at the group
  const Xbyak::Reg64 reg_b_group_ = Xbyak::util::rdx;  // B at the group
  const Xbyak::Reg64 reg_groups_ = Xbyak::util::rcx;   // whole groups left
  const Xbyak::Reg64 reg_a_ = Xbyak::util::r8;         // A in the K loop
  const Xbyak::Reg64 reg_b_ = Xbyak::util::r9;         // B in the K loop
  const Xbyak::Reg64 reg_k_ = Xbyak::util::r10;        // K trips left
  const Xbyak::Reg64 reg_batch_ = Xbyak::util::r11;    // batch left
  const Xbyak::Reg64 reg_iter_a_ = Xbyak::util::rax;   // batch: this A
  const Xbyak::Reg64 reg_iter_b_ = Xbyak::util::rbx;   // batch: this B
  const Xbyak::Reg64 reg_bias_ = Xbyak::util::r12;     // bias at the group
  const Xbyak::Reg64 reg_tmp_ = Xbyak::util::r13;
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_AVX2_DOT_H_
