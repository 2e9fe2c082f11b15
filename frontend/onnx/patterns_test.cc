// Lifting decomposed LayerNorm and GELU at import: each form torch writes
// becomes one op that computes what the chain computes; near-misses stay
// as they are.
#include "frontend/onnx/patterns.h"

#include <cmath>
#include <string>
#include <vector>

#include "frontend/onnx/onnx_import.h"
#include "frontend/onnx/onnx_test_util.h"
#include "gtest/gtest.h"
#include "reference/reference_interpreter.h"

namespace hgc {
namespace {

using onnx_test::ModelBuilder;
using onnx_test::Print;
using onnx_test::SetInts;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The text of `b`'s import with patterns lifted (or not).
std::string Imported(const ModelBuilder& b, bool lift = true) {
  OnnxImportOptions options;
  options.lift_patterns = lift;
  absl::StatusOr<OnnxModel> model = b.Import(options);
  EXPECT_TRUE(model.ok()) << model.status().message();
  return model.ok() ? Print(*model) : "";
}

// Output 0 of `b`'s import on x = 0.25 * i - 3 for element i.
std::vector<float> Run(const ModelBuilder& b, bool lift) {
  OnnxImportOptions options;
  options.lift_patterns = lift;
  absl::StatusOr<OnnxModel> model = b.Import(options);
  EXPECT_TRUE(model.ok()) << model.status().message();
  if (!model.ok()) return {};
  const Graph& graph = *model->module.graphs()[0];
  std::vector<Tensor> inputs;
  Tensor x = *Tensor::Create(graph.param(0)->type());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    x.mutable_data<float>()[i] = 0.25f * static_cast<float>(i) - 3.0f;
  }
  inputs.push_back(std::move(x));
  for (int i = 1; i < graph.num_params(); ++i) {
    inputs.push_back(model->constants.at(graph.param(i)->name()));
  }
  absl::StatusOr<std::vector<Tensor>> out = Interpret(graph, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  std::vector<float> values;
  if (!out.ok()) return values;
  for (int64_t i = 0; i < (*out)[0].num_elements(); ++i) {
    values.push_back(static_cast<float>((*out)[0].GetDouble(i)));
  }
  return values;
}

// The lifted and the literal import compute the same values.
void ExpectSameValues(const ModelBuilder& b) {
  const std::vector<float> lifted = Run(b, true);
  const std::vector<float> literal = Run(b, false);
  ASSERT_EQ(lifted.size(), literal.size());
  ASSERT_FALSE(lifted.empty());
  for (size_t i = 0; i < lifted.size(); ++i) {
    EXPECT_NEAR(lifted[i], literal[i], 1e-5 * (1 + std::abs(literal[i])))
        << "element " << i;
  }
}

struct LayerNormForm {
  std::vector<int64_t> axes = {-1};
  bool affine_first = false;  // Mul(gamma, n) and Add(beta, s)
  bool beta = true;
  std::string also_returned;  // an intermediate that is an output too
};

// x: f32[2, 3, 4]; LayerNorm over `axes` as torch writes it at opset 14.
ModelBuilder LayerNormModel(const LayerNormForm& f) {
  ModelBuilder b(14, "ln");
  b.Input("x", {int64_t{2}, int64_t{3}, int64_t{4}});
  const bool two = f.axes.size() == 2;
  std::vector<float> gamma(two ? 12 : 4), beta(gamma.size());
  for (size_t i = 0; i < gamma.size(); ++i) {
    gamma[i] = 1.0f + 0.1f * i;
    beta[i] = 0.05f * i - 0.2f;
  }
  const std::vector<int64_t> dims =
      two ? std::vector<int64_t>{3, 4} : std::vector<int64_t>{4};
  b.Floats("gamma", dims, gamma);
  b.Floats("beta", dims, beta);
  b.Floats("two", {}, {2});
  b.Floats("eps", {}, {1e-5f});
  SetInts(b.Node("ReduceMean", {"x"}, {"mean"}), "axes", f.axes);
  b.Node("Sub", {"x", "mean"}, {"d"});
  b.Node("Pow", {"d", "two"}, {"sq"});
  SetInts(b.Node("ReduceMean", {"sq"}, {"var"}), "axes", f.axes);
  b.Node("Add", {"var", "eps"}, {"ve"});
  b.Node("Sqrt", {"ve"}, {"std"});
  b.Node("Div", {"d", "std"}, {"n"});
  if (f.affine_first) {
    b.Node("Mul", {"gamma", "n"}, {"s"});
  } else {
    b.Node("Mul", {"n", "gamma"}, {"s"});
  }
  if (f.beta && f.affine_first) b.Node("Add", {"beta", "s"}, {"y"});
  if (f.beta && !f.affine_first) b.Node("Add", {"s", "beta"}, {"y"});
  b.Output(f.beta ? "y" : "s");
  if (!f.also_returned.empty()) b.Output(f.also_returned);
  return b;
}

TEST(PatternsTest, TorchLayerNormBecomesLayernorm) {
  const ModelBuilder b = LayerNormModel({});
  const std::string text = Imported(b);
  EXPECT_TRUE(Contains(text, "%y = layernorm(%x, %gamma, %beta) {epsilon = "))
      << text;
  EXPECT_FALSE(Contains(text, "reduce_mean")) << text;
  EXPECT_FALSE(Contains(text, "constant")) << text;
  ExpectSameValues(b);
}

TEST(PatternsTest, LayerNormOverTwoAxesWithAffineOperandsFirst) {
  LayerNormForm f;
  f.axes = {1, -1};
  f.affine_first = true;
  const ModelBuilder b = LayerNormModel(f);
  const std::string text = Imported(b);
  EXPECT_TRUE(Contains(text, "layernorm(%x, %gamma, %beta) {axis = -2,"))
      << text;
  ExpectSameValues(b);
}

TEST(PatternsTest, LiteralImportKeepsTheChain) {
  const std::string text = Imported(LayerNormModel({}), /*lift=*/false);
  EXPECT_TRUE(Contains(text, "%mean = reduce_mean(%x)")) << text;
  EXPECT_FALSE(Contains(text, "layernorm")) << text;
}

TEST(PatternsTest, LayerNormNearMissesStay) {
  // An intermediate read elsewhere, a leading axis, no beta.
  std::vector<LayerNormForm> forms(3);
  forms[0].also_returned = "d";
  forms[1].axes = {1};
  forms[2].beta = false;
  for (const LayerNormForm& f : forms) {
    const std::string text = Imported(LayerNormModel(f));
    EXPECT_FALSE(Contains(text, "layernorm")) << text;
    EXPECT_TRUE(Contains(text, "reduce_mean")) << text;
  }
}

struct GeluErfForm {
  float sqrt2 = 1.4142135f;
  float half = 0.5f;
  bool reordered = false;  // x * 0.5 first; erf(x * (1/sqrt(2)))
  bool erf_returned = false;
};

// x: f32[3, 5]; GELU through erf.
ModelBuilder GeluErfModel(const GeluErfForm& f) {
  ModelBuilder b(17, "act");
  b.Input("x", {int64_t{3}, int64_t{5}});
  b.Floats("one", {}, {1});
  b.Floats("half", {}, {f.half});
  if (f.reordered) {
    b.Floats("inv_sqrt2", {}, {1.0f / f.sqrt2});
    b.Node("Mul", {"inv_sqrt2", "x"}, {"u"});
    b.Node("Erf", {"u"}, {"e"});
    b.Node("Add", {"one", "e"}, {"a"});
    b.Node("Mul", {"x", "half"}, {"h"});
    b.Node("Mul", {"h", "a"}, {"y"});
  } else {
    b.Floats("sqrt2", {}, {f.sqrt2});
    b.Node("Div", {"x", "sqrt2"}, {"u"});
    b.Node("Erf", {"u"}, {"e"});
    b.Node("Add", {"e", "one"}, {"a"});
    b.Node("Mul", {"x", "a"}, {"m"});
    b.Node("Mul", {"m", "half"}, {"y"});
  }
  b.Output("y");
  if (f.erf_returned) b.Output("e");
  return b;
}

TEST(PatternsTest, ErfGeluFormsBecomeGelu) {
  for (bool reordered : {false, true}) {
    GeluErfForm f;
    f.reordered = reordered;
    const ModelBuilder b = GeluErfModel(f);
    const std::string text = Imported(b);
    EXPECT_TRUE(Contains(text, "%y = gelu(%x) : f32[3, 5]")) << text;
    EXPECT_FALSE(Contains(text, "erf")) << text;
    ExpectSameValues(b);
  }
}

TEST(PatternsTest, ErfGeluNearMissesStay) {
  // A wrong 1/sqrt(2), a wrong 0.5, erf's result read elsewhere.
  std::vector<GeluErfForm> forms(3);
  forms[0].sqrt2 = 1.5f;
  forms[1].half = 0.6f;
  forms[2].reordered = forms[2].erf_returned = true;
  for (const GeluErfForm& f : forms) {
    const std::string text = Imported(GeluErfModel(f));
    EXPECT_FALSE(Contains(text, "gelu(")) << text;
    EXPECT_TRUE(Contains(text, "erf(%u)")) << text;
  }
}

// x: f32[3, 5]; GELU's tanh form as torch writes it.
ModelBuilder GeluTanhModel(float kappa) {
  ModelBuilder b(17, "act");
  b.Input("x", {int64_t{3}, int64_t{5}});
  b.Floats("kappa", {}, {kappa});
  b.Floats("beta", {}, {0.7978845608f});
  b.Floats("one", {}, {1});
  b.Floats("half", {}, {0.5f});
  b.Node("Mul", {"x", "x"}, {"x2"});
  b.Node("Mul", {"x", "x2"}, {"x3"});
  b.Node("Mul", {"kappa", "x3"}, {"k"});
  b.Node("Add", {"x", "k"}, {"i"});
  b.Node("Mul", {"beta", "i"}, {"s"});
  b.Node("Tanh", {"s"}, {"t"});
  b.Node("Add", {"one", "t"}, {"a"});
  b.Node("Mul", {"x", "a"}, {"m"});
  b.Node("Mul", {"half", "m"}, {"y"});
  b.Output("y");
  return b;
}

TEST(PatternsTest, TanhGeluBecomesGeluTanh) {
  const ModelBuilder b = GeluTanhModel(0.044715f);
  const std::string text = Imported(b);
  EXPECT_TRUE(Contains(text, "%y = gelu(%x) {approximate = \"tanh\"}"))
      << text;
  EXPECT_FALSE(Contains(text, "tanh(")) << text;
  ExpectSameValues(b);
}

TEST(PatternsTest, TanhGeluWithAnotherConstantStays) {
  const std::string text = Imported(GeluTanhModel(0.05f));
  EXPECT_FALSE(Contains(text, "gelu(")) << text;
  EXPECT_TRUE(Contains(text, "tanh(%s)")) << text;
}

TEST(PatternsTest, LiftPatternsCountsWhatItRewrote) {
  OnnxImportOptions literal;
  literal.lift_patterns = false;
  absl::StatusOr<OnnxModel> model = GeluTanhModel(0.044715f).Import(literal);
  ASSERT_TRUE(model.ok()) << model.status().message();
  absl::StatusOr<LiftedPatterns> lifted =
      LiftPatterns(*model->module.graphs()[0]);
  ASSERT_TRUE(lifted.ok()) << lifted.status().message();
  EXPECT_EQ(lifted->gelu, 1);
  EXPECT_EQ(lifted->layernorm, 0);
  EXPECT_EQ(model->lifted_patterns, 0);
  EXPECT_EQ(GeluTanhModel(0.044715f).Import()->lifted_patterns, 1);
}

}  // namespace
}  // namespace hgc
