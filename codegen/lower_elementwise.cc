#include "codegen/lower_elementwise.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/llvm/elemental_emitter.h"
#include "reference/reference_interpreter.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {

absl::Status BuildRowProgram(const std::vector<const Op*>& ops,
                             const std::vector<const Value*>& params,
                             const std::vector<int>& param_buffers,
                             const Shape& shape, const Value* result,
                             int out_buffer, RowProgram& program) {
  program.shape = shape;
  program.result = result;
  program.out_buffer = out_buffer;
  for (size_t i = 0; i < params.size(); ++i) {
    RowInput in;
    in.value = params[i];
    in.buffer = param_buffers[i];
    absl::StatusOr<std::vector<int64_t>> strides =
        BroadcastStrides(params[i]->type().shape, shape);
    if (!strides.ok()) return absl::UnimplementedError("no broadcast");
    in.strides = *strides;
    program.inputs.push_back(std::move(in));
  }
  for (const Op* op : ops) {
    if (op->kind() == "constant") {
      HGC_ASSIGN_OR_RETURN(Tensor t, EvaluateOp(*op, {}));
      // Float scalars only: bf16 and f16 values are exact in f32, their
      // compute representation.
      const DType dt = t.dtype();
      if (t.num_elements() != 1 ||
          (dt != DType::kF32 && dt != DType::kBF16 && dt != DType::kF16)) {
        return absl::UnimplementedError("non-scalar or integer constant");
      }
      RowInput in;
      in.value = op->result();
      in.is_constant = true;
      in.constant = static_cast<float>(t.GetDouble(0));
      program.inputs.push_back(std::move(in));
      continue;
    }
    if (!IsElementalOp(op->kind())) {
      return absl::UnimplementedError(
          absl::StrCat("'", op->kind(), "' is not elementwise"));
    }
    program.ops.push_back(op);
  }
  return CheckRowProgram(program);
}

absl::Status LowerElementwise(LowerState& state, const Op& op) {
  std::vector<const Op*> ops;
  std::vector<const Value*> params;
  const Value* result = op.result();
  const Value* body_result = result;
  if (op.kind() == "fusion") {
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
  StepBuffers buffers;
  std::vector<int> param_buffers;
  for (const Value* v : op.operands()) {
    param_buffers.push_back(buffers.Add(state.refs.at(v)));
  }
  int out = buffers.Add(state.refs.at(result));
  RowProgram program;
  HGC_RETURN_IF_ERROR(BuildRowProgram(ops, params, param_buffers,
                                      result->type().shape, body_result, out,
                                      program));
  const Shape& shape = result->type().shape;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];

  llvm::IRBuilder<> b(*state.context);
  FrameValues frame;
  std::string name = state.StepName("elementwise");
  llvm::Function* fn = BeginStepFunction(state, name, b, frame);
  // Work items are row chunks: whole rows when there are enough rows to go
  // around, else rows cut into vector-aligned chunks so that every thread
  // gets a share of a long 1-D output.
  const int64_t cols = shape.back();
  int64_t chunk = cols;
  if (rows < 2 * state.num_threads && cols > 2 * kVectorWidth) {
    int64_t pieces = (2 * state.num_threads + rows - 1) / rows;
    chunk = (cols + pieces - 1) / pieces;
    chunk = (chunk + kVectorWidth - 1) / kVectorWidth * kVectorWidth;
  }
  const int64_t per_row = (cols + chunk - 1) / chunk;
  llvm::Value *begin, *end;
  EmitThreadRange(b, frame, b.getInt64(rows * per_row), begin, end);
  absl::Status status = absl::OkStatus();
  EmitLoop(b, begin, end, [&](llvm::IRBuilder<>& b, llvm::Value* item) {
    llvm::Value* row = b.CreateUDiv(item, b.getInt64(per_row));
    llvm::Value* c0 =
        b.CreateMul(b.CreateURem(item, b.getInt64(per_row)), b.getInt64(chunk));
    llvm::Value* c1 = b.CreateAdd(c0, b.getInt64(chunk));
    c1 = b.CreateSelect(b.CreateICmpULT(c1, b.getInt64(cols)), c1,
                        b.getInt64(cols));
    absl::Status s = EmitRow(b, frame, program, row, c0, c1);
    if (status.ok()) status = s;
  });
  HGC_ASSIGN_OR_RETURN(Step step,
                       FinishStepFunction(fn, b, status, name, buffers));
  state.program->steps.push_back(std::move(step));
  return absl::OkStatus();
}

}  // namespace codegen
}  // namespace hgc
