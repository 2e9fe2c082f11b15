#include "codegen/row_program.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/llvm/elemental_emitter.h"
#include "runtime/portable/evaluate.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {

absl::StatusOr<std::vector<int64_t>> BroadcastStrides(const Shape& type,
                                                      const Shape& out) {
  if (type.size() > out.size()) {
    return absl::InvalidArgumentError("operand has a higher rank");
  }
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  size_t shift = out.size() - type.size();
  for (size_t d = type.size(); d-- > 0;) {
    if (type[d] == out[d + shift]) {
      strides[d + shift] = type[d] == 1 ? 0 : stride;
    } else if (type[d] != 1) {
      return absl::InvalidArgumentError("shapes do not broadcast");
    }
    stride *= type[d];
  }
  return strides;
}

absl::Status CheckRowProgram(const RowProgram& program) {
  if (program.shape.empty()) {
    return absl::UnimplementedError("rank-0 iteration space");
  }
  for (const Op* op : program.ops) {
    if (!IsElementalOp(op->kind_id())) {
      return absl::UnimplementedError(
          absl::StrCat("op '", op->kind(), "' in a row program"));
    }
    // Per-channel scales: the channel is a dim of the iteration space,
    // so the operand must span all of it.
    if ((op->kind_id() == OpKind::kQuantize ||
         op->kind_id() == OpKind::kDequantize) &&
        IsPerChannel(*op) && op->operand(0)->type().shape != program.shape) {
      return absl::UnimplementedError(
          absl::StrCat("per-channel ", op->kind(), " of a broadcast value"));
    }
  }
  return absl::OkStatus();
}

void CollectInputs(const std::vector<const Op*>& ops,
                   std::vector<const Value*>& params,
                   std::vector<const Op*>& constants) {
  for (const Op* o : ops) {
    for (const Value* x : o->operands()) {
      if (x->is_param()) {
        if (std::find(params.begin(), params.end(), x) == params.end()) {
          params.push_back(x);
        }
      } else if (x->defining_op()->kind_id() == OpKind::kConstant &&
                 std::find(constants.begin(), constants.end(),
                           x->defining_op()) == constants.end()) {
        constants.push_back(x->defining_op());
      }
    }
  }
}

bool IsPerChannel(const Op& op) {
  for (const char* name : {"scale", "zero_point"}) {
    const Attribute* a = op.FindAttr(name);
    if (a != nullptr && a->is_list()) return true;
  }
  return false;
}

namespace {

// Whether every element of `t` has element 0's bytes (vacuously for an
// empty tensor): such a literal is one number, whatever its shape.
bool IsSplat(const Tensor& t) {
  const int64_t size = DTypeSize(t.dtype());
  for (int64_t i = 1; i < t.num_elements(); ++i) {
    if (std::memcmp(t.raw(), t.raw() + i * size, size) != 0) return false;
  }
  return true;
}

// The row input that provides literal `constant`: a splat, or the buffer
// `bind_constant` gives its contents, read with broadcasting strides.
absl::StatusOr<RowInput> ConstantInput(const Op& constant, const Shape& shape,
                                       const ConstantBinder& bind_constant) {
  HGC_ASSIGN_OR_RETURN(Tensor t, portable::EvaluateOp(constant, {}));
  RowInput in;
  in.value = constant.result();
  if (IsSplat(t)) {
    // bf16 / f16 values and every s32 are exact in a double.
    in.is_constant = true;
    in.constant = t.num_elements() > 0 ? t.GetDouble(0) : 0.0;
    return in;
  }
  if (!bind_constant) {
    return absl::UnimplementedError("a literal table in this row program");
  }
  absl::StatusOr<std::vector<int64_t>> strides =
      BroadcastStrides(t.type().shape, shape);
  if (!strides.ok()) return absl::UnimplementedError("no broadcast");
  in.strides = *std::move(strides);
  HGC_ASSIGN_OR_RETURN(in.buffer, bind_constant(constant, std::move(t)));
  return in;
}

}  // namespace

absl::Status BuildRowProgram(const std::vector<const Op*>& ops,
                             const std::vector<const Value*>& params,
                             const std::vector<int>& param_buffers,
                             const Shape& shape, const Value* result,
                             int out_buffer, RowProgram& program,
                             const ConstantBinder& bind_constant) {
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
    if (op->kind_id() == OpKind::kConstant) {
      HGC_ASSIGN_OR_RETURN(RowInput in,
                           ConstantInput(*op, shape, bind_constant));
      program.inputs.push_back(std::move(in));
      continue;
    }
    if (!IsElementalOp(op->kind_id())) {
      return absl::UnimplementedError(
          absl::StrCat("'", op->kind(), "' is not elementwise"));
    }
    program.ops.push_back(op);
  }
  return CheckRowProgram(program);
}

}  // namespace codegen
}  // namespace hgc
