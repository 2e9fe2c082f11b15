#include "codegen/lower_rowwise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "codegen/llvm/elemental_emitter.h"
#include "codegen/lower_elementwise.h"
#include "codegen/tile_emitter.h"
#include "codegen/tile_ir.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

// The normalized `axis` attribute (default -1).
int64_t Axis(const Op& op, int64_t rank) {
  const Attribute* a = op.FindAttr("axis");
  int64_t axis = a != nullptr && a->is_int() ? a->as_int() : -1;
  return axis < 0 ? axis + rank : axis;
}

// A row group's ops around its row op, checked for what the lowering
// takes.
struct RowGroup {
  const Op* row_op = nullptr;
  std::vector<const Op*> pre, post;  // producers, consumers
  int64_t len = 0, rows = 1;
  bool is_reduce = false;
};

absl::StatusOr<RowGroup> SplitRowGroup(const Op& op) {
  const Graph* body = FusionBody(op);
  if (body == nullptr || body->results().size() != 1) {
    return absl::UnimplementedError("no body");
  }
  RowGroup g;
  const Op*& row_op = g.row_op;
  std::vector<const Op*>& pre = g.pre;
  std::vector<const Op*>& post = g.post;
  for (const auto& o : body->ops()) {
    if (o->kind_id() == OpKind::kConstant) continue;
    if (IsRowOp(o->kind_id())) {
      if (row_op != nullptr) return absl::UnimplementedError("two row ops");
      row_op = o.get();
    } else if (IsElementalOp(o->kind_id())) {
      (row_op == nullptr ? pre : post).push_back(o.get());
    } else {
      return absl::UnimplementedError("non-elementwise op in a row group");
    }
  }
  if (row_op == nullptr) return absl::UnimplementedError("no row op");
  const OpKind kind = row_op->kind_id();
  const Value* x = row_op->operand(0);
  const Shape& shape = x->type().shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  // The row op writes f32 into the group's output buffer, which the
  // consumers then rewrite in place: that output must be f32 too.
  if (rank == 0 || x->type().NumElements() == 0 ||
      x->type().dtype != DType::kF32 ||
      row_op->result()->type().dtype != DType::kF32 ||
      op.result()->type().dtype != DType::kF32) {
    return absl::UnimplementedError("row op on a non-f32 or scalar value");
  }
  const bool is_reduce = IsReduction(kind);
  if (is_reduce) {
    const Attribute* axes = row_op->FindAttr("axes");
    std::vector<int64_t> list;
    if (axes == nullptr) {
      for (int64_t d = 0; d < rank; ++d) list.push_back(d);
    } else {
      list = axes->as_int_list();
      for (int64_t& a : list) a = a < 0 ? a + rank : a;
    }
    // Reducing only the last dim (or everything for rank 1).
    if (list.size() != 1 || list[0] != rank - 1 || !post.empty()) {
      return absl::UnimplementedError("reduce over other axes");
    }
  } else if (Axis(*row_op, rank) != rank - 1) {
    return absl::UnimplementedError("row op over another axis");
  }
  const Value* last = post.empty() ? row_op->result() : post.back()->result();
  if (body->results()[0] != last || last->type() != op.result()->type()) {
    return absl::UnimplementedError("group result is not the row op's");
  }
  for (const Op* p : post) {
    if (p->result()->type().shape != shape) {
      return absl::UnimplementedError("consumer changes the shape");
    }
  }
  g.len = shape.back();
  for (int64_t d = 0; d + 1 < rank; ++d) g.rows *= shape[d];
  g.is_reduce = is_reduce;
  return g;
}

}  // namespace

absl::Status LowerRowwise(LowerState& state, const Op& op) {
  HGC_ASSIGN_OR_RETURN(RowGroup g, SplitRowGroup(op));
  const Op* row_op = g.row_op;
  const std::vector<const Op*>& pre = g.pre;
  const std::vector<const Op*>& post = g.post;
  const OpKind kind = row_op->kind_id();
  const Value* x = row_op->operand(0);
  const Shape& shape = x->type().shape;
  const Value* last = post.empty() ? row_op->result() : post.back()->result();
  const int64_t len = g.len, rows = g.rows;
  const bool is_reduce = g.is_reduce;
  tile::Nest nest(state.StepName(row_op->kind()));
  auto param_buffer = [&](const Value* p) {
    const Value* v = op.operand(p->index());
    return nest.AddFrameBuffer(state.refs.at(v), v->name(),
                               v->type().ToString());
  };
  const int out =
      nest.AddFrameBuffer(state.refs.at(op.result()), op.result()->name(),
                          op.result()->type().ToString());
  const ConstantBinder constants = NestConstantBinder(state, nest);
  // Producers into a per-thread scratch row, unless x is an operand.
  int pre_program = -1;
  int x_buffer = -1;
  if (x->is_param()) {
    x_buffer = param_buffer(x);
  } else {
    std::vector<const Value*> params;
    std::vector<const Op*> ops;
    CollectInputs(pre, params, ops);
    std::vector<int> pbuf;
    for (const Value* p : params) {
      pbuf.push_back(nest.FrameIndex(param_buffer(p)));
    }
    ops.insert(ops.end(), pre.begin(), pre.end());
    RowProgram program;
    HGC_RETURN_IF_ERROR(
        BuildRowProgram(ops, params, pbuf, shape, x, -1, program, constants));
    pre_program = nest.AddProgram(std::move(program), "pre");
    x_buffer = nest.AddPerThread(state.AllocArena(state.num_threads * len * 4),
                                 len * 4, "x_row", "f32 row of the producers");
  }
  int gamma = -1, beta = -1;
  if (kind == OpKind::kLayernorm) {
    for (int i = 1; i <= 2; ++i) {
      const Value* g = row_op->operand(i);
      if (!g->is_param() || g->type().shape != Shape{len}) {
        return absl::UnimplementedError("computed gamma/beta");
      }
    }
    gamma = param_buffer(row_op->operand(1));
    beta = param_buffer(row_op->operand(2));
  }
  int post_program = -1;
  if (!post.empty()) {
    std::vector<const Value*> params;
    std::vector<const Op*> ops;
    CollectInputs(post, params, ops);
    std::vector<int> pbuf;
    for (const Value* p : params) {
      pbuf.push_back(nest.FrameIndex(param_buffer(p)));
    }
    ops.insert(ops.end(), post.begin(), post.end());
    RowProgram program;
    HGC_RETURN_IF_ERROR(BuildRowProgram(ops, params, pbuf, shape, last,
                                        nest.FrameIndex(out), program,
                                        constants));
    RowInput y;
    y.value = row_op->result();
    y.buffer = nest.FrameIndex(out);
    HGC_ASSIGN_OR_RETURN(y.strides, BroadcastStrides(shape, shape));
    program.inputs.push_back(std::move(y));
    post_program = nest.AddProgram(std::move(program), "post");
  }
  // Row statistics on the stack: f32 max and sum, or the f32 mean and the
  // variance as a double (bytes 8 to 15).
  const bool layernorm = kind == OpKind::kLayernorm;
  const int stats = layernorm
                        ? nest.AddLocal(16, "stats", "f32 mean, f64 variance")
                        : nest.AddLocal(8, "stats", "two f32 row statistics");
  const tile::View first{stats, 0, 4};
  const tile::View second{stats, 1, layernorm ? 8 : 4};
  tile::NestBuilder nb(nest);
  nb.For("row", 0, rows, true, [&](tile::Expr row) {
    tile::View xrow{x_buffer, x->is_param() ? row * len : tile::Expr(0), 4};
    if (pre_program >= 0) {
      nb.Append(
          tile::Stmt{tile::RowMap{pre_program, row, 0, len, xrow, {}, {}}});
    }
    tile::View orow{out, is_reduce ? row : row * len, 4};
    if (kind == OpKind::kSoftmax) {
      tile::RowReduce max;
      max.op = tile::RowReduce::Op::kSoftmaxMax;
      max.src = xrow;
      max.len = len;
      max.acc = first;
      nb.Append(tile::Stmt{std::move(max)});
      nb.Append(tile::Stmt{tile::Fill{second, 1, 0.0f}});
      nb.Append(tile::Stmt{tile::RowExp{xrow, orow, len, first, second}});
      nb.Append(tile::Stmt{tile::RowScale{
          orow, orow, len, second, true, false, {}, DType::kF32}});
    } else if (kind == OpKind::kLayernorm) {
      const Attribute* eps_attr = row_op->FindAttr("epsilon");
      const double eps = eps_attr != nullptr && eps_attr->is_number()
                             ? eps_attr->as_number()
                             : 1e-5;
      // Two passes over x - x[0]: the mean of a constant row is then
      // exactly 0 and its variance 0, whatever f32 rounds its sum to.
      nb.Append(tile::Stmt{tile::RowReduce{
          tile::RowReduce::Op::kMean, xrow, len, first, false, {}, true}});
      nb.Append(
          tile::Stmt{tile::RowReduce{tile::RowReduce::Op::kMeanSquaredDeviation,
                                     xrow, len, second, false, first, true}});
      nb.Append(tile::Stmt{tile::RowNormalize{
          xrow, orow, len, first, second, static_cast<float>(eps),
          tile::View{gamma, 0, 4}, tile::View{beta, 0, 4}, true}});
    } else {
      const auto reduce = kind == OpKind::kReduceMax ? tile::RowReduce::Op::kMax
                          : kind == OpKind::kReduceSum
                              ? tile::RowReduce::Op::kSum
                              : tile::RowReduce::Op::kMean;
      nb.Append(tile::Stmt{
          tile::RowReduce{reduce, xrow, len, orow, false, {}, false}});
    }
    if (post_program >= 0) {
      nb.Append(
          tile::Stmt{tile::RowMap{post_program, row, 0, len, {}, {}, {}}});
    }
  });
  return EmitNest(state, nest);
}

}  // namespace codegen
}  // namespace hgc
