#include "ir/builder.h"

#include "ir/op_registry.h"
#include "support/diagnostics.h"

namespace hgc {

absl::StatusOr<Op*> Builder::CreateOp(absl::string_view kind,
                                      std::vector<Value*> operands,
                                      AttrMap attrs,
                                      std::vector<TensorType> declared,
                                      SourceLoc loc) {
  std::vector<TensorType> operand_types;
  operand_types.reserve(operands.size());
  for (Value* v : operands) operand_types.push_back(v->type());
  absl::StatusOr<std::vector<TensorType>> types =
      InferResultTypes(kind, operand_types, attrs, declared);
  if (!types.ok()) return AttachLoc(types.status(), loc);
  return graph_->InsertOp(insert_before_, std::string(kind),
                          std::move(operands), std::move(attrs),
                          std::move(*types), loc);
}

absl::StatusOr<Value*> Builder::Create(absl::string_view kind,
                                       std::vector<Value*> operands,
                                       AttrMap attrs,
                                       std::vector<TensorType> declared,
                                       SourceLoc loc) {
  absl::StatusOr<Op*> op = CreateOp(kind, std::move(operands), std::move(attrs),
                                    std::move(declared), loc);
  if (!op.ok()) return op.status();
  return (*op)->result(0);
}

absl::StatusOr<Value*> Builder::Matmul(Value* a, Value* b, bool transpose_a,
                                       bool transpose_b) {
  AttrMap attrs;
  if (transpose_a) attrs["transpose_a"] = Attribute::Bool(true);
  if (transpose_b) attrs["transpose_b"] = Attribute::Bool(true);
  return Create("matmul", {a, b}, std::move(attrs));
}

absl::StatusOr<Value*> Builder::Splat(double value, TensorType type) {
  AttrMap attrs;
  attrs["value"] = IsFloat(type.dtype)
                       ? Attribute::Float(value)
                       : Attribute::Int(static_cast<int64_t>(value));
  return Create("constant", {}, std::move(attrs), {std::move(type)});
}

}  // namespace hgc
