// The op converters: each builds a small model with the protobuf API and
// checks the imported graph's text, or runs it on the reference
// interpreter against hand-computed values.
#include <string>
#include <vector>

#include "frontend/onnx/onnx_import.h"
#include "frontend/onnx/onnx_test_util.h"
#include "gtest/gtest.h"
#include "reference/reference_interpreter.h"

namespace hgc {
namespace {

using onnx::TensorProto;
using onnx_test::ModelBuilder;
using onnx_test::Print;
using onnx_test::SetFloat;
using onnx_test::SetInt;
using onnx_test::SetInts;
using onnx_test::SetString;

Tensor F32(std::vector<int64_t> dims, std::vector<float> values) {
  Tensor t = *Tensor::Create(TensorType(DType::kF32, Shape(dims.begin(),
                                                          dims.end())));
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<float>()[i] = values[i];
  return t;
}

std::vector<float> Values(const Tensor& t) {
  std::vector<float> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) out.push_back(t.GetDouble(i));
  return out;
}

// Runs the imported graph on `inputs` (the model's inputs, in order), the
// const parameters bound to the initializers; returns output 0.
Tensor RunModel(const OnnxModel& model, std::vector<Tensor> inputs) {
  const Graph& graph = *model.module.graphs()[0];
  for (int i = static_cast<int>(inputs.size()); i < graph.num_params(); ++i) {
    inputs.push_back(model.constants.at(graph.param(i)->name()));
  }
  absl::StatusOr<std::vector<Tensor>> out = Interpret(graph, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

OnnxModel Import(const ModelBuilder& b) {
  absl::StatusOr<OnnxModel> model = b.Import();
  EXPECT_TRUE(model.ok()) << model.status().message();
  return model.ok() ? std::move(*model) : OnnxModel();
}

TEST(OnnxImportTest, MlpBecomesMatmulAddReluWithConstParams) {
  ModelBuilder b(17, "mlp");
  b.Input("x", {int64_t{1}, int64_t{2}});
  b.Floats("w", {2, 2}, {1, 2, 3, 4});
  b.Floats("bias", {2}, {-10, 1});
  b.Node("MatMul", {"x", "w"}, {"h"});
  b.Node("Add", {"h", "bias"}, {"a"});
  b.Node("Relu", {"a"}, {"y"});
  b.Output("y");
  OnnxModel model = Import(b);
  EXPECT_EQ(Print(model),
            "graph @mlp(%x: f32[1, 2], %w: f32[2, 2] const, "
            "%bias: f32[2] const) -> f32[1, 2] {\n"
            "  %h = matmul(%x, %w) : f32[1, 2]\n"
            "  %a = add(%h, %bias) : f32[1, 2]\n"
            "  %y = relu(%a) : f32[1, 2]\n"
            "  return %y\n"
            "}\n");
  ASSERT_EQ(model.constants.size(), 2u);
  EXPECT_EQ(Values(model.constants.at("w")), std::vector<float>({1, 2, 3, 4}));
  ASSERT_EQ(model.input_names.size(), 1u);
  EXPECT_EQ(model.input_names[0].second, "x");
  // [1, 2] x [[1, 2], [3, 4]] = [7, 10]; + [-10, 1]; relu.
  EXPECT_EQ(Values(RunModel(model, {F32({1, 2}, {1, 2})})),
            std::vector<float>({0, 11}));
}
}  // namespace
}  // namespace hgc
