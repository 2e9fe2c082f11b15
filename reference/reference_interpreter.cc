#include "reference/reference_interpreter.h"

#include "runtime/portable/evaluate.h"

namespace hgc {
namespace {

portable::Options PortableOptions(const InterpretOptions& options) {
  portable::Options portable_options;
  portable_options.max_tensor_bytes = options.max_tensor_bytes;
  return portable_options;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> Interpret(const Graph& graph,
                                              absl::Span<const Tensor> inputs,
                                              const InterpretOptions& options) {
  return portable::EvaluateGraph(graph, inputs, PortableOptions(options));
}

absl::StatusOr<Tensor> EvaluateOp(const Op& op,
                                  absl::Span<const Tensor> operands,
                                  const InterpretOptions& options) {
  return portable::EvaluateOp(op, operands, PortableOptions(options));
}

absl::StatusOr<Tensor> EvaluateOp(absl::string_view kind,
                                  absl::Span<const Tensor> operands,
                                  const AttrMap& attrs,
                                  const std::optional<TensorType>& result_type,
                                  const InterpretOptions& options) {
  return portable::EvaluateOp(kind, operands, attrs, result_type,
                              PortableOptions(options));
}

bool HasReferenceKernel(absl::string_view kind) {
  return portable::HasKernel(kind);
}

}  // namespace hgc
