// The BRGEMM kernels of an attention plan: Q·Kᵀ's and P·V's descriptors
// for each (M tail, N tail) pair, and which score ops Q·Kᵀ's kernel runs
// itself as it stores the score tile (AttentionPlan::kernel_scores).
#ifndef HGC_CODEGEN_ATTENTION_KERNELS_H_
#define HGC_CODEGEN_ATTENTION_KERNELS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen/attention_plan.h"
#include "codegen/lower_state.h"
#include "codegen/tile_ir.h"
#include "ir/graph.h"
#include "microkernels/brgemm_desc.h"
#include "support/cpu_features.h"

namespace hgc {
namespace codegen {

// Plans the score ops into Q·Kᵀ's kernel when they are ones it runs (see
// the definition); otherwise leaves the plan's score pass to them.
absl::Status PlanKernelScores(LowerState& state, const Op& op, tile::Nest& nest,
                              AttentionPlan& p);

// Generates (or takes from the kernel cache) Q·Kᵀ's and P·V's kernels for
// the plan's blocks and tails, and records them in `nest` and `p`.
absl::Status AddKernels(tile::Nest& nest, AttentionPlan& p);

// The row strides of the operands the int8 and bf16 paths pack: Q's rows
// (A of Q·Kᵀ), Kᵀ's packed rows, P's rows (A of P·V) and V's packed rows.
struct PackedStrides {
  int64_t q = 0, kt = 0, p = 0, v = 0;
};

// Q·Kᵀ's and P·V's kernels of `dtype` on family `isa` with all the keys in
// one block, for a whole query block and for the query tail (in that
// order: qk, pv, qk tail, pv tail), from the kernel cache.
absl::StatusOr<std::vector<tile::Kernel>> OneKeyBlockKernels(
    const AttentionPlan& p, Isa isa, microkernels::BrgemmDataType dtype,
    const PackedStrides& ld);

// Records `kernels` (OneKeyBlockKernels' order) in `nest` and `p`.
void AddOneKeyBlockKernels(tile::Nest& nest, AttentionPlan& p,
                           std::vector<tile::Kernel> kernels);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_ATTENTION_KERNELS_H_
