#include "codegen/lower_rowwise.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/llvm/elemental_emitter.h"
#include "codegen/nest_buffers.h"
#include "codegen/row_program.h"
#include "codegen/tile_builder.h"
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

// Float types a row op takes (computing in f32).
bool IsFloatRow(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kBF16 || dtype == DType::kF16;
}

// A row group's ops around its row op, checked for what the lowering
// takes.
struct RowGroup {
  const Op* row_op = nullptr;
  std::vector<const Op*> pre, post;  // producers, consumers
  int64_t len = 0, rows = 1;
  // Rows of the group's own shape (of shape.back() elements) in one row of
  // the row op (len elements): the producers and consumers run on those.
  int64_t sub_rows = 1;
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
  // The row op computes in f32; a bf16 / f16 row is widened on its way in
  // and its result rounded on the way out (one rounding, as the op's).
  if (rank == 0 || x->type().NumElements() == 0 ||
      !IsFloatRow(x->type().dtype) ||
      !IsFloatRow(row_op->result()->type().dtype)) {
    return absl::UnimplementedError(
        "row op on a scalar or a value that is not a float");
  }
  // The first of the trailing dims the row op works over: a row is their
  // contiguous block.
  int64_t first_dim = rank - 1;
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
    std::sort(list.begin(), list.end());
    // Reducing the trailing dims list[0]..rank-1.
    const bool trailing =
        !list.empty() && list.back() == rank - 1 &&
        list.back() - list.front() + 1 == static_cast<int64_t>(list.size());
    if (!trailing) return absl::UnimplementedError("reduce over other axes");
    first_dim = list.front();
  } else if (kind == OpKind::kLayernorm) {
    first_dim = Axis(*row_op, rank);  // normalizes dims axis..end
  } else if (Axis(*row_op, rank) != rank - 1) {
    return absl::UnimplementedError("row op over another axis");
  }
  const Value* last = post.empty() ? row_op->result() : post.back()->result();
  if (body->results()[0] != last || last->type() != op.result()->type()) {
    return absl::UnimplementedError("group result is not the row op's");
  }
  // Consumers run on the row op's result: x's shape, or a reduction's.
  for (const Op* p : post) {
    if (p->result()->type().shape != row_op->result()->type().shape) {
      return absl::UnimplementedError("consumer changes the shape");
    }
  }
  g.len = 1;
  for (int64_t d = first_dim; d < rank; ++d) g.len *= shape[d];
  for (int64_t d = 0; d < first_dim; ++d) g.rows *= shape[d];
  g.sub_rows = g.len / shape.back();
  g.is_reduce = is_reduce;
  return g;
}

// Where the row op's f32 result goes, and how it reaches the output.
//  - in place: into the output (f32, as the row op's result), which the
//    consumers then rewrite in place;
//  - rounded: no consumers, a bf16 / f16 result: the row op's last pass
//    rounds and stores it into the output itself;
//  - through a row: into a per-thread f32 row, which the consumers (or
//    the rounding alone) read on their way to an output of any dtype.
enum class ResultPath { kInPlace, kRounded, kThroughRow };

ResultPath ChooseResultPath(const RowGroup& g, const Op& op) {
  const DType result = g.row_op->result()->type().dtype;
  if (result == DType::kF32 && op.result()->type().dtype == DType::kF32) {
    return ResultPath::kInPlace;
  }
  if (g.post.empty() && !g.is_reduce) return ResultPath::kRounded;
  return ResultPath::kThroughRow;
}

// The frame buffers and programs a row group's nest works with.
struct RowNestParts {
  int x = -1;                 // the row op's f32 input rows
  bool x_is_operand = false;  // x read in place (else a per-thread row)
  int pre_program = -1;       // producers (or widening) into the x row
  int out = -1;
  int y = -1;             // the per-thread result row (kThroughRow)
  int post_program = -1;  // consumers (or rounding) into the output
  int gamma = -1, beta = -1;
  bool exps_in_x = false;  // a rounded softmax's exps in the x row
};

// body(sub_row, at) for each row of the group's own shape in row `row` of
// the row op: its flat index, and its first element's offset in the row.
void ForSubRows(tile::NestBuilder& nb, const RowGroup& g, tile::Expr row,
                const std::function<void(tile::Expr, tile::Expr)>& body) {
  const int64_t width = g.len / g.sub_rows;
  if (g.sub_rows == 1) return body(row, tile::Expr(0));
  nb.For("sub", 0, g.sub_rows, false,
         [&](tile::Expr s) { body(row * g.sub_rows + s, s * width); });
}

// Row `xrow`'s row op statements: the result written to `orow` (f32, or
// out_type for kRounded); `first` and `second` are its two statistics.
void AppendRowOp(tile::NestBuilder& nb, const RowGroup& g, ResultPath path,
                 const RowNestParts& parts, DType out_type,
                 const tile::View& xrow, const tile::View& orow,
                 const tile::View& first, const tile::View& second) {
  const Op* row_op = g.row_op;
  const OpKind kind = row_op->kind_id();
  const int64_t len = g.len;
  if (kind == OpKind::kSoftmax) {
    // Softmax's exps go to the result row; a rounded softmax keeps them in
    // the x row (when that is its own) or in y.
    const tile::View exps = path != ResultPath::kRounded ? orow
                            : parts.exps_in_x            ? xrow
                                              : tile::View{parts.y, 0, 4};
    tile::RowReduce max;
    max.op = tile::RowReduce::Op::kSoftmaxMax;
    max.src = xrow;
    max.len = len;
    max.acc = first;
    nb.Append(tile::Stmt{std::move(max)});
    nb.Append(tile::Stmt{tile::Fill{second, 1, 0.0f}});
    nb.Append(tile::Stmt{tile::RowExp{xrow, exps, len, first, second}});
    tile::RowScale normalize;
    normalize.src = exps;
    normalize.dst = orow;
    normalize.len = len;
    normalize.factor = second;
    normalize.reciprocal = true;
    if (path == ResultPath::kRounded) normalize.dst_type = out_type;
    nb.Append(tile::Stmt{std::move(normalize)});
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
    const DType params_type = row_op->operand(1)->type().dtype;
    const int64_t params_bytes = DTypeSize(params_type);
    tile::RowNormalize normalize{xrow,
                                 orow,
                                 len,
                                 first,
                                 second,
                                 static_cast<float>(eps),
                                 tile::View{parts.gamma, 0, params_bytes},
                                 tile::View{parts.beta, 0, params_bytes},
                                 true,
                                 params_type};
    if (path == ResultPath::kRounded) normalize.dst_type = out_type;
    nb.Append(tile::Stmt{std::move(normalize)});
  } else {
    const auto reduce = kind == OpKind::kReduceMax ? tile::RowReduce::Op::kMax
                        : kind == OpKind::kReduceSum
                            ? tile::RowReduce::Op::kSum
                            : tile::RowReduce::Op::kMean;
    nb.Append(
        tile::Stmt{tile::RowReduce{reduce, xrow, len, orow, false, {}, false}});
  }
}

// What building a rowwise nest's programs needs: the fused op's operands
// as the nest's buffers, and its literals.
struct RowContext {
  LowerState& state;
  const Op& op;
  tile::Nest& nest;
  ConstantBinder constants;

  // The nest buffer of the fused op's operand bound to body param `p`.
  int ParamBuffer(const Value* p) const {
    return ValueBuffer(state, nest, op.operand(p->index()));
  }

  // A program over `space` computing `result` from `body_ops` and the params
  // and literals they read (`extra` params too), into `out_buffer` (-1: the
  // row given to it).
  absl::StatusOr<RowProgram> BuildProgram(
      const std::vector<const Op*>& body_ops, std::vector<const Value*> extra,
      const Shape& space, const Value* result, int out_buffer) const {
    std::vector<const Value*> params = std::move(extra);
    std::vector<const Op*> ops;
    CollectInputs(body_ops, params, ops);
    std::vector<int> pbuf;
    for (const Value* p : params) {
      pbuf.push_back(nest.FrameIndex(ParamBuffer(p)));
    }
    ops.insert(ops.end(), body_ops.begin(), body_ops.end());
    RowProgram program;
    HGC_RETURN_IF_ERROR(BuildRowProgram(ops, params, pbuf, space, result,
                                        out_buffer, program, constants));
    return program;
  }
};

// The row op's input rows: x read in place when it is an f32 operand, else
// a per-thread f32 row that the producers (or the widening of a bf16 / f16
// x) fill. Also layernorm's gamma and beta.
absl::Status AddInputRows(const RowContext& ctx, const RowGroup& g,
                          RowNestParts& parts) {
  const Op* row_op = g.row_op;
  const Value* x = row_op->operand(0);
  parts.x_is_operand = x->is_param() && x->type().dtype == DType::kF32;
  if (parts.x_is_operand) {
    parts.x = ctx.ParamBuffer(x);
  } else {
    // Without producers, x is a bf16 / f16 operand or a literal constant
    // (the program's input either way).
    std::vector<const Value*> extra;
    std::vector<const Op*> pre = g.pre;
    if (pre.empty() && x->is_param()) extra.push_back(x);
    if (pre.empty() && !x->is_param()) pre.push_back(x->defining_op());
    HGC_ASSIGN_OR_RETURN(RowProgram program,
                         ctx.BuildProgram(pre, extra, x->type().shape, x, -1));
    program.result_in_f32 = true;
    parts.pre_program = ctx.nest.AddProgram(std::move(program), "pre");
    parts.x = ctx.nest.AddPerThread(
        g.len * 4, "x_row",
        g.pre.empty() ? "f32 row of x" : "f32 row of the producers");
  }
  if (row_op->kind_id() == OpKind::kLayernorm) {
    for (int i = 1; i <= 2; ++i) {
      const Value* p = row_op->operand(i);
      if (!p->is_param() || p->type().NumElements() != g.len) {
        return absl::UnimplementedError("computed gamma/beta");
      }
    }
    parts.gamma = ctx.ParamBuffer(row_op->operand(1));
    parts.beta = ctx.ParamBuffer(row_op->operand(2));
  }
  return absl::OkStatus();
}

// Where the row op's result goes on its way out: the per-thread y row when
// `path` needs one, and the consumers' (or the rounding's) program into the
// output. A reduction's result is one element a row: its consumers run over
// the result's shape with a dim of 1 appended, a row an element (a
// scalar's over [1]).
absl::Status AddOutputRows(const RowContext& ctx, const RowGroup& g,
                           ResultPath path, RowNestParts& parts) {
  const Op* row_op = g.row_op;
  const OpKind kind = row_op->kind_id();
  const int64_t out_len = g.is_reduce ? 1 : g.len;
  const Shape& result_shape = row_op->result()->type().shape;
  const bool append_dim = g.is_reduce && !result_shape.empty();
  Shape out_space =
      g.is_reduce ? result_shape : row_op->operand(0)->type().shape;
  if (g.is_reduce) out_space.push_back(1);
  parts.exps_in_x = path == ResultPath::kRounded && kind == OpKind::kSoftmax &&
                    !parts.x_is_operand;
  if (path == ResultPath::kThroughRow ||
      (path == ResultPath::kRounded && kind == OpKind::kSoftmax &&
       !parts.exps_in_x)) {
    parts.y = ctx.nest.AddPerThread(
        out_len * 4, "y_row", absl::StrCat("f32 row of the ", row_op->kind()));
  }
  if (g.post.empty() && path != ResultPath::kThroughRow) {
    return absl::OkStatus();
  }
  const Value* last =
      g.post.empty() ? row_op->result() : g.post.back()->result();
  HGC_ASSIGN_OR_RETURN(
      RowProgram program,
      ctx.BuildProgram(g.post, {}, append_dim ? result_shape : out_space, last,
                       ctx.nest.FrameIndex(parts.out)));
  if (append_dim) {
    // Each input's strides over the result, then 0 for the dim of 1.
    program.shape = out_space;
    for (RowInput& in : program.inputs) {
      if (!in.is_constant) in.strides.push_back(0);
    }
  }
  RowInput y;
  y.value = row_op->result();
  y.buffer =
      ctx.nest.FrameIndex(path == ResultPath::kInPlace ? parts.out : parts.y);
  HGC_ASSIGN_OR_RETURN(y.strides, BroadcastStrides(out_space, out_space));
  y.from_in_row = path == ResultPath::kThroughRow;
  y.rounded_from_f32 = row_op->result()->type().dtype != DType::kF32;
  program.inputs.push_back(std::move(y));
  parts.post_program = ctx.nest.AddProgram(std::move(program), "post");
  return absl::OkStatus();
}

// The parallel loop over rows: the producers' program, the row op, the
// consumers' program.
void BuildRowLoop(tile::Nest& nest, const RowGroup& g, ResultPath path,
                  const RowNestParts& parts, DType out_type) {
  const int64_t len = g.len;
  const int64_t x_cols = g.row_op->operand(0)->type().shape.back();
  // Row statistics on the stack: f32 max and sum, or the f32 mean and the
  // variance as a double (bytes 8 to 15).
  const bool layernorm = g.row_op->kind_id() == OpKind::kLayernorm;
  const int stats = layernorm
                        ? nest.AddLocal(16, "stats", "f32 mean, f64 variance")
                        : nest.AddLocal(8, "stats", "two f32 row statistics");
  const tile::View first{stats, 0, 4};
  const tile::View second{stats, 1, layernorm ? 8 : 4};
  tile::NestBuilder nb(nest);
  nb.For("row", 0, g.rows, true, [&](tile::Expr row) {
    tile::View xrow{parts.x, parts.x_is_operand ? row * len : tile::Expr(0), 4};
    if (parts.pre_program >= 0) {
      ForSubRows(nb, g, row, [&](tile::Expr sub_row, tile::Expr at) {
        nb.Append(tile::Stmt{tile::RowMap{parts.pre_program,
                                          sub_row,
                                          0,
                                          x_cols,
                                          tile::View{parts.x, at, 4},
                                          {},
                                          {}}});
      });
    }
    // Where the row op's last pass writes: f32 rows, or the output in its
    // own dtype (kRounded).
    const tile::Expr out_at = g.is_reduce ? row : row * len;
    const tile::View orow =
        path == ResultPath::kInPlace ? tile::View{parts.out, out_at, 4}
        : path == ResultPath::kRounded
            ? tile::View{parts.out, out_at, DTypeSize(out_type)}
            : tile::View{parts.y, 0, 4};
    AppendRowOp(nb, g, path, parts, out_type, xrow, orow, first, second);
    if (parts.post_program >= 0 && g.is_reduce) {
      std::optional<tile::View> in_row;
      if (path == ResultPath::kThroughRow) in_row = orow;
      nb.Append(tile::Stmt{
          tile::RowMap{parts.post_program, row, 0, 1, {}, in_row, {}}});
    } else if (parts.post_program >= 0) {
      ForSubRows(nb, g, row, [&](tile::Expr sub_row, tile::Expr at) {
        std::optional<tile::View> in_row;
        if (path == ResultPath::kThroughRow) {
          in_row = tile::View{parts.y, at, 4};
        }
        nb.Append(tile::Stmt{tile::RowMap{
            parts.post_program, sub_row, 0, x_cols, {}, in_row, {}}});
      });
    }
  });
}

}  // namespace

absl::StatusOr<tile::Nest> LowerRowwise(LowerState& state, const Op& op) {
  HGC_ASSIGN_OR_RETURN(RowGroup g, SplitRowGroup(op));
  const ResultPath path = ChooseResultPath(g, op);
  tile::Nest nest(state.StepName(g.row_op->kind()));
  const RowContext ctx{state, op, nest, NestConstantBinder(nest)};
  RowNestParts parts;
  parts.out = ValueBuffer(state, nest, op.result());
  HGC_RETURN_IF_ERROR(AddInputRows(ctx, g, parts));
  HGC_RETURN_IF_ERROR(AddOutputRows(ctx, g, path, parts));
  BuildRowLoop(nest, g, path, parts, op.result()->type().dtype);
  return nest;
}

}  // namespace codegen
}  // namespace hgc
