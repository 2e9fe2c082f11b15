#include "frontend/onnx/onnx_test_util.h"

#include <cstring>

#include "ir/printer.h"

namespace hgc::onnx_test {

using onnx::TensorProto;

ModelBuilder::ModelBuilder(int64_t opset, std::string graph_name) {
  model_.set_ir_version(8);
  Opset("", opset);
  graph().set_name(graph_name);
}

void ModelBuilder::Opset(const std::string& domain, int64_t version) {
  onnx::OperatorSetIdProto* id = model_.add_opset_import();
  id->set_domain(domain);
  id->set_version(version);
}

void ModelBuilder::Input(const std::string& name, const std::vector<Dim>& dims,
                         int32_t elem_type) {
  onnx::ValueInfoProto* input = graph().add_input();
  input->set_name(name);
  onnx::TypeProto::Tensor* t = input->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = t->mutable_shape();
  for (const Dim& d : dims) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (std::holds_alternative<int64_t>(d)) {
      dim->set_dim_value(std::get<int64_t>(d));
    } else {
      dim->set_dim_param(std::get<std::string>(d));
    }
  }
}

void ModelBuilder::Output(const std::string& name) {
  graph().add_output()->set_name(name);
}

onnx::TensorProto FloatTensor(const std::vector<int64_t>& dims,
                              const std::vector<float>& values) {
  TensorProto t;
  t.set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char*>(values.data()),
                             values.size() * sizeof(float)));
  return t;
}

onnx::TensorProto* ModelBuilder::Floats(const std::string& name,
                                        const std::vector<int64_t>& dims,
                                        const std::vector<float>& values) {
  TensorProto* t = graph().add_initializer();
  *t = FloatTensor(dims, values);
  t->set_name(name);
  return t;
}

onnx::TensorProto* ModelBuilder::Int64s(const std::string& name,
                                        const std::vector<int64_t>& dims,
                                        const std::vector<int64_t>& values) {
  TensorProto* t = graph().add_initializer();
  t->set_name(name);
  t->set_data_type(TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
  return t;
}

onnx::TensorProto* ModelBuilder::Bytes(const std::string& name,
                                       int32_t elem_type,
                                       const std::vector<int64_t>& dims,
                                       const std::vector<int8_t>& values) {
  TensorProto* t = graph().add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size()));
  return t;
}

onnx::NodeProto* ModelBuilder::Node(const std::string& op_type,
                                    const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs,
                                    const std::string& name) {
  onnx::NodeProto* node = graph().add_node();
  node->set_op_type(op_type);
  node->set_name(name);
  for (const std::string& i : inputs) node->add_input(i);
  for (const std::string& o : outputs) node->add_output(o);
  return node;
}

absl::StatusOr<OnnxModel> ModelBuilder::Import(
    const OnnxImportOptions& options) const {
  return ImportOnnxBytes(Serialize(), "m.onnx", "", options);
}

void SetInt(onnx::NodeProto* node, const std::string& name, int64_t v) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void SetFloat(onnx::NodeProto* node, const std::string& name, float v) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void SetString(onnx::NodeProto* node, const std::string& name,
               const std::string& v) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void SetInts(onnx::NodeProto* node, const std::string& name,
             const std::vector<int64_t>& v) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void SetTensor(onnx::NodeProto* node, const std::string& name,
               const onnx::TensorProto& t) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
}

std::string Print(const OnnxModel& model) { return PrintModule(model.module); }

}  // namespace hgc::onnx_test
