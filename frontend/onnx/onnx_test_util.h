// Building ONNX models in tests with the protobuf API, no files needed.
#ifndef HGC_FRONTEND_ONNX_ONNX_TEST_UTIL_H_
#define HGC_FRONTEND_ONNX_ONNX_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "frontend/onnx/onnx_import.h"
#include "onnx/onnx_pb.h"

namespace hgc::onnx_test {

// A dimension: a size or a symbolic name.
using Dim = std::variant<int64_t, std::string>;

class ModelBuilder {
 public:
  // A model importing `opset` of the default domain.
  explicit ModelBuilder(int64_t opset = 17, std::string graph_name = "g");

  onnx::ModelProto& model() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  void Input(const std::string& name, const std::vector<Dim>& dims,
             int32_t elem_type = onnx::TensorProto::FLOAT);
  void Output(const std::string& name);
  // Initializers (raw little-endian data).
  onnx::TensorProto* Floats(const std::string& name,
                            const std::vector<int64_t>& dims,
                            const std::vector<float>& values);
  onnx::TensorProto* Int64s(const std::string& name,
                            const std::vector<int64_t>& dims,
                            const std::vector<int64_t>& values);
  onnx::TensorProto* Bytes(const std::string& name, int32_t elem_type,
                           const std::vector<int64_t>& dims,
                           const std::vector<int8_t>& values);
  onnx::NodeProto* Node(const std::string& op_type,
                        const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs,
                        const std::string& name = "");
  void Opset(const std::string& domain, int64_t version);

  std::string Serialize() const { return model_.SerializeAsString(); }
  absl::StatusOr<OnnxModel> Import(const OnnxImportOptions& options = {}) const;

 private:
  onnx::ModelProto model_;
};

// Attributes.
void SetInt(onnx::NodeProto* node, const std::string& name, int64_t v);
void SetFloat(onnx::NodeProto* node, const std::string& name, float v);
void SetString(onnx::NodeProto* node, const std::string& name,
               const std::string& v);
void SetInts(onnx::NodeProto* node, const std::string& name,
             const std::vector<int64_t>& v);
void SetTensor(onnx::NodeProto* node, const std::string& name,
               const onnx::TensorProto& t);

// A float tensor proto (raw data).
onnx::TensorProto FloatTensor(const std::vector<int64_t>& dims,
                              const std::vector<float>& values);

// The imported entry graph printed as .graph text.
std::string Print(const OnnxModel& model);

}  // namespace hgc::onnx_test

#endif  // HGC_FRONTEND_ONNX_ONNX_TEST_UTIL_H_
