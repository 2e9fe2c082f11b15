#include "codegen/lower_elementwise.h"

#include <string>
#include <utility>
#include <vector>

#include "codegen/llvm/elemental_emitter.h"
#include "codegen/nest_buffers.h"
#include "codegen/tile_builder.h"
#include "codegen/tile_ir.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {

absl::StatusOr<std::optional<tile::Nest>> LowerElementwise(LowerState& state,
                                                           const Op& op,
                                                           int num_threads) {
  std::vector<const Op*> ops;
  std::vector<const Value*> params;
  const Value* result = op.result();
  const Value* body_result = result;
  if (op.kind_id() == OpKind::kFusion) {
    const Graph* body = FusionBody(op);
    if (body == nullptr || body->results().size() != 1) {
      return absl::UnimplementedError("fusion without a body");
    }
    for (const auto& o : body->ops()) ops.push_back(o.get());
    for (const auto& p : body->params()) params.push_back(p.get());
    body_result = body->results()[0];
  } else {
    ops.push_back(&op);
    for (const Value* v : op.operands()) params.push_back(v);
  }
  if (body_result->type() != result->type()) {
    return absl::UnimplementedError("body result type differs");
  }
  if (result->type().NumElements() == 0) {
    return std::nullopt;  // nothing to compute: no step
  }
  tile::Nest nest(state.StepName("elementwise"));
  std::vector<int> param_buffers;
  for (const Value* v : op.operands()) {
    param_buffers.push_back(nest.FrameIndex(ValueBuffer(state, nest, v)));
  }
  const int out = nest.FrameIndex(ValueBuffer(state, nest, result));
  // A rank-0 result is a row of one element (every operand is rank 0,
  // so it broadcasts with stride 0).
  const Shape shape =
      result->type().shape.empty() ? Shape{1} : result->type().shape;
  RowProgram program;
  HGC_RETURN_IF_ERROR(BuildRowProgram(ops, params, param_buffers, shape,
                                      body_result, out, program,
                                      NestConstantBinder(nest)));
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
  const int body = nest.AddProgram(std::move(program), "body");
  // Work items are row chunks: whole rows when there are enough rows to go
  // around, else rows cut into vector-aligned chunks so that every thread
  // gets a share of a long 1-D output.
  const int64_t cols = shape.back();
  int64_t chunk = cols;
  if (rows < 2 * num_threads && cols > 2 * kVectorWidth) {
    int64_t pieces = (2 * num_threads + rows - 1) / rows;
    chunk = (cols + pieces - 1) / pieces;
    chunk = (chunk + kVectorWidth - 1) / kVectorWidth * kVectorWidth;
  }
  const int64_t per_row = (cols + chunk - 1) / chunk;
  tile::NestBuilder nb(nest);
  nb.For("item", 0, rows * per_row, true, [&](tile::Expr item) {
    tile::RowMap map;
    map.program = body;
    map.row = nb.Let("row", item / per_row);
    map.col_begin = nb.Let("col", item % per_row * chunk);
    map.col_end = tile::Min(map.col_begin + chunk, cols);
    nb.Append(tile::Stmt{std::move(map)});
  });
  return std::optional<tile::Nest>(std::move(nest));
}

}  // namespace codegen
}  // namespace hgc
