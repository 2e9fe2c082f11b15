// What the importer refuses, and how it says so (docs/onnx.md, "Errors"):
// every message names the model and the node, initializer or input.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "frontend/onnx/onnx_import.h"
#include "frontend/onnx/onnx_test_util.h"
#include "gtest/gtest.h"

namespace hgc {
namespace {

using onnx::TensorProto;
using onnx_test::ModelBuilder;
using onnx_test::SetInt;

std::string ImportError(const ModelBuilder& b,
                        const OnnxImportOptions& options = {}) {
  absl::StatusOr<OnnxModel> model = b.Import(options);
  EXPECT_FALSE(model.ok());
  return model.ok() ? "" : std::string(model.status().message());
}

TEST(OnnxErrorsTest, EveryUnsupportedOpIsListedAtOnce) {
  ModelBuilder b(17);
  b.Input("x", {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{8}});
  b.Floats("w", {4, 3, 3, 3}, std::vector<float>(108, 0.0f));
  b.Node("Conv", {"x", "w"}, {"c"}, "conv1");
  b.Node("Relu", {"c"}, {"r"}, "relu1");
  b.Node("MaxPool", {"r"}, {"p"}, "pool1");
  b.Node("Frobnicate", {"p"}, {"y"}, "f")->set_domain("com.example");
  b.Output("y");
  EXPECT_EQ(ImportError(b),
            "m.onnx: node #0 'conv1' (Conv, opset 17): error: unsupported op\n"
            "m.onnx: node #2 'pool1' (MaxPool, opset 17): error: unsupported "
            "op\n"
            "m.onnx: node #3 'f' (com.example:Frobnicate): error: domain "
            "'com.example' is not in the model's opset_import");
}

TEST(OnnxErrorsTest, OpsOutsideTheirOpsetsAreUnsupported) {
  ModelBuilder b(17);
  b.Input("x", {int64_t{2}});
  b.Node("Gelu", {"x"}, {"y"}, "g");  // Gelu arrived in opset 20
  b.Output("y");
  EXPECT_EQ(ImportError(b),
            "m.onnx: node #0 'g' (Gelu, opset 17): error: unsupported op");
}

TEST(OnnxErrorsTest, ModelOpsetOutOfRange) {
  ModelBuilder b(6);
  b.Input("x", {int64_t{2}});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  EXPECT_EQ(ImportError(b),
            "m.onnx: error: opset 6 is not supported (7 to 21 are)");
}

TEST(OnnxErrorsTest, CorruptOrTruncatedProtobuf) {
  ModelBuilder b;
  b.Input("x", {int64_t{2}});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  const std::string bytes = b.Serialize();
  for (const std::string& bad :
       {bytes.substr(0, bytes.size() - 3), std::string("\xff\xff\xff\xff")}) {
    absl::StatusOr<OnnxModel> model = ImportOnnxBytes(bad, "m.onnx", "");
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.status().message(),
              "m.onnx: error: not a valid ONNX model (the protobuf is "
              "truncated or corrupt)");
  }
}

TEST(OnnxErrorsTest, InitializerDataMustMatchItsDims) {
  ModelBuilder b;
  b.Input("x", {int64_t{4}});
  b.Floats("w", {4}, {1, 2, 3});
  b.Node("Add", {"x", "w"}, {"y"});
  b.Output("y");
  EXPECT_EQ(ImportError(b),
            "m.onnx: initializer 'w': error: holds 12 bytes of data, but dims "
            "[4] of FLOAT need 16");
  ModelBuilder typed;
  typed.Input("x", {int64_t{2}});
  typed.Int64s("s", {2}, {1});
  typed.Node("Reshape", {"x", "s"}, {"y"});
  typed.Output("y");
  EXPECT_EQ(ImportError(typed),
            "m.onnx: initializer 's': error: holds 1 values, but dims [2] "
            "need 2");
}

TEST(OnnxErrorsTest, UnboundSymbolicDimensionSaysHowToBindIt) {
  ModelBuilder b;
  b.Input("x", {std::string("batch"), int64_t{4}});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  EXPECT_EQ(ImportError(b),
            "m.onnx: input 'x': error: dimension 'batch' is symbolic; give "
            "its size with --dim batch=N");
}

TEST(OnnxErrorsTest, Int64InputsAndRunTimeInt64Tensors) {
  ModelBuilder input;
  input.Input("ids", {int64_t{2}}, TensorProto::INT64);
  input.Node("Identity", {"ids"}, {"y"});
  input.Output("y");
  EXPECT_EQ(ImportError(input),
            "m.onnx: input 'ids': error: element type INT64 is not supported "
            "as an input (hgc has no such dtype)");
  ModelBuilder cast;
  cast.Input("x", {int64_t{2}});
  SetInt(cast.Node("Cast", {"x"}, {"as_int"}, "c"), "to", TensorProto::INT64);
  cast.Output("as_int");
  EXPECT_EQ(ImportError(cast),
            "m.onnx: node #0 'c' (Cast, opset 17): error: tensor 'as_int' is "
            "INT64 and is computed at run time: hgc has no 64-bit integer "
            "dtype, and only int64 shape chains that fold at import are "
            "supported");
}

TEST(OnnxErrorsTest, UnsupportedFormsOfSupportedOps) {
  ModelBuilder gather;
  gather.Input("a", {int64_t{3}});
  gather.Int64s("i", {1}, {2});
  gather.Node("Gather", {"a", "i"}, {"y"}, "g");
  gather.Output("y");
  EXPECT_EQ(ImportError(gather),
            "m.onnx: node #0 'g' (Gather, opset 17): error: Gather of a "
            "tensor computed at run time ('a') is not supported yet: hgc has "
            "no gather op, and only shape chains known at import fold");
  // The slice op takes its bounds as attributes.
  ModelBuilder slice;
  slice.Input("x", {int64_t{4}});
  slice.Input("from", {int64_t{1}}, TensorProto::INT32);
  slice.Int64s("to", {1}, {3});
  slice.Node("Slice", {"x", "from", "to"}, {"y"}, "s");
  slice.Output("y");
  EXPECT_EQ(ImportError(slice),
            "m.onnx: node #0 's' (Slice, opset 17): error: the starts input "
            "'from' is computed at run time; hgc needs it known at import (a "
            "constant, or a shape chain that folds), since the slice op takes "
            "its bounds as attributes");
  ModelBuilder split(18);
  split.Input("x", {int64_t{4}});
  SetInt(split.Node("Split", {"x"}, {"a", "b"}, "s"), "num_outputs", 3);
  split.Output("a");
  EXPECT_EQ(ImportError(split),
            "m.onnx: node #0 's' (Split, opset 18): error: 'num_outputs' is "
            "3, but the node has 2 outputs");
}

TEST(OnnxErrorsTest, UndefinedInputsAndTypeErrors) {
  ModelBuilder b;
  b.Input("x", {int64_t{2}});
  b.Node("Add", {"x", "nowhere"}, {"y"}, "add");
  b.Output("y");
  EXPECT_EQ(ImportError(b),
            "m.onnx: node #0 'add' (Add, opset 17): error: input 'nowhere' is "
            "not a graph input, an initializer or the output of an earlier "
            "node");
  ModelBuilder twice;
  twice.Input("x", {int64_t{2}});
  twice.Node("Relu", {"x"}, {"y"}, "first");
  twice.Node("Neg", {"x"}, {"y"}, "second");
  twice.Output("y");
  EXPECT_EQ(ImportError(twice),
            "m.onnx: node #1 'second' (Neg, opset 17): error: output 'y' is "
            "already defined (ONNX graphs are single-assignment)");
  ModelBuilder shapes;
  shapes.Input("x", {int64_t{2}});
  shapes.Input("z", {int64_t{3}});
  shapes.Node("Add", {"x", "z"}, {"y"}, "add");
  shapes.Output("y");
  const std::string message = ImportError(shapes);
  EXPECT_EQ(message.rfind("m.onnx: node #0 'add' (Add, opset 17): error: ", 0),
            0u)
      << message;
}

TEST(OnnxErrorsTest, HostileShapeArithmeticIsAnErrorNotACrash) {
  // INT64_MIN / -1 wraps; a huge step, a missing shape input, a Max of
  // one input without outputs and a Constant whose data is short.
  ModelBuilder b(13);
  b.Input("x", {int64_t{2}});
  b.Int64s("min", {1}, {INT64_MIN});
  b.Int64s("minus1", {1}, {-1});
  b.Node("Div", {"min", "minus1"}, {"wrapped"});
  b.Node("Max", {"x"}, {});
  b.Node("Reshape", {"x"}, {"y"}, "r");
  b.Output("y");
  EXPECT_EQ(ImportError(b),
            "m.onnx: node #2 'r' (Reshape, opset 13): error: input #1 is "
            "required");
  ModelBuilder c(13);
  c.Input("x", {int64_t{2}});
  onnx::NodeProto* k = c.Node("Constant", {}, {"k"}, "k");
  TensorProto short_data = onnx_test::FloatTensor({3}, {1, 2});
  onnx_test::SetTensor(k, "value", short_data);
  c.Node("Add", {"x", "k"}, {"y"});
  c.Output("y");
  EXPECT_EQ(ImportError(c),
            "m.onnx: node #0 'k' (Constant, opset 13): error: 'value' holds 8 "
            "bytes of data, but dims [3] of FLOAT need 12");
}

TEST(OnnxErrorsTest, DamagedBytesGiveAModelOrAnErrorNeverACrash) {
  // A model with a shape chain, every prefix of it and seeded byte flips.
  ModelBuilder b(13);
  b.Input("x", {int64_t{2}, int64_t{3}, int64_t{4}});
  b.Int64s("i", {1}, {0});
  b.Int64s("rest", {1}, {-1});
  b.Floats("w", {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  b.Node("Shape", {"x"}, {"s"});
  b.Node("Gather", {"s", "i"}, {"d"});
  SetInt(b.Node("Concat", {"d", "rest"}, {"t"}), "axis", 0);
  b.Node("MatMul", {"x", "w"}, {"m"});
  b.Node("Reshape", {"m", "t"}, {"y"});
  b.Output("y");
  const std::string bytes = b.Serialize();
  ASSERT_TRUE(ImportOnnxBytes(bytes, "m.onnx", "").ok());
  int imported = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    imported += ImportOnnxBytes(bytes.substr(0, n), "m.onnx", "").ok();
  }
  uint64_t state = 12345;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string damaged = bytes;
    for (int flips = 0; flips < 3; ++flips) {
      state = state * 6364136223846793005u + 1442695040888963407u;
      damaged[(state >> 33) % damaged.size()] ^= static_cast<char>(state >> 20);
    }
    absl::StatusOr<OnnxModel> model = ImportOnnxBytes(damaged, "m.onnx", "");
    if (!model.ok()) {
      EXPECT_EQ(model.status().message().rfind("m.onnx: ", 0), 0u)
          << model.status().message();
    }
  }
  EXPECT_LT(imported, static_cast<int>(bytes.size()));
}

// External data: files beside the model, in a scratch directory.
class ExternalDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    root_ = std::filesystem::path(tmp ? tmp : ".") / "onnx_external";
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "model");
    const std::vector<float> values = {1, 2, 3, 4};
    Write(root_ / "model" / "weights.bin",
          std::string(reinterpret_cast<const char*>(values.data()), 16));
    Write(root_ / "outside.bin", std::string(16, '\0'));
  }
  static void Write(const std::filesystem::path& path, const std::string& s) {
    std::ofstream(path, std::ios::binary) << s;
  }
  // A model adding the 4 external floats at `location` (offset `offset`)
  // to its input; written as model/m.onnx and imported.
  absl::StatusOr<OnnxModel> ImportWith(const std::string& location,
                                       const std::string& offset = "0",
                                       const std::string& length = "") {
    ModelBuilder b;
    b.Input("x", {int64_t{4}});
    TensorProto* w = b.graph().add_initializer();
    w->set_name("w");
    w->set_data_type(TensorProto::FLOAT);
    w->add_dims(4);
    w->set_data_location(TensorProto::EXTERNAL);
    auto add = [&](const std::string& key, const std::string& value) {
      onnx::StringStringEntryProto* e = w->add_external_data();
      e->set_key(key);
      e->set_value(value);
    };
    add("location", location);
    add("offset", offset);
    if (!length.empty()) add("length", length);
    b.Node("Add", {"x", "w"}, {"y"}, "add");
    b.Output("y");
    const std::filesystem::path path = root_ / "model" / "m.onnx";
    Write(path, b.Serialize());
    return ImportOnnxFile(path.string());
  }
  std::string Error(const std::string& location,
                    const std::string& offset = "0",
                    const std::string& length = "") {
    absl::StatusOr<OnnxModel> model = ImportWith(location, offset, length);
    EXPECT_FALSE(model.ok());
    const std::string message(model.status().message());
    const std::string prefix = (root_ / "model" / "m.onnx").string() +
                               ": node #0 'add' (Add, opset 17): error: ";
    EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
    return message.substr(std::min(prefix.size(), message.size()));
  }
  std::filesystem::path root_;
};

TEST_F(ExternalDataTest, ReadsAFileBesideTheModel) {
  absl::StatusOr<OnnxModel> model = ImportWith("weights.bin");
  ASSERT_TRUE(model.ok()) << model.status().message();
  const Tensor& w = model->constants.at("w");
  ASSERT_EQ(w.num_elements(), 4);
  EXPECT_EQ(w.data<float>()[3], 4.0f);
}

TEST_F(ExternalDataTest, RefusesPathsLeavingTheModelDirectory) {
  EXPECT_EQ(Error((root_ / "outside.bin").string()),
            "initializer 'w' external data file '" +
                (root_ / "outside.bin").string() +
                "': an absolute path is refused");
  EXPECT_EQ(Error("../outside.bin"),
            "initializer 'w' external data file '../outside.bin': a path "
            "through '..' is refused");
  std::filesystem::create_symlink(root_ / "outside.bin",
                                  root_ / "model" / "link.bin");
  EXPECT_EQ(Error("link.bin"),
            "initializer 'w' external data file 'link.bin': it leaves the "
            "model's directory");
}

TEST_F(ExternalDataTest, RefusesWhatIsNotARegularFileOrTooShort) {
  std::filesystem::create_directories(root_ / "model" / "dir.bin");
  EXPECT_EQ(Error("dir.bin"),
            "initializer 'w' external data file 'dir.bin': not a regular "
            "file");
  EXPECT_EQ(Error("weights.bin", "8", "16"),
            "initializer 'w' external data file 'weights.bin' holds 16 bytes, "
            "fewer than offset 8 + length 16");
  // Without a length the data runs to the end of the file: 8 bytes here.
  EXPECT_EQ(Error("weights.bin", "8"),
            "initializer 'w' holds 8 bytes of data, but dims [4] of FLOAT "
            "need 16");
  EXPECT_EQ(Error("missing.bin")
                .rfind("initializer 'w' external data file 'missing.bin': ", 0),
            0u);
}

TEST(OnnxExternalDataBytesTest, RefusedWithoutAModelDirectory) {
  ModelBuilder b;
  b.Input("x", {int64_t{1}});
  TensorProto* w = b.graph().add_initializer();
  w->set_name("w");
  w->set_data_type(TensorProto::FLOAT);
  w->add_dims(1);
  w->set_data_location(TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* e = w->add_external_data();
  e->set_key("location");
  e->set_value("w.bin");
  b.Node("Add", {"x", "w"}, {"y"}, "add");
  b.Output("y");
  EXPECT_EQ(ImportError(b),
            "m.onnx: node #0 'add' (Add, opset 17): error: initializer 'w' "
            "external data file 'w.bin': the model has no directory to read "
            "external data from");
}

}  // namespace
}  // namespace hgc
