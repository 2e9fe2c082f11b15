#include "codegen/attention_programs.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "codegen/nest_buffers.h"
#include "codegen/row_program.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

// An elementwise program over `shape` whose input `tile_value` comes from
// the RowMap's in_row and whose other inputs are group operands; it writes
// f32 (a bf16 / f16 result rounded, in an f32 tile). The in_row is an f32
// tile (`from_tile`, a bf16 / f16 value held rounded in it) or a row of
// the operand itself. A `matmul_operand` result is stored as the matmul
// reads it.
absl::StatusOr<int> AddTileProgram(LowerState& state, tile::Nest& nest,
                                   const Op& op,
                                   const std::vector<const Op*>& chain,
                                   const Value* tile_value, bool from_tile,
                                   bool matmul_operand,
                                   const std::string& name) {
  const Shape& shape = chain.back()->result()->type().shape;
  for (const Op* x : chain) {
    if (x->result()->type().shape != shape) {
      return absl::UnimplementedError("a broadcasting op in the chain");
    }
  }
  std::vector<const Value*> params;
  std::vector<const Op*> ops;
  CollectInputs(chain, params, ops);
  std::vector<int> buffers;
  for (const Value* p : params) {
    buffers.push_back(
        nest.FrameIndex(ValueBuffer(state, nest, op.operand(p->index()))));
  }
  ops.insert(ops.end(), chain.begin(), chain.end());
  RowProgram program;
  HGC_RETURN_IF_ERROR(BuildRowProgram(ops, params, buffers, shape,
                                      chain.back()->result(), -1, program));
  if (tile_value->type().shape != shape) {
    return absl::UnimplementedError("the tile value is broadcast");
  }
  // Tiles hold f32: a bf16 / f16 value is kept rounded in an f32. A bf16
  // result that is a matmul operand (Q, P) is kept as the matmul reads it.
  program.result_in_f32 = true;
  program.result_denormals_as_zero =
      matmul_operand && chain.back()->result()->type().dtype == DType::kBF16;
  RowInput in;
  in.value = tile_value;
  in.from_in_row = true;
  in.rounded_from_f32 = from_tile && tile_value->type().dtype != DType::kF32;
  HGC_ASSIGN_OR_RETURN(in.strides, BroadcastStrides(shape, shape));
  // The in_row is a row of the values the program runs along, whatever the
  // chain's last dim: a Q stored [D, S] has S last (1 for one query, where
  // the broadcast strides would read the row as a splat of its element 0).
  if (!in.strides.empty()) in.strides.back() = 1;
  program.inputs.push_back(std::move(in));
  return nest.AddProgram(std::move(program), name);
}

}  // namespace

bool ProbOpsWidenOnly(const AttentionMatch& m) {
  return std::all_of(m.prob_ops.begin(), m.prob_ops.end(), [](const Op* x) {
    return x->kind_id() == OpKind::kCast &&
           x->result()->type().dtype == DType::kF32;
  });
}

absl::Status AddQProgram(LowerState& state, const Op& op, tile::Nest& nest,
                         AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  // The int8 path folds its Q ops (scales) into the scores' scale.
  if (m.q_ops.empty() || p.int8) return absl::OkStatus();
  const Value* q_value = nullptr;
  for (const Value* x : m.q_ops.front()->operands()) {
    if (x->type().NumElements() != 1) q_value = x;
  }
  for (const Op* q_op : m.q_ops) {
    for (const Value* x : q_op->operands()) {
      if (x != q_value && x->type().NumElements() != 1 &&
          (x->is_param() || x->defining_op()->kind_id() == OpKind::kConstant)) {
        return absl::UnimplementedError("a tensor operand in the Q ops");
      }
    }
  }
  if (q_value == nullptr) return absl::UnimplementedError("a scalar Q");
  // Q rows that are not contiguous reach the ops gathered into f32
  // scratch rows (a bf16 / f16 Q exact in them), like a tile, and so do
  // u8 / s8 ones, dequantized.
  HGC_ASSIGN_OR_RETURN(
      p.q_program,
      AddTileProgram(state, nest, op, m.q_ops, q_value,
                     /*from_tile=*/m.q.strides[3] != 1 || IsInteger(p.q_type),
                     /*matmul_operand=*/true, "q_ops"));
  return absl::OkStatus();
}

absl::Status AddScoreAndProbPrograms(LowerState& state, const Op& op,
                                     tile::Nest& nest, AttentionPlan& p) {
  const AttentionMatch& m = p.m;
  if (!p.kernel_scores && !m.score_ops.empty()) {
    HGC_ASSIGN_OR_RETURN(
        p.score_program,
        AddTileProgram(state, nest, op, m.score_ops, m.qk->result(),
                       /*from_tile=*/true, /*matmul_operand=*/false,
                       "score_ops"));
  }
  if (!ProbOpsWidenOnly(m) && !p.int8) {  // the int8 path quantizes P itself
    HGC_ASSIGN_OR_RETURN(
        p.prob_program,
        AddTileProgram(state, nest, op, m.prob_ops, m.softmax->result(),
                       /*from_tile=*/true, /*matmul_operand=*/true,
                       "prob_ops"));
  }
  return absl::OkStatus();
}

}  // namespace codegen
}  // namespace hgc
