// The BRGEMM kernels of an attention plan: Q·Kᵀ's and P·V's descriptors
// for each (M tail, N tail) pair, and which score ops Q·Kᵀ's kernel runs
// itself as it stores the score tile (AttentionPlan::kernel_scores).
#ifndef HGC_CODEGEN_ATTENTION_KERNELS_H_
#define HGC_CODEGEN_ATTENTION_KERNELS_H_

#include "absl/status/status.h"
#include "codegen/attention_plan.h"
#include "codegen/lower_state.h"
#include "codegen/tile_ir.h"
#include "ir/graph.h"

namespace hgc {
namespace codegen {

// Plans the score ops into Q·Kᵀ's kernel when they are ones it runs (see
// the definition); otherwise leaves the plan's score pass to them.
absl::Status PlanKernelScores(LowerState& state, const Op& op, tile::Nest& nest,
                              AttentionPlan& p);

// Generates (or takes from the kernel cache) Q·Kᵀ's and P·V's kernels for
// the plan's blocks and tails, and records them in `nest` and `p`.
absl::Status AddKernels(tile::Nest& nest, AttentionPlan& p);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_ATTENTION_KERNELS_H_
