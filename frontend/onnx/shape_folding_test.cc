// Shape chains fold at import: the int64 ops torch emits around Reshape
// (Shape, Gather, Slice, Concat, Range, ConstantOfShape, Equal, Where,
// Cast, arithmetic) leave no trace in the graph but Reshape's shape.
#include <string>
#include <vector>

#include "frontend/onnx/onnx_import.h"
#include "frontend/onnx/onnx_test_util.h"
#include "gtest/gtest.h"

namespace hgc {
namespace {

using onnx::TensorProto;
using onnx_test::ModelBuilder;
using onnx_test::Print;
using onnx_test::SetInt;
using onnx_test::SetInts;
using onnx_test::SetTensor;

std::string ResultType(const ModelBuilder& b) {
  absl::StatusOr<OnnxModel> model = b.Import();
  EXPECT_TRUE(model.ok()) << model.status().message();
  if (!model.ok()) return "";
  const Graph& graph = *model->module.graphs()[0];
  EXPECT_EQ(graph.ops().size(), 1u) << Print(*model);
  return graph.results()[0]->type().ToString();
}

TEST(ShapeFoldingTest, SliceWithNegativeIndicesAndSteps) {
  // shape [2, 3, 4, 5][-2:] = [4, 5]; reversed [5, 4]; then [5, 4, -1].
  ModelBuilder b(13);
  b.Input("x", {int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}});
  b.Int64s("start", {1}, {-2});
  b.Int64s("end", {1}, {INT64_MAX});
  b.Int64s("rstart", {1}, {-1});
  b.Int64s("rend", {1}, {INT64_MIN});
  b.Int64s("axes", {1}, {0});
  b.Int64s("rstep", {1}, {-1});
  b.Int64s("rest", {1}, {-1});
  b.Node("Shape", {"x"}, {"s"});
  b.Node("Slice", {"s", "start", "end"}, {"tail"});
  b.Node("Slice", {"tail", "rstart", "rend", "axes", "rstep"}, {"reversed"});
  SetInt(b.Node("Concat", {"reversed", "rest"}, {"target"}), "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"y"});
  b.Output("y");
  EXPECT_EQ(ResultType(b), "f32[5, 4, 6]");
}

TEST(ShapeFoldingTest, SplitSizesByOpset) {
  // x: [2, 2, 3, 4]; its shape split, the tail and -1 reshape x.
  struct Case {
    int64_t opset;
    const char* result;
  };
  // Sizes [1, 3] (attribute before 13, input from 13): tail [2, 3, 4].
  // Opset 18 without sizes: two equal parts, tail [3, 4].
  for (Case c : {Case{11, "f32[2, 3, 4, 2]"}, Case{13, "f32[2, 3, 4, 2]"},
                 Case{18, "f32[3, 4, 4]"}}) {
    ModelBuilder b(c.opset);
    b.Input("x", {int64_t{2}, int64_t{2}, int64_t{3}, int64_t{4}});
    b.Int64s("rest", {1}, {-1});
    b.Node("Shape", {"x"}, {"s"});
    if (c.opset < 13) {
      SetInts(b.Node("Split", {"s"}, {"head", "tail"}), "split", {1, 3});
    } else if (c.opset < 18) {
      b.Int64s("sizes", {2}, {1, 3});
      b.Node("Split", {"s", "sizes"}, {"head", "tail"});
    } else {
      b.Node("Split", {"s"}, {"head", "tail"});
    }
    SetInt(b.Node("Concat", {"tail", "rest"}, {"target"}), "axis", 0);
    b.Node("Reshape", {"x", "target"}, {"y"});
    b.Output("y");
    EXPECT_EQ(ResultType(b), c.result) << "opset " << c.opset;
  }
}

TEST(ShapeFoldingTest, GatherConcatMulGiveTheShape) {
  // Reshape x [2, 3, 4] to [s0 * s1, s2].
  ModelBuilder b(13);
  b.Input("x", {int64_t{2}, int64_t{3}, int64_t{4}});
  b.Int64s("i0", {1}, {0});
  b.Int64s("i1", {1}, {1});
  b.Int64s("i2", {1}, {-1});
  b.Node("Shape", {"x"}, {"s"});
  b.Node("Gather", {"s", "i0"}, {"d0"});
  b.Node("Gather", {"s", "i1"}, {"d1"});
  b.Node("Gather", {"s", "i2"}, {"d2"});
  b.Node("Mul", {"d0", "d1"}, {"rows"});
  SetInt(b.Node("Concat", {"rows", "d2"}, {"target"}), "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"y"});
  b.Output("y");
  EXPECT_EQ(ResultType(b), "f32[6, 4]");
}

TEST(ShapeFoldingTest, EqualWhereAndConstantOfShape) {
  // torch's expand/view guard: Where(Equal(shape, -1), ones, shape).
  ModelBuilder b(13);
  b.Input("x", {int64_t{6}});
  b.Int64s("want", {2}, {-1, 2});
  b.Int64s("minus1", {}, {-1});
  b.Int64s("two", {1}, {2});
  b.Node("Equal", {"want", "minus1"}, {"is_free"});
  onnx::NodeProto* ones = b.Node("ConstantOfShape", {"two"}, {"ones"});
  TensorProto one;
  one.set_data_type(TensorProto::INT64);
  one.add_dims(1);
  one.add_int64_data(3);
  SetTensor(ones, "value", one);
  b.Node("Where", {"is_free", "ones", "want"}, {"target"});  // [3, 2]
  b.Node("Reshape", {"x", "target"}, {"y"});
  b.Output("y");
  EXPECT_EQ(ResultType(b), "f32[3, 2]");
}

TEST(ShapeFoldingTest, RangeAndSizeAndCastFold) {
  ModelBuilder b(13);
  b.Input("x", {int64_t{3}, int64_t{2}});
  b.Int64s("zero", {}, {0});
  b.Int64s("two", {}, {2});
  b.Int64s("one", {}, {1});
  b.Node("Range", {"zero", "two", "one"}, {"r"});  // [0, 1]
  b.Node("Size", {"r"}, {"n"});                    // 2
  SetInt(b.Node("Cast", {"n"}, {"nf"}), "to", TensorProto::FLOAT);
  SetInt(b.Node("Cast", {"nf"}, {"ni"}), "to", TensorProto::INT64);
  b.Int64s("axes", {1}, {0});
  b.Node("Unsqueeze", {"ni", "axes"}, {"n1"});
  b.Int64s("rest", {1}, {-1});
  SetInt(b.Node("Concat", {"n1", "rest"}, {"target"}), "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"y"});
  b.Output("y");
  EXPECT_EQ(ResultType(b), "f32[2, 3]");
}

TEST(ShapeFoldingTest, ScaleFromTheHeadSizeFoldsToALiteral) {
  // 1 / sqrt(float(shape[-1])) as torch computes an attention scale.
  ModelBuilder b(13);
  b.Input("x", {int64_t{2}, int64_t{16}});
  b.Int64s("last", {}, {-1});
  b.Node("Shape", {"x"}, {"s"});
  b.Node("Gather", {"s", "last"}, {"d"});
  SetInt(b.Node("Cast", {"d"}, {"df"}), "to", TensorProto::FLOAT);
  b.Node("Sqrt", {"df"}, {"root"});
  b.Node("Div", {"x", "root"}, {"y"});
  b.Output("y");
  absl::StatusOr<OnnxModel> model = b.Import();
  ASSERT_TRUE(model.ok()) << model.status().message();
  const std::string text = Print(*model);
  EXPECT_NE(text.find("constant() {value = 4.0} : f32[]"), std::string::npos)
      << text;
}

TEST(ShapeFoldingTest, VariadicMaxAndReciprocalAndErf) {
  ModelBuilder b(13);
  b.Input("a", {int64_t{2}});
  b.Input("b", {int64_t{2}});
  b.Input("c", {int64_t{2}});
  b.Node("Max", {"a", "b", "c"}, {"m"});
  b.Node("Reciprocal", {"m"}, {"r"});
  b.Node("Erf", {"r"}, {"y"});
  b.Output("y");
  absl::StatusOr<OnnxModel> model = b.Import();
  ASSERT_TRUE(model.ok()) << model.status().message();
  const std::string text = Print(*model);
  EXPECT_NE(text.find("max(%0, %c)"), std::string::npos) << text;
  EXPECT_NE(text.find("div("), std::string::npos) << text;
  EXPECT_NE(text.find("erf(%r)"), std::string::npos) << text;
}

}  // namespace
}  // namespace hgc
