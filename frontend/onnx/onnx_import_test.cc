// The op converters: each builds a small model with the protobuf API and
// checks the imported graph's text, or runs it on the reference
// interpreter against hand-computed values.
#include "frontend/onnx/onnx_import.h"

#include <string>
#include <vector>

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
  Tensor t =
      *Tensor::Create(TensorType(DType::kF32, Shape(dims.begin(), dims.end())));
  for (size_t i = 0; i < values.size(); ++i)
    t.mutable_data<float>()[i] = values[i];
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

TEST(OnnxImportTest, MatMulWithVectorOperandsDropsTheirDims) {
  ModelBuilder b;
  b.Input("v", {int64_t{2}});
  b.Input("m", {int64_t{2}, int64_t{3}});
  b.Node("MatMul", {"v", "m"}, {"y"});
  b.Output("y");
  OnnxModel model = Import(b);
  EXPECT_EQ(model.module.graphs()[0]->results()[0]->type().ToString(),
            "f32[3]");
  EXPECT_EQ(Values(RunModel(
                model, {F32({2}, {1, 2}), F32({2, 3}, {1, 2, 3, 4, 5, 6})})),
            std::vector<float>({9, 12, 15}));
}

TEST(OnnxImportTest, GemmAppliesTransposesAlphaAndBeta) {
  ModelBuilder b;
  b.Input("a", {int64_t{1}, int64_t{2}});
  b.Floats("b", {3, 2}, {1, 0, 0, 1, 1, 1});  // transposed: [2, 3]
  b.Floats("c", {3}, {1, 2, 3});
  onnx::NodeProto* gemm = b.Node("Gemm", {"a", "b", "c"}, {"y"});
  SetInt(gemm, "transB", 1);
  SetFloat(gemm, "alpha", 2.0f);
  SetFloat(gemm, "beta", 0.5f);
  b.Output("y");
  OnnxModel model = Import(b);
  // a . b^T = [1, 2, 3]; * 2 = [2, 4, 6]; + 0.5 * [1, 2, 3].
  EXPECT_EQ(Values(RunModel(model, {F32({1, 2}, {1, 2})})),
            std::vector<float>({2.5, 5, 7.5}));
  EXPECT_NE(Print(model).find("matmul(%a, %b) {transpose_b = true}"),
            std::string::npos);
}

TEST(OnnxImportTest, SoftmaxBeforeOpset13CoercesTo2D) {
  ModelBuilder b(11);
  b.Input("x", {int64_t{2}, int64_t{1}, int64_t{2}});
  b.Node("Softmax", {"x"}, {"y"});  // axis 1: over dims 1 and 2 together
  b.Output("y");
  OnnxModel model = Import(b);
  EXPECT_NE(Print(model).find("reshape(%x) {shape = [2, 2]}"),
            std::string::npos);
  Tensor y = RunModel(model, {F32({2, 1, 2}, {0, 0, 1, 1})});
  EXPECT_EQ(Values(y), std::vector<float>({0.5, 0.5, 0.5, 0.5}));
  EXPECT_EQ(y.type().ToString(), "f32[2, 1, 2]");
}

TEST(OnnxImportTest, SoftmaxFromOpset13IsOverOneAxis) {
  ModelBuilder b(13);
  b.Input("x", {int64_t{1}, int64_t{2}});
  onnx::NodeProto* s = b.Node("Softmax", {"x"}, {"y"});
  SetInt(s, "axis", 0);
  b.Output("y");
  EXPECT_NE(Print(Import(b)).find("softmax(%x) {axis = 0}"), std::string::npos);
}

TEST(OnnxImportTest, LayerNormalizationWithoutBias) {
  ModelBuilder b(17);
  b.Input("x", {int64_t{1}, int64_t{2}});
  b.Floats("gamma", {2}, {1, 2});
  onnx::NodeProto* ln = b.Node("LayerNormalization", {"x", "gamma"}, {"y"});
  SetFloat(ln, "epsilon", 0.0f);
  b.Output("y");
  OnnxModel model = Import(b);
  // mean 2, variance 1: [-1, 1] scaled by [1, 2].
  EXPECT_EQ(Values(RunModel(model, {F32({1, 2}, {1, 3})})),
            std::vector<float>({-1, 2}));
}

TEST(OnnxImportTest, ShapeChainFoldsIntoReshapeShape) {
  // torch's x.view(x.size(0), -1) after a transpose: Shape, Gather,
  // Unsqueeze, Concat feed Reshape.
  ModelBuilder b(13);
  b.Input("x", {int64_t{2}, int64_t{3}, int64_t{4}});
  b.Int64s("zero", {}, {0});
  b.Int64s("axes0", {1}, {0});
  b.Int64s("minus1", {1}, {-1});
  b.Node("Shape", {"x"}, {"shape"});
  b.Node("Gather", {"shape", "zero"}, {"batch"});
  b.Node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
  onnx::NodeProto* concat = b.Node("Concat", {"batch1", "minus1"}, {"target"});
  SetInt(concat, "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"y"});
  b.Output("y");
  EXPECT_EQ(Print(Import(b)),
            "graph @g(%x: f32[2, 3, 4]) -> f32[2, 12] {\n"
            "  %y = reshape(%x) {shape = [2, 12]} : f32[2, 12]\n"
            "  return %y\n"
            "}\n");
}

TEST(OnnxImportTest, ReshapeZeroCopiesUnlessAllowzero) {
  ModelBuilder b(14);
  b.Input("x", {int64_t{2}, int64_t{3}});
  b.Int64s("s", {2}, {0, 3});
  b.Node("Reshape", {"x", "s"}, {"y"});
  b.Output("y");
  EXPECT_EQ(Import(b).module.graphs()[0]->results()[0]->type().ToString(),
            "f32[2, 3]");
  ModelBuilder z(14);
  z.Input("x", {int64_t{2}, int64_t{3}});
  z.Int64s("s", {2}, {0, 3});
  SetInt(z.Node("Reshape", {"x", "s"}, {"y"}), "allowzero", 1);
  z.Output("y");
  absl::StatusOr<OnnxModel> bad = z.Import();
  EXPECT_NE(bad.status().message().find("cannot reshape [2, 3] to [0, 3]"),
            std::string::npos)
      << bad.status();
}

TEST(OnnxImportTest, SqueezeAndUnsqueezeAxesByOpset) {
  ModelBuilder old(11);  // axes as attributes
  old.Input("x", {int64_t{1}, int64_t{3}});
  SetInts(old.Node("Squeeze", {"x"}, {"s"}), "axes", {0});
  SetInts(old.Node("Unsqueeze", {"s"}, {"y"}), "axes", {1});
  old.Output("y");
  EXPECT_EQ(Import(old).module.graphs()[0]->results()[0]->type().ToString(),
            "f32[3, 1]");
  ModelBuilder now(13);  // axes as inputs
  now.Input("x", {int64_t{1}, int64_t{3}});
  now.Int64s("a0", {1}, {0});
  now.Int64s("a1", {1}, {-1});
  now.Node("Squeeze", {"x", "a0"}, {"s"});
  now.Node("Unsqueeze", {"s", "a1"}, {"y"});
  now.Output("y");
  EXPECT_EQ(Import(now).module.graphs()[0]->results()[0]->type().ToString(),
            "f32[3, 1]");
}

TEST(OnnxImportTest, TransposeDefaultsToReversedDims) {
  ModelBuilder b;
  b.Input("x", {int64_t{2}, int64_t{3}, int64_t{4}});
  b.Node("Transpose", {"x"}, {"y"});
  b.Output("y");
  EXPECT_NE(Print(Import(b)).find("transpose(%x) {perm = [2, 1, 0]}"),
            std::string::npos);
}

TEST(OnnxImportTest, FlattenAtAxis) {
  ModelBuilder b;
  b.Input("x", {int64_t{2}, int64_t{3}, int64_t{4}});
  SetInt(b.Node("Flatten", {"x"}, {"y"}), "axis", 2);
  b.Output("y");
  EXPECT_EQ(Import(b).module.graphs()[0]->results()[0]->type().ToString(),
            "f32[6, 4]");
}

TEST(OnnxImportTest, OneElementInitializerIsALiteralConstant) {
  ModelBuilder b;
  b.Input("x", {int64_t{2}});
  b.Floats("scale", {}, {8.0f});
  b.Node("Div", {"x", "scale"}, {"y"});
  b.Output("y");
  OnnxModel model = Import(b);
  EXPECT_NE(Print(model).find("constant() {value = 8.0} : f32[]"),
            std::string::npos);
  EXPECT_TRUE(model.constants.empty());
}

TEST(OnnxImportTest, PowWithSimpleExponentsIsRewrittenOthersArePow) {
  struct Case {
    float exponent;
    const char* op;
  };
  // Any other exponent is the pow op.
  for (Case c : {Case{2, "mul(%x, %x)"}, Case{0.5, "sqrt(%x)"},
                 Case{-0.5, "rsqrt(%x)"}, Case{3, "= pow(%x, "}}) {
    ModelBuilder b;
    b.Input("x", {int64_t{2}});
    b.Floats("e", {}, {c.exponent});
    b.Node("Pow", {"x", "e"}, {"y"});
    b.Output("y");
    EXPECT_NE(Print(Import(b)).find(c.op), std::string::npos) << c.op;
  }
}

// A tensor exponent given at run time, of another dtype, is cast to x's.
TEST(OnnxImportTest, PowWithARunTimeExponentIsCast) {
  ModelBuilder b;
  b.Input("x", {int64_t{2}});
  b.Input("e", {int64_t{2}}, TensorProto::INT32);
  b.Node("Pow", {"x", "e"}, {"y"});
  b.Output("y");
  const std::string text = Print(Import(b));
  EXPECT_NE(text.find("cast(%e) {to = f32}"), std::string::npos) << text;
  EXPECT_NE(text.find("= pow(%x, "), std::string::npos) << text;
}

TEST(OnnxImportTest, ReduceAxesByOpset) {
  ModelBuilder old(13);  // ReduceMean's axes: an attribute until opset 18
  old.Input("x", {int64_t{2}, int64_t{3}});
  SetInts(old.Node("ReduceMean", {"x"}, {"y"}), "axes", {1});
  old.Output("y");
  EXPECT_NE(
      Print(Import(old))
          .find("reduce_mean(%x) {axes = [1], keep_dims = true} : f32[2, 1]"),
      std::string::npos);
  ModelBuilder sum(13);  // ReduceSum's axes: an input from opset 13
  sum.Input("x", {int64_t{2}, int64_t{3}});
  sum.Int64s("axes", {1}, {0});
  SetInt(sum.Node("ReduceSum", {"x", "axes"}, {"y"}), "keepdims", 0);
  sum.Output("y");
  OnnxModel model = Import(sum);
  EXPECT_EQ(Values(RunModel(model, {F32({2, 3}, {1, 2, 3, 4, 5, 6})})),
            std::vector<float>({5, 7, 9}));
  ModelBuilder noop(18);
  noop.Input("x", {int64_t{2}});
  SetInt(noop.Node("ReduceMax", {"x"}, {"y"}), "noop_with_empty_axes", 1);
  noop.Output("y");
  EXPECT_EQ(Import(noop).module.graphs()[0]->results()[0]->type().ToString(),
            "f32[2]");
}

TEST(OnnxImportTest, WhereAndComparisons) {
  ModelBuilder b;
  b.Input("x", {int64_t{3}});
  b.Floats("zero", {}, {0.0f});
  b.Node("Greater", {"x", "zero"}, {"positive"});
  b.Node("Neg", {"x"}, {"negated"});
  b.Node("Where", {"positive", "x", "negated"}, {"y"});
  b.Output("y");
  EXPECT_EQ(Values(RunModel(Import(b), {F32({3}, {-2, 0, 3})})),
            std::vector<float>({2, 0, 3}));
}

TEST(OnnxImportTest, GeluFromOpset20AndContribOps) {
  ModelBuilder b(20);
  b.Input("x", {int64_t{2}});
  SetString(b.Node("Gelu", {"x"}, {"y"}), "approximate", "tanh");
  b.Output("y");
  EXPECT_NE(Print(Import(b)).find("gelu(%x) {approximate = \"tanh\"}"),
            std::string::npos);
  ModelBuilder ms(17);
  ms.Opset("com.microsoft", 1);
  ms.Input("x", {int64_t{2}});
  ms.Floats("bias", {2}, {1, 2});
  ms.Node("FastGelu", {"x", "bias"}, {"y"})->set_domain("com.microsoft");
  ms.Output("y");
  const std::string text = Print(Import(ms));
  EXPECT_NE(text.find("add(%x, %bias)"), std::string::npos) << text;
  EXPECT_NE(text.find("{approximate = \"tanh\"}"), std::string::npos) << text;
}

TEST(OnnxImportTest, QuantizeAndDequantizePerTensorAndPerAxis) {
  ModelBuilder b(13);
  b.Input("x", {int64_t{2}, int64_t{2}});
  b.Floats("s", {}, {0.5f});
  b.Bytes("zp", TensorProto::INT8, {}, {3});
  b.Floats("s2", {2}, {1.0f, 2.0f});
  b.Bytes("zp2", TensorProto::INT8, {2}, {0, 1});
  b.Node("QuantizeLinear", {"x", "s", "zp"}, {"q"});
  SetInt(b.Node("DequantizeLinear", {"q", "s2", "zp2"}, {"y"}), "axis", 0);
  b.Output("y");
  OnnxModel model = Import(b);
  const std::string text = Print(model);
  EXPECT_NE(text.find("quantize(%x) {scale = 0.5, to = s8, zero_point = 3}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{axis = 0, scale = [1.0, 2.0], zero_point = [0, 1]}"),
            std::string::npos)
      << text;
  // q = x / 0.5 + 3 = [5, 7, 9, 11]; row 0: (q - 0) * 1, row 1: (q - 1) * 2.
  EXPECT_EQ(Values(RunModel(model, {F32({2, 2}, {1, 2, 3, 4})})),
            std::vector<float>({5, 7, 16, 20}));
}

TEST(OnnxImportTest, CastIdentityDropoutAndConstant) {
  ModelBuilder b(13);
  b.Input("x", {int64_t{2}});
  onnx::NodeProto* c = b.Node("Constant", {}, {"two"});
  SetFloat(c, "value_float", 2.0f);
  b.Node("Mul", {"x", "two"}, {"m"});
  b.Node("Dropout", {"m"}, {"d"});
  b.Node("Identity", {"d"}, {"i"});
  SetInt(b.Node("Cast", {"i"}, {"y"}), "to", TensorProto::BFLOAT16);
  b.Output("y");
  OnnxModel model = Import(b);
  Tensor y = RunModel(model, {F32({2}, {1.5, -3})});
  EXPECT_EQ(y.type().ToString(), "bf16[2]");
  EXPECT_EQ(Values(y), std::vector<float>({3, -6}));
}

TEST(OnnxImportTest, NamesAreSanitizedAndMadeUnique) {
  EXPECT_EQ(SanitizeOnnxName("input.1"), "input_1");
  EXPECT_EQ(SanitizeOnnxName("0"), "_0");
  EXPECT_EQ(SanitizeOnnxName(""), "_");
  ModelBuilder b(13, "torch-jit");
  b.Input("input.1", {int64_t{2}});
  b.Input("input_1", {int64_t{2}});
  b.Node("Add", {"input.1", "input_1"}, {"/out:0"});
  b.Output("/out:0");
  OnnxModel model = Import(b);
  EXPECT_EQ(Print(model),
            "graph @torch_jit(%input_1: f32[2], %input_1_1: f32[2]) -> f32[2] "
            "{\n"
            "  %_out_0 = add(%input_1, %input_1_1) : f32[2]\n"
            "  return %_out_0\n"
            "}\n");
  EXPECT_EQ(model.input_names[1],
            std::make_pair(std::string("input_1"), std::string("input_1_1")));
}

TEST(OnnxImportTest, SymbolicDimensionsAreBoundByOption) {
  ModelBuilder b;
  b.Input("x", {std::string("batch"), int64_t{4}});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  OnnxImportOptions options;
  options.dims["batch"] = 3;
  absl::StatusOr<OnnxModel> model = b.Import(options);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->module.graphs()[0]->param(0)->type().ToString(),
            "f32[3, 4]");
}

}  // namespace
}  // namespace hgc
