// The row programs of an attention plan (attention_plan.h): the ops on Q,
// the score ops and the prob ops, each an elementwise program that a
// RowMap runs over a row of a tile (or of Q itself).
#ifndef HGC_CODEGEN_ATTENTION_PROGRAMS_H_
#define HGC_CODEGEN_ATTENTION_PROGRAMS_H_

#include "absl/status/status.h"
#include "analysis/attention_match.h"
#include "codegen/attention_plan.h"
#include "codegen/lower_state.h"
#include "codegen/tile_ir.h"
#include "ir/graph.h"

namespace hgc {
namespace codegen {

// Whether the prob ops only cast to f32 a value the tile already holds in
// f32, which changes nothing. Any other prob op (a round trip through
// bf16 / f16, say) rounds P, so it must see the normalized P the
// reference rounds.
bool ProbOpsWidenOnly(const AttentionMatch& m);

// The scale on Q, run on each Q row (row 0 of its program): its other
// operands must be scalars, the same for every row. None on the int8
// path, which folds its Q scales into the scores' scale.
absl::Status AddQProgram(LowerState& state, const Op& op, tile::Nest& nest,
                         AttentionPlan& p);

// The score ops' program, unless Q·Kᵀ's kernel runs them, and the prob
// ops' program, unless they only widen (or the int8 path quantizes P).
absl::Status AddScoreAndProbPrograms(LowerState& state, const Op& op,
                                     tile::Nest& nest, AttentionPlan& p);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_ATTENTION_PROGRAMS_H_
