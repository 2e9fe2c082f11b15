// The state of one ONNX import: what each ONNX tensor name stands for (an
// IR value, a host tensor, an initializer not yet decoded), the graph
// being built, and the node a converter is working on.
#ifndef HGC_FRONTEND_ONNX_IMPORT_CONTEXT_H_
#define HGC_FRONTEND_ONNX_IMPORT_CONTEXT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "frontend/onnx/host_tensor.h"
#include "ir/builder.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "onnx/onnx_pb.h"

namespace hgc::onnx_import {

class ImportContext {
 public:
  ImportContext(Graph* graph, ExternalData* external)
      : graph_(graph), builder_(graph), external_(external) {}

  Graph* graph() const { return graph_; }
  Builder& builder() { return builder_; }
  ExternalData& external() { return *external_; }

  // A fresh .graph name for the ONNX name `onnx_name` (SanitizeOnnxName,
  // with "_1", "_2", ... added while taken).
  std::string UniqueName(const std::string& onnx_name);

  void DefineValue(const std::string& name, Value* value);
  void DefineHost(const std::string& name, HostTensor host);
  void DefineInitializer(const std::string& name,
                         const onnx::TensorProto* proto);
  // `name` stands for whatever `source` stands for (Identity, Dropout).
  void Alias(const std::string& name, const std::string& source) {
    entries_[name] = entries_.at(source);
  }
  bool IsDefined(const std::string& name) const {
    return entries_.contains(name);
  }

  // Whether `name` has a value known at import time.
  bool IsHostKnown(const std::string& name) const;
  // Its value (decoding an initializer on first use). Error when it is
  // computed at run time.
  absl::StatusOr<const HostTensor*> Host(const std::string& name);
  // The IR value of `name`: an initializer or host tensor becomes a
  // `constant` op when it has one element, else a const parameter.
  absl::StatusOr<Value*> Ir(const std::string& name);
  // Its static shape and element type, without materializing it.
  absl::StatusOr<std::vector<int64_t>> ShapeOf(const std::string& name);
  absl::StatusOr<int32_t> ElemTypeOf(const std::string& name);

  // The const parameters' values, by parameter name.
  std::map<std::string, Tensor>& constants() { return constants_; }

 private:
  struct Entry {
    const onnx::TensorProto* initializer = nullptr;
    std::optional<HostTensor> host;
    Value* value = nullptr;
  };
  absl::StatusOr<Value*> Materialize(const std::string& name, Entry& entry);

  Graph* graph_;
  Builder builder_;
  ExternalData* external_;
  // Node-based: host tensors handed out stay put while outputs are added.
  absl::node_hash_map<std::string, Entry> entries_;
  absl::flat_hash_set<std::string> used_names_;
  std::map<std::string, Tensor> constants_;
};

// One node being converted: its inputs, attributes and outputs.
class NodeContext {
 public:
  NodeContext(ImportContext& ctx, const onnx::NodeProto& node, int64_t opset)
      : ctx_(ctx), node_(node), opset_(opset) {}

  ImportContext& ctx() { return ctx_; }
  Builder& builder() { return ctx_.builder(); }
  const onnx::NodeProto& node() const { return node_; }
  int64_t opset() const { return opset_; }

  int num_inputs() const { return node_.input_size(); }
  // Input i is given (present and not the empty name of a skipped input).
  bool has_input(int i) const {
    return i < node_.input_size() && !node_.input(i).empty();
  }
  const std::string& input(int i) const { return node_.input(i); }
  // Errors name the input: "input #1 'shape' is required".
  absl::StatusOr<Value*> Ir(int i);
  absl::StatusOr<const HostTensor*> Host(int i);
  bool IsHost(int i) const {
    return has_input(i) && ctx_.IsHostKnown(node_.input(i));
  }
  absl::StatusOr<std::vector<int64_t>> ShapeOf(int i);
  absl::StatusOr<int32_t> ElemTypeOf(int i);

  // Attributes; the defaults apply when absent. Errors for a wrong type.
  const onnx::AttributeProto* Attr(const std::string& name) const;
  absl::StatusOr<int64_t> IntAttr(const std::string& name,
                                  int64_t default_value) const;
  absl::StatusOr<float> FloatAttr(const std::string& name,
                                  float default_value) const;
  absl::StatusOr<std::string> StringAttr(const std::string& name,
                                         std::string default_value) const;
  absl::StatusOr<std::optional<std::vector<int64_t>>> IntsAttr(
      const std::string& name) const;

  // Defines output i (outputs the model does not use have empty names).
  void SetOutput(int i, Value* value);
  void SetOutputHost(int i, HostTensor host);
  bool output_used(int i) const {
    return i < node_.output_size() && !node_.output(i).empty();
  }

  // builder().Create, its errors as they are.
  absl::StatusOr<Value*> Create(absl::string_view kind,
                                std::vector<Value*> operands,
                                AttrMap attrs = {},
                                std::vector<TensorType> declared = {}) {
    return builder().Create(kind, std::move(operands), std::move(attrs),
                            std::move(declared));
  }
  // A scalar-shaped `constant` op of `dtype` holding `value`.
  absl::StatusOr<Value*> Scalar(double value, DType dtype);
  // `x` reshaped to `shape` (x itself when it has it already).
  absl::StatusOr<Value*> Reshape(Value* x, const std::vector<int64_t>& shape);

 private:
  ImportContext& ctx_;
  const onnx::NodeProto& node_;
  int64_t opset_;
};

// A converter turns one node into IR ops or host values.
using Converter = absl::Status (*)(NodeContext&);

// The converter for (domain, op_type) at `opset`, or nullptr when hgc does
// not support it. The default domain is "" (or "ai.onnx").
Converter FindConverter(const std::string& domain, const std::string& op_type,
                        int64_t opset);

// The converters of each family (registered in op_table.cc).
absl::Status ConvertElementwiseBinary(NodeContext& n);
absl::Status ConvertVariadicMinMax(NodeContext& n);
absl::Status ConvertCompare(NodeContext& n);
absl::Status ConvertWhere(NodeContext& n);
absl::Status ConvertUnary(NodeContext& n);
absl::Status ConvertReciprocal(NodeContext& n);
absl::Status ConvertPow(NodeContext& n);
absl::Status ConvertGelu(NodeContext& n);
absl::Status ConvertIdentity(NodeContext& n);
absl::Status ConvertCast(NodeContext& n);
absl::Status ConvertConstant(NodeContext& n);
absl::Status ConvertMatMul(NodeContext& n);
absl::Status ConvertGemm(NodeContext& n);
absl::Status ConvertSoftmax(NodeContext& n);
absl::Status ConvertLayerNormalization(NodeContext& n);
absl::Status ConvertReduce(NodeContext& n);
absl::Status ConvertQuantizeLinear(NodeContext& n);
absl::Status ConvertDequantizeLinear(NodeContext& n);
absl::Status ConvertTranspose(NodeContext& n);
absl::Status ConvertReshape(NodeContext& n);
absl::Status ConvertFlatten(NodeContext& n);
absl::Status ConvertSqueeze(NodeContext& n);
absl::Status ConvertUnsqueeze(NodeContext& n);
// Shape chains, folded on the host (shape_folding.cc).
absl::Status ConvertShape(NodeContext& n);
absl::Status ConvertSize(NodeContext& n);
absl::Status ConvertGather(NodeContext& n);
absl::Status ConvertConcat(NodeContext& n);
absl::Status ConvertSlice(NodeContext& n);
absl::Status ConvertSplit(NodeContext& n);
absl::Status ConvertRange(NodeContext& n);
absl::Status ConvertConstantOfShape(NodeContext& n);

}  // namespace hgc::onnx_import

#endif  // HGC_FRONTEND_ONNX_IMPORT_CONTEXT_H_
