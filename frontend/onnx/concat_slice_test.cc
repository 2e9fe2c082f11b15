// Concat, Slice and Split of tensors computed at run time: each model is
// imported, run on the reference interpreter and compared with numpy's
// result, computed here with index lists.
#include <cstdint>
#include <limits>
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
using onnx_test::SetInt;
using onnx_test::SetInts;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// A row-major [rows, cols] matrix of floats.
struct Matrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<float> values;
};

// first, first + step, ... up to (not including) `end`, as numpy's range.
std::vector<int64_t> Range(int64_t first, int64_t end, int64_t step = 1) {
  std::vector<int64_t> out;
  for (int64_t i = first; step > 0 ? i < end : i > end; i += step) {
    out.push_back(i);
  }
  return out;
}

Matrix Iota(int64_t rows, int64_t cols, float base = 0) {
  Matrix m{rows, cols, {}};
  for (int64_t i = 0; i < rows * cols; ++i) m.values.push_back(base + i);
  return m;
}

// numpy's m[np.ix_(rows, cols)].
Matrix Take(const Matrix& m, const std::vector<int64_t>& rows,
            const std::vector<int64_t>& cols) {
  Matrix out{
      static_cast<int64_t>(rows.size()), static_cast<int64_t>(cols.size()), {}};
  for (int64_t r : rows) {
    for (int64_t c : cols) out.values.push_back(m.values[r * m.cols + c]);
  }
  return out;
}

// numpy's concatenate of 2-D matrices on axis 0 or 1.
Matrix Concatenate(const std::vector<Matrix>& parts, int64_t axis) {
  Matrix out{parts[0].rows, parts[0].cols, {}};
  if (axis == 0) {
    out.rows = 0;
    for (const Matrix& p : parts) {
      out.rows += p.rows;
      out.values.insert(out.values.end(), p.values.begin(), p.values.end());
    }
    return out;
  }
  out.cols = 0;
  for (const Matrix& p : parts) out.cols += p.cols;
  for (int64_t r = 0; r < out.rows; ++r) {
    for (const Matrix& p : parts) {
      out.values.insert(out.values.end(), p.values.begin() + r * p.cols,
                        p.values.begin() + (r + 1) * p.cols);
    }
  }
  return out;
}

Tensor ToTensor(const Matrix& m) {
  Tensor t = *Tensor::Create(TensorType(DType::kF32, Shape{m.rows, m.cols}));
  for (size_t i = 0; i < m.values.size(); ++i) {
    t.mutable_data<float>()[i] = m.values[i];
  }
  return t;
}

// The tensor as a matrix; error (an empty matrix) when it is not 2-D.
Matrix ToMatrix(const Tensor& t) {
  const Shape& s = t.type().shape;
  EXPECT_EQ(s.size(), 2u) << t.type().ToString();
  if (s.size() != 2) return Matrix();
  Matrix m{s[0], s[1], {}};
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    m.values.push_back(static_cast<float>(t.GetDouble(i)));
  }
  return m;
}

void ExpectEqual(const Matrix& got, const Matrix& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_EQ(got.values, want.values);
}

// Imports `b` and runs it on `inputs` (the model's inputs, in order), the
// const parameters bound to the initializers; returns every output.
std::vector<Tensor> RunModel(const ModelBuilder& b, std::vector<Tensor> inputs,
                             std::string* text = nullptr) {
  absl::StatusOr<OnnxModel> model = b.Import();
  EXPECT_TRUE(model.ok()) << model.status().message();
  if (!model.ok()) return {};
  if (text != nullptr) *text = Print(*model);
  const Graph& graph = *model->module.graphs()[0];
  for (int i = static_cast<int>(inputs.size()); i < graph.num_params(); ++i) {
    inputs.push_back(model->constants.at(graph.param(i)->name()));
  }
  absl::StatusOr<std::vector<Tensor>> out = Interpret(graph, inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>();
}

TEST(ConcatSliceTest, ConcatOfTwoAndThreeInputsOnAxis0AndMinus1) {
  const Matrix a = Iota(2, 3), b = Iota(2, 3, 100), w = Iota(2, 1, -5);
  for (int64_t axis : {0, -1}) {
    // Two run-time inputs.
    ModelBuilder two;
    two.Input("a", {int64_t{2}, int64_t{3}});
    two.Input("b", {int64_t{2}, int64_t{3}});
    SetInt(two.Node("Concat", {"a", "b"}, {"y"}), "axis", axis);
    two.Output("y");
    std::vector<Tensor> out = RunModel(two, {ToTensor(a), ToTensor(b)});
    ASSERT_EQ(out.size(), 1u);
    ExpectEqual(ToMatrix(out[0]), Concatenate({a, b}, axis == 0 ? 0 : 1));
    // Three, one of them an initializer between the run-time ones.
    const Matrix c = axis == 0 ? Iota(1, 3, -5) : w;
    ModelBuilder three;
    three.Input("a", {int64_t{2}, int64_t{3}});
    three.Input("b", {int64_t{2}, int64_t{3}});
    three.Floats("c", {c.rows, c.cols}, c.values);
    SetInt(three.Node("Concat", {"a", "c", "b"}, {"y"}), "axis", axis);
    three.Output("y");
    std::string text;
    out = RunModel(three, {ToTensor(a), ToTensor(b)}, &text);
    ASSERT_EQ(out.size(), 1u);
    ExpectEqual(ToMatrix(out[0]), Concatenate({a, c, b}, axis == 0 ? 0 : 1));
    EXPECT_NE(text.find(axis == 0 ? "concat(%a, %c, %b) {axis = 0}"
                                  : "concat(%a, %c, %b) {axis = 1}"),
              std::string::npos)
        << text;
  }
}

TEST(ConcatSliceTest, ConcatOfOneInputAndOfIntegers) {
  ModelBuilder b;
  b.Input("x", {int64_t{2}, int64_t{2}}, TensorProto::INT32);
  SetInt(b.Node("Concat", {"x"}, {"one"}), "axis", 1);
  SetInt(b.Node("Concat", {"one", "x"}, {"y"}), "axis", 1);
  b.Output("y");
  Tensor x = *Tensor::Create(TensorType(DType::kS32, Shape{2, 2}));
  for (int i = 0; i < 4; ++i) x.mutable_data<int32_t>()[i] = i - 1;
  std::vector<Tensor> out = RunModel(b, {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type().ToString(), "s32[2, 4]");
  ExpectEqual(ToMatrix(out[0]), Matrix{2, 4, {-1, 0, -1, 0, 1, 2, 1, 2}});
}

// Slices of x = iota [3, 4] (opset 13): starts, ends, axes, steps.
struct SliceCase {
  std::vector<int64_t> starts, ends, axes, steps;
  std::vector<int64_t> rows, cols;  // what numpy reads
};

TEST(ConcatSliceTest, SliceWithNegativeIndicesExtremeBoundsAxesAndSteps) {
  const Matrix x = Iota(3, 4);
  const SliceCase cases[] = {
      // x[:, -2:]
      {{-2}, {kMax}, {-1}, {}, Range(0, 3), Range(2, 4)},
      // x[1:, :-1] with default axes
      {{1, 0}, {kMax, -1}, {}, {}, Range(1, 3), Range(0, 3)},
      // x[::-1]: INT64_MIN ends a backward slice past the first element.
      {{-1}, {kMin}, {0}, {-1}, Range(2, -1, -1), Range(0, 4)},
      // x[0::2, 3:0:-2]
      {{0, 3}, {3, 0}, {0, 1}, {2, -2}, Range(0, 3, 2), Range(3, 0, -2)},
      // Out-of-range bounds clamp: x[5:, -100:100] is empty.
      {{5, -100}, {kMax, 100}, {}, {}, {}, Range(0, 4)},
      // ONNX (unlike numpy) clamps a backward start before the first
      // element to 0: columns 0 down to (not including) -1.
      {{-10}, {-20}, {1}, {-1}, Range(0, 3), Range(0, -1, -1)},
  };
  for (const SliceCase& c : cases) {
    ModelBuilder b(13);
    b.Input("x", {int64_t{3}, int64_t{4}});
    const int64_t n = c.starts.size();
    b.Int64s("starts", {n}, c.starts);
    b.Int64s("ends", {n}, c.ends);
    std::vector<std::string> inputs = {"x", "starts", "ends"};
    if (!c.axes.empty() || !c.steps.empty()) {
      b.Int64s("axes", {n}, c.axes.empty() ? Range(0, n) : c.axes);
      inputs.push_back("axes");
    }
    if (!c.steps.empty()) {
      b.Int64s("steps", {n}, c.steps);
      inputs.push_back("steps");
    }
    b.Node("Slice", inputs, {"y"});
    b.Output("y");
    std::vector<Tensor> out = RunModel(b, {ToTensor(x)});
    ASSERT_EQ(out.size(), 1u);
    ExpectEqual(ToMatrix(out[0]), Take(x, c.rows, c.cols));
  }
}

TEST(ConcatSliceTest, SliceBeforeOpset10TakesAttributes) {
  const Matrix x = Iota(3, 4);
  ModelBuilder b(9);
  b.Input("x", {int64_t{3}, int64_t{4}});
  onnx::NodeProto* slice = b.Node("Slice", {"x"}, {"y"});
  SetInts(slice, "starts", {-3, 1});
  SetInts(slice, "ends", {-1, kMax});
  SetInts(slice, "axes", {1, 0});
  b.Output("y");
  std::string text;
  std::vector<Tensor> out = RunModel(b, {ToTensor(x)}, &text);
  ASSERT_EQ(out.size(), 1u);
  ExpectEqual(ToMatrix(out[0]), Take(x, Range(1, 3), Range(1, 3)));
  EXPECT_NE(text.find("slice(%x) {axes = [1, 0], ends = [-1, "
                      "9223372036854775807], starts = [-3, 1]}"),
            std::string::npos)
      << text;
}

// Splits x = iota [2, 7] on axis 1 at each opset's form; `sizes` are the
// parts expected.
void ExpectSplit(const ModelBuilder& b, const std::vector<int64_t>& sizes) {
  const Matrix x = Iota(2, 7);
  std::vector<Tensor> out = RunModel(b, {ToTensor(x)});
  ASSERT_EQ(out.size(), sizes.size());
  int64_t offset = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    ExpectEqual(ToMatrix(out[k]),
                Take(x, Range(0, 2), Range(offset, offset + sizes[k])));
    offset += sizes[k];
  }
}

ModelBuilder SplitModel(int64_t opset, int parts, int64_t axis = 1) {
  ModelBuilder b(opset);
  b.Input("x", {int64_t{2}, int64_t{7}});
  std::vector<std::string> outputs;
  for (int k = 0; k < parts; ++k) outputs.push_back("y" + std::to_string(k));
  SetInt(b.Node("Split", {"x"}, outputs, "split"), "axis", axis);
  for (const std::string& o : outputs) b.Output(o);
  return b;
}

TEST(ConcatSliceTest, SplitEqualAndExplicitAtEachOpset) {
  // Before 13: the sizes as an attribute.
  ModelBuilder attr = SplitModel(11, 3, -1);
  SetInts(attr.graph().mutable_node(0), "split", {2, 0, 5});
  ExpectSplit(attr, {2, 0, 5});
  // From 13: an input.
  ModelBuilder input = SplitModel(13, 2);
  input.Int64s("sizes", {2}, {3, 4});
  input.graph().mutable_node(0)->add_input("sizes");
  ExpectSplit(input, {3, 4});
  // Equal parts: 7 does not split in 7 / 1 parts only before 18.
  ExpectSplit(SplitModel(13, 1), {7});
  // From 18: num_outputs, the last part smaller.
  ModelBuilder ceil = SplitModel(18, 3);
  SetInt(ceil.graph().mutable_node(0), "num_outputs", 3);
  ExpectSplit(ceil, {3, 3, 1});
}

TEST(ConcatSliceTest, SplitOnAxis0InEqualParts) {
  ModelBuilder b(13);
  b.Input("x", {int64_t{4}, int64_t{2}});
  b.Node("Split", {"x"}, {"top", "bottom"});
  b.Output("bottom");
  std::string text;
  const Matrix x = Iota(4, 2);
  std::vector<Tensor> out = RunModel(b, {ToTensor(x)}, &text);
  ASSERT_EQ(out.size(), 1u);
  ExpectEqual(ToMatrix(out[0]), Take(x, Range(2, 4), Range(0, 2)));
  EXPECT_NE(text.find("%bottom = slice(%x) {ends = [4], starts = [2]}"),
            std::string::npos)
      << text;
}

TEST(ConcatSliceTest, DataKnownAtImportFoldsOnlyWhileSmall) {
  // Small initializers fold into one; over 2^20 elements they stay const
  // parameters joined (and cut) by the ops.
  for (int64_t n : {int64_t{4}, int64_t{1} << 19}) {
    ModelBuilder b(13);
    b.Input("x", {int64_t{1}});
    b.Floats("a", {n}, std::vector<float>(n, 1.0f));
    b.Floats("c", {n + 1}, std::vector<float>(n + 1, 2.0f));
    SetInt(b.Node("Concat", {"a", "c"}, {"ac"}), "axis", 0);
    b.Int64s("start", {1}, {-2});
    b.Int64s("end", {1}, {kMax});
    b.Node("Slice", {"ac", "start", "end"}, {"tail"});
    b.Node("Add", {"tail", "x"}, {"y"});
    b.Output("y");
    std::string text;
    Tensor x = *Tensor::Create(TensorType(DType::kF32, Shape{1}));
    x.mutable_data<float>()[0] = 1;
    std::vector<Tensor> out = RunModel(b, {x}, &text);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type().ToString(), "f32[2]");
    EXPECT_EQ(out[0].GetDouble(0), 3);
    EXPECT_EQ(out[0].GetDouble(1), 3);
    const bool folded = n == 4;
    EXPECT_EQ(text.find("concat(") == std::string::npos, folded) << text;
    EXPECT_EQ(text.find("slice(") == std::string::npos, folded) << text;
  }
}

}  // namespace
}  // namespace hgc
