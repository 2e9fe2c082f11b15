#include "codegen/lower_rowwise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "codegen/llvm/elemental_emitter.h"
#include "codegen/lower_elementwise.h"
#include "llvm/IR/Constants.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

bool IsRowOp(const std::string& kind) {
  return kind == "softmax" || kind == "layernorm" || kind == "reduce_sum" ||
         kind == "reduce_max" || kind == "reduce_mean";
}

// The normalized `axis` attribute (default -1).
int64_t Axis(const Op& op, int64_t rank) {
  const Attribute* a = op.FindAttr("axis");
  int64_t axis = a != nullptr && a->is_int() ? a->as_int() : -1;
  return axis < 0 ? axis + rank : axis;
}

// NaN-propagating horizontal max of a <16 x float>.
absl::StatusOr<llvm::Value*> HorizontalMax(llvm::IRBuilder<>& b,
                                           llvm::Value* v) {
  llvm::Value* m = b.CreateExtractElement(v, uint64_t{0});
  for (int i = 1; i < kVectorWidth; ++i) {
    HGC_ASSIGN_OR_RETURN(
        m, EmitBinary(b, "max", DType::kF32, m, b.CreateExtractElement(v, i)));
  }
  return m;
}

}  // namespace

absl::Status LowerRowwise(LowerState& state, const Op& op) {
  const Graph* body = FusionBody(op);
  if (body == nullptr || body->results().size() != 1) {
    return absl::UnimplementedError("no body");
  }
  const Op* row_op = nullptr;
  std::vector<const Op*> pre, post;
  for (const auto& o : body->ops()) {
    if (o->kind() == "constant") continue;
    if (IsRowOp(o->kind())) {
      if (row_op != nullptr) return absl::UnimplementedError("two row ops");
      row_op = o.get();
    } else if (IsElementalOp(o->kind())) {
      (row_op == nullptr ? pre : post).push_back(o.get());
    } else {
      return absl::UnimplementedError("non-elementwise op in a row group");
    }
  }
  if (row_op == nullptr) return absl::UnimplementedError("no row op");
  const std::string kind = row_op->kind();
  const Value* x = row_op->operand(0);
  const Shape& shape = x->type().shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  // The row op writes f32 into the group's output buffer, which the
  // consumers then rewrite in place: that output must be f32 too.
  if (rank == 0 || x->type().dtype != DType::kF32 ||
      row_op->result()->type().dtype != DType::kF32 ||
      op.result()->type().dtype != DType::kF32) {
    return absl::UnimplementedError("row op on a non-f32 or scalar value");
  }
  const bool is_reduce = kind.rfind("reduce_", 0) == 0;
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
  const int64_t len = shape.back();
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < rank; ++d) rows *= shape[d];

  StepBuffers buffers;
  auto param_buffer = [&](const Value* p) {
    return buffers.Add(state.refs.at(op.operand(p->index())));
  };
  const int out = buffers.Add(state.refs.at(op.result()));
  // Producers into a per-thread scratch row, unless x is an operand.
  RowProgram pre_program;
  int x_buffer = -1;
  if (x->is_param()) {
    x_buffer = param_buffer(x);
  } else {
    std::vector<const Value*> params;
    std::vector<const Op*> ops;
    CollectInputs(pre, params, ops);
    std::vector<int> pbuf;
    for (const Value* p : params) pbuf.push_back(param_buffer(p));
    ops.insert(ops.end(), pre.begin(), pre.end());
    HGC_RETURN_IF_ERROR(
        BuildRowProgram(ops, params, pbuf, shape, x, -1, pre_program));
    x_buffer = buffers.Add(
        BufferRef::Arena(state.AllocArena(state.num_threads * len * 4)));
  }
  int gamma = -1, beta = -1;
  if (kind == "layernorm") {
    for (int i = 1; i <= 2; ++i) {
      const Value* g = row_op->operand(i);
      if (!g->is_param() || g->type().shape != Shape{len}) {
        return absl::UnimplementedError("computed gamma/beta");
      }
    }
    gamma = param_buffer(row_op->operand(1));
    beta = param_buffer(row_op->operand(2));
  }
  RowProgram post_program;
  if (!post.empty()) {
    std::vector<const Value*> params;
    std::vector<const Op*> ops;
    CollectInputs(post, params, ops);
    std::vector<int> pbuf;
    for (const Value* p : params) pbuf.push_back(param_buffer(p));
    ops.insert(ops.end(), post.begin(), post.end());
    HGC_RETURN_IF_ERROR(
        BuildRowProgram(ops, params, pbuf, shape, last, out, post_program));
    RowInput y;
    y.value = row_op->result();
    y.buffer = out;
    HGC_ASSIGN_OR_RETURN(y.strides, BroadcastStrides(shape, shape));
    post_program.inputs.push_back(std::move(y));
  }

  llvm::IRBuilder<> b(*state.context);
  FrameValues frame;
  std::string name = state.StepName(kind);
  llvm::Function* fn = BeginStepFunction(state, name, b, frame);
  llvm::Type* f32 = b.getFloatTy();
  auto* vt = llvm::FixedVectorType::get(f32, kVectorWidth);
  llvm::Value* acc = b.CreateAlloca(vt, nullptr, "acc");
  llvm::Align align(4);
  const float inf = std::numeric_limits<float>::infinity();
  auto splat = [&](float v) {
    return llvm::ConstantVector::getSplat(
        llvm::ElementCount::getFixed(kVectorWidth),
        llvm::ConstantFP::get(f32, v));
  };
  llvm::Value *begin, *end;
  EmitThreadRange(b, frame, b.getInt64(rows), begin, end);
  llvm::Value* nvec = b.getInt64((len + kVectorWidth - 1) / kVectorWidth);
  llvm::Value* len_v = b.getInt64(len);
  absl::Status status = absl::OkStatus();
  auto note = [&](const absl::Status& s) {
    if (status.ok()) status = s;
  };
  // Runs `body(col, mask)` over the row's vectors.
  auto for_vectors =
      [&](const std::function<void(llvm::Value*, llvm::Value*)>& body) {
        EmitLoop(b, b.getInt64(0), nvec,
                 [&](llvm::IRBuilder<>& b, llvm::Value* i) {
                   llvm::Value* col = b.CreateMul(i, b.getInt64(kVectorWidth));
                   body(col, TailMask(b, col, len_v));
                 });
      };
  auto vptr = [&](llvm::Value* row_ptr, llvm::Value* col) {
    return b.CreateBitCast(b.CreateInBoundsGEP(f32, row_ptr, col),
                           vt->getPointerTo());
  };
  EmitLoop(b, begin, end, [&](llvm::IRBuilder<>& b, llvm::Value* row) {
    llvm::Value* xrow;
    if (x->is_param()) {
      xrow = b.CreateInBoundsGEP(f32, LoadBuffer(b, frame, x_buffer),
                                 b.CreateMul(row, len_v));
    } else {
      xrow = b.CreateInBoundsGEP(f32, LoadBuffer(b, frame, x_buffer),
                                 b.CreateMul(frame.thread_id, len_v));
      note(EmitRow(b, frame, pre_program, row, b.getInt64(0), len_v, xrow));
    }
    llvm::Value* orow =
        b.CreateInBoundsGEP(f32, LoadBuffer(b, frame, out),
                            is_reduce ? row : b.CreateMul(row, len_v));
    auto load = [&](llvm::Value* p, llvm::Value* col, llvm::Value* mask,
                    float pass) {
      return b.CreateMaskedLoad(vt, vptr(p, col), align, mask, splat(pass));
    };
    auto sum_of_acc = [&]() {
      return b.CreateFAddReduce(llvm::ConstantFP::get(f32, 0.0),
                                b.CreateLoad(vt, acc));
    };
    auto accumulate = [&](llvm::Value* t) {
      b.CreateStore(b.CreateFAdd(b.CreateLoad(vt, acc), t), acc);
    };
    auto max_pass = [&]() -> llvm::Value* {
      b.CreateStore(splat(-inf), acc);
      for_vectors([&](llvm::Value* col, llvm::Value* mask) {
        absl::StatusOr<llvm::Value*> m =
            EmitBinary(b, "max", DType::kF32, b.CreateLoad(vt, acc),
                       load(xrow, col, mask, -inf));
        if (!m.ok()) return note(m.status());
        b.CreateStore(*m, acc);
      });
      absl::StatusOr<llvm::Value*> m = HorizontalMax(b, b.CreateLoad(vt, acc));
      if (!m.ok()) {
        note(m.status());
        return llvm::ConstantFP::get(f32, 0.0);
      }
      return *m;
    };
    auto sum_pass = [&]() {
      b.CreateStore(splat(0), acc);
      for_vectors([&](llvm::Value* col, llvm::Value* mask) {
        accumulate(load(xrow, col, mask, 0));
      });
      return sum_of_acc();
    };
    llvm::Value* len_f = llvm::ConstantFP::get(f32, static_cast<double>(len));
    auto mean_pass = [&]() { return b.CreateFDiv(sum_pass(), len_f); };
    if (kind == "softmax") {
      llvm::Value* m = b.CreateVectorSplat(kVectorWidth, max_pass());
      b.CreateStore(splat(0), acc);
      for_vectors([&](llvm::Value* col, llvm::Value* mask) {
        absl::StatusOr<llvm::Value*> e = EmitUnary(
            b, "exp", DType::kF32, b.CreateFSub(load(xrow, col, mask, 0), m));
        if (!e.ok()) return note(e.status());
        b.CreateMaskedStore(*e, vptr(orow, col), align, mask);
        accumulate(b.CreateSelect(mask, *e, splat(0)));
      });
      llvm::Value* inv = b.CreateVectorSplat(
          kVectorWidth,
          b.CreateFDiv(llvm::ConstantFP::get(f32, 1.0), sum_of_acc()));
      for_vectors([&](llvm::Value* col, llvm::Value* mask) {
        b.CreateMaskedStore(b.CreateFMul(load(orow, col, mask, 0), inv),
                            vptr(orow, col), align, mask);
      });
    } else if (kind == "layernorm") {
      // Two passes over x - x[0] (shifted data): the mean of a constant row
      // is then exactly 0 and its variance 0, whatever f32 rounds the sum
      // of its elements to.
      llvm::Value* shift = b.CreateVectorSplat(
          kVectorWidth,
          len > 0 ? static_cast<llvm::Value*>(b.CreateLoad(f32, xrow))
                  : llvm::ConstantFP::get(f32, 0.0));
      auto shifted = [&](llvm::Value* col, llvm::Value* mask) {
        return b.CreateSelect(
            mask, b.CreateFSub(load(xrow, col, mask, 0), shift), splat(0));
      };
      b.CreateStore(splat(0), acc);
      for_vectors([&](llvm::Value* col, llvm::Value* mask) {
        accumulate(shifted(col, mask));
      });
      llvm::Value* mean =
          b.CreateVectorSplat(kVectorWidth, b.CreateFDiv(sum_of_acc(), len_f));
      b.CreateStore(splat(0), acc);
      for_vectors([&](llvm::Value* col, llvm::Value* mask) {
        llvm::Value* d =
            b.CreateSelect(mask, b.CreateFSub(shifted(col, mask), mean),
                           splat(0));
        accumulate(b.CreateFMul(d, d));
      });
      const Attribute* eps_attr = row_op->FindAttr("epsilon");
      double eps = eps_attr != nullptr && eps_attr->is_number()
                       ? eps_attr->as_number()
                       : 1e-5;
      llvm::Value* var = b.CreateFDiv(
          sum_of_acc(), llvm::ConstantFP::get(f32, static_cast<double>(len)));
      absl::StatusOr<llvm::Value*> sd =
          EmitUnary(b, "sqrt", DType::kF32,
                    b.CreateFAdd(var, llvm::ConstantFP::get(f32, eps)));
      if (!sd.ok()) return note(sd.status());
      llvm::Value* rstd = b.CreateVectorSplat(
          kVectorWidth, b.CreateFDiv(llvm::ConstantFP::get(f32, 1.0), *sd));
      llvm::Value* g = LoadBuffer(b, frame, gamma);
      llvm::Value* be = LoadBuffer(b, frame, beta);
      for_vectors([&](llvm::Value* col, llvm::Value* mask) {
        llvm::Value* y =
            b.CreateFMul(b.CreateFSub(shifted(col, mask), mean), rstd);
        y = b.CreateFAdd(b.CreateFMul(y, load(g, col, mask, 0)),
                         load(be, col, mask, 0));
        b.CreateMaskedStore(y, vptr(orow, col), align, mask);
      });
    } else {
      llvm::Value* r = kind == "reduce_max"   ? max_pass()
                       : kind == "reduce_sum" ? sum_pass()
                                              : mean_pass();
      b.CreateStore(r, orow);
    }
    if (!post.empty()) {
      note(EmitRow(b, frame, post_program, row, b.getInt64(0), len_v));
    }
  });
  HGC_ASSIGN_OR_RETURN(Step step,
                       FinishStepFunction(fn, b, status, name, buffers));
  state.program->steps.push_back(std::move(step));
  return absl::OkStatus();
}

}  // namespace codegen
}  // namespace hgc
