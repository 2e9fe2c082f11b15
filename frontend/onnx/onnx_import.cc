#include "frontend/onnx/onnx_import.h"

#include <algorithm>
#include <exception>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/onnx/host_tensor.h"
#include "frontend/onnx/import_context.h"
#include "frontend/onnx/patterns.h"
#include "ir/verifier.h"
#include "onnx/onnx_pb.h"
#include "support/file_io.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

using onnx_import::ExternalData;
using onnx_import::ImportContext;
using onnx_import::NodeContext;

// The default domain's opsets hgc reads.
constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 21;
// protobuf cannot parse a message of 2 GiB or more.
constexpr int64_t kMaxModelBytes = (int64_t{1} << 31) - 1;

class ModelImporter {
 public:
  ModelImporter(const onnx::ModelProto& model, absl::string_view model_name,
                const std::string& model_dir, const OnnxImportOptions& options)
      : model_(model),
        model_name_(model_name),
        external_(model_dir),
        options_(options) {}

  absl::StatusOr<OnnxModel> Run();

 private:
  absl::Status Error(absl::string_view where, absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat(model_name_, ": ", where,
                                                   where.empty() ? "" : ": ",
                                                   "error: ", message));
  }
  absl::Status Errors() {
    return absl::InvalidArgumentError(absl::StrJoin(errors_, "\n"));
  }
  void AddError(absl::string_view where, absl::string_view message) {
    errors_.push_back(std::string(Error(where, message).message()));
  }
  std::string NodeWhere(int index) const;
  absl::StatusOr<int64_t> OpsetOf(const std::string& domain) const;
  absl::Status ReadOpsets();
  void DefineInitializers(ImportContext& ctx);
  void AddInputs(ImportContext& ctx, OnnxModel& out);
  absl::StatusOr<TensorType> InputType(const onnx::ValueInfoProto& input);
  absl::StatusOr<TensorType> GivenInputType(
      DType dtype, const onnx::TensorShapeProto& model_shape,
      const std::vector<int64_t>& given);
  void ListUnsupported();
  absl::Status ConvertNodes(ImportContext& ctx);
  absl::Status SetResults(ImportContext& ctx, Graph& graph);

  const onnx::ModelProto& model_;
  std::string model_name_;
  ExternalData external_;
  const OnnxImportOptions& options_;
  // Symbolic sizes given through --input-shape so far.
  std::map<std::string, int64_t, std::less<>> given_dims_;
  std::map<std::string, int64_t> opsets_;
  std::vector<std::string> errors_;
};

absl::StatusOr<int64_t> ModelImporter::OpsetOf(
    const std::string& domain) const {
  auto it = opsets_.find(domain == "ai.onnx" ? "" : domain);
  if (it == opsets_.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "domain '", domain, "' is not in the model's opset_import"));
  }
  return it->second;
}

std::string ModelImporter::NodeWhere(int index) const {
  const onnx::NodeProto& node = model_.graph().node(index);
  std::string op = node.op_type();
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    op = absl::StrCat(node.domain(), ":", op);
  }
  absl::StatusOr<int64_t> opset = OpsetOf(node.domain());
  return absl::StrCat("node #", index, " '", node.name(), "' (", op,
                      opset.ok() ? absl::StrCat(", opset ", *opset) : "", ")");
}

absl::Status ModelImporter::ReadOpsets() {
  for (const onnx::OperatorSetIdProto& id : model_.opset_import()) {
    opsets_[id.domain() == "ai.onnx" ? "" : id.domain()] = id.version();
  }
  auto it = opsets_.find("");
  if (it == opsets_.end()) {
    return Error("", "the model imports no opset of the default domain");
  }
  if (it->second < kMinOpset || it->second > kMaxOpset) {
    return Error("", absl::StrCat("opset ", it->second, " is not supported (",
                                  kMinOpset, " to ", kMaxOpset, " are)"));
  }
  return absl::OkStatus();
}

void ModelImporter::DefineInitializers(ImportContext& ctx) {
  for (const onnx::TensorProto& init : model_.graph().initializer()) {
    const std::string where = absl::StrCat("initializer '", init.name(), "'");
    absl::Status status = onnx_import::CheckTensorData(init);
    if (init.name().empty()) status = absl::InvalidArgumentError("has no name");
    if (!status.ok()) {
      AddError(where, status.message());
      continue;
    }
    ctx.DefineInitializer(init.name(), &init);
  }
}

// An input's type from --input-shape: the model's rank and fixed sizes
// must match; a symbolic size takes the given one, which must agree with
// --dim and with the same name elsewhere.
absl::StatusOr<TensorType> ModelImporter::GivenInputType(
    DType dtype, const onnx::TensorShapeProto& model_shape,
    const std::vector<int64_t>& given) {
  if (model_shape.dim_size() != static_cast<int>(given.size())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--input-shape gives ", given.size(), " dimensions; the model has ",
        model_shape.dim_size()));
  }
  for (int i = 0; i < model_shape.dim_size(); ++i) {
    const onnx::TensorShapeProto::Dimension& dim = model_shape.dim(i);
    if (dim.has_dim_value() && dim.dim_value() != given[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input-shape gives dimension ", i, " as ", given[i],
          "; the model fixes it at ", dim.dim_value()));
    }
    if (!dim.has_dim_param()) continue;
    auto [it, inserted] = given_dims_.emplace(dim.dim_param(), given[i]);
    auto bound = options_.dims.find(dim.dim_param());
    if ((!inserted && it->second != given[i]) ||
        (bound != options_.dims.end() && bound->second != given[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input-shape gives dimension '", dim.dim_param(), "' as ",
          given[i], ", which it is not elsewhere"));
    }
  }
  absl::StatusOr<int64_t> n = CheckedNumElements(given);
  if (!n.ok()) return n.status();
  return TensorType(dtype, Shape(given.begin(), given.end()));
}

absl::StatusOr<TensorType> ModelImporter::InputType(
    const onnx::ValueInfoProto& input) {
  if (!input.type().has_tensor_type()) {
    return absl::InvalidArgumentError("is not a tensor");
  }
  const onnx::TypeProto::Tensor& tensor = input.type().tensor_type();
  std::optional<DType> dtype = onnx_import::IrDType(tensor.elem_type());
  if (!dtype) {
    return absl::UnimplementedError(absl::StrCat(
        "element type ", onnx_import::ElemTypeName(tensor.elem_type()),
        " is not supported as an input (hgc has no such dtype)"));
  }
  if (!tensor.has_shape()) {
    return absl::InvalidArgumentError("has no shape");
  }
  auto given = options_.input_shapes.find(input.name());
  if (given != options_.input_shapes.end()) {
    return GivenInputType(*dtype, tensor.shape(), given->second);
  }
  Shape shape;
  for (const onnx::TensorShapeProto::Dimension& dim : tensor.shape().dim()) {
    if (dim.has_dim_value()) {
      shape.push_back(dim.dim_value());
      continue;
    }
    if (!dim.has_dim_param()) {
      return absl::InvalidArgumentError(
          "has a dimension of unknown size (neither a value nor a name)");
    }
    auto bound = options_.dims.find(dim.dim_param());
    auto given_size = given_dims_.find(dim.dim_param());
    if (bound != options_.dims.end()) {
      shape.push_back(bound->second);
    } else if (given_size != given_dims_.end()) {
      shape.push_back(given_size->second);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension '", dim.dim_param(),
                       "' is symbolic; give its size with "
                       "--dim ",
                       dim.dim_param(), "=N"));
    }
  }
  absl::StatusOr<int64_t> n = CheckedNumElements(shape);
  if (!n.ok()) return n.status();
  return TensorType(*dtype, shape);
}

void ModelImporter::AddInputs(ImportContext& ctx, OnnxModel& out) {
  // The symbolic sizes --input-shape gives, for every input that names
  // them (errors are reported by the loop below).
  for (const onnx::ValueInfoProto& input : model_.graph().input()) {
    if (options_.input_shapes.count(input.name())) (void)InputType(input);
  }
  for (const onnx::ValueInfoProto& input : model_.graph().input()) {
    // Before IR version 4 initializers are listed among the inputs too.
    if (ctx.IsDefined(input.name())) continue;
    absl::StatusOr<TensorType> type = InputType(input);
    if (!type.ok()) {
      AddError(absl::StrCat("input '", input.name(), "'"),
               type.status().message());
      continue;
    }
    const std::string name = ctx.UniqueName(input.name());
    ctx.DefineValue(input.name(), ctx.graph()->AddParam(name, *type));
    out.input_names.emplace_back(input.name(), name);
  }
  for (const auto& [name, shape] : options_.input_shapes) {
    const auto& inputs = model_.graph().input();
    const bool found = std::any_of(
        inputs.begin(), inputs.end(),
        [&name = name](const onnx::ValueInfoProto& input) {
          return input.name() == name;
        });
    if (!found) {
      AddError("", absl::StrCat("--input-shape names '", name,
                                "', which is not an input of the model"));
    }
  }
}

void ModelImporter::ListUnsupported() {
  const onnx::GraphProto& graph = model_.graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    absl::StatusOr<int64_t> opset = OpsetOf(node.domain());
    if (!opset.ok()) {
      AddError(NodeWhere(i), opset.status().message());
    } else if (onnx_import::FindConverter(node.domain(), node.op_type(),
                                          *opset) == nullptr) {
      AddError(NodeWhere(i), "unsupported op");
    }
  }
}

absl::Status ModelImporter::ConvertNodes(ImportContext& ctx) {
  const onnx::GraphProto& graph = model_.graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& node = graph.node(i);
    for (const std::string& input : node.input()) {
      if (!input.empty() && !ctx.IsDefined(input)) {
        return Error(NodeWhere(i),
                     absl::StrCat("input '", input,
                                  "' is not a graph input, an initializer or "
                                  "the output of an earlier node"));
      }
    }
    for (const std::string& output : node.output()) {
      if (!output.empty() && ctx.IsDefined(output)) {
        return Error(NodeWhere(i),
                     absl::StrCat("output '", output,
                                  "' is already defined (ONNX graphs are "
                                  "single-assignment)"));
      }
    }
    const int64_t opset = *OpsetOf(node.domain());
    NodeContext n(ctx, node, opset);
    absl::Status status =
        onnx_import::FindConverter(node.domain(), node.op_type(), opset)(n);
    if (!status.ok()) return Error(NodeWhere(i), status.message());
    for (int o = 0; o < node.output_size(); ++o) {
      if (!n.output_used(o) || ctx.IsDefined(node.output(o))) continue;
      return Error(NodeWhere(i),
                   absl::StrCat("output '", node.output(o),
                                "' is not supported by this converter"));
    }
  }
  return absl::OkStatus();
}

absl::Status ModelImporter::SetResults(ImportContext& ctx, Graph& graph) {
  std::vector<Value*> results;
  std::vector<TensorType> types;
  for (const onnx::ValueInfoProto& output : model_.graph().output()) {
    absl::StatusOr<Value*> value = ctx.Ir(output.name());
    if (!value.ok()) {
      AddError(absl::StrCat("output '", output.name(), "'"),
               value.status().message());
      continue;
    }
    results.push_back(*value);
    types.push_back((*value)->type());
  }
  if (!errors_.empty()) return Errors();
  if (results.empty()) return Error("", "the graph has no outputs");
  graph.SetResults(results);
  graph.SetDeclaredResultTypes(types);
  return absl::OkStatus();
}

absl::StatusOr<OnnxModel> ModelImporter::Run() {
  HGC_RETURN_IF_ERROR(ReadOpsets());
  OnnxModel out;
  const onnx::GraphProto& graph_proto = model_.graph();
  Graph* graph = out.module.AddGraph(SanitizeOnnxName(
      graph_proto.name().empty() ? "main" : graph_proto.name()));
  ImportContext ctx(graph, &external_);
  DefineInitializers(ctx);
  AddInputs(ctx, out);
  ListUnsupported();
  if (!errors_.empty()) return Errors();
  HGC_RETURN_IF_ERROR(ConvertNodes(ctx));
  HGC_RETURN_IF_ERROR(SetResults(ctx, *graph));
  if (options_.lift_patterns) {
    absl::StatusOr<LiftedPatterns> lifted = LiftPatterns(*graph);
    if (!lifted.ok()) {
      return Error("", absl::StrCat("lifting patterns: ",
                                    lifted.status().message()));
    }
    out.lifted_patterns = lifted->layernorm + lifted->gelu;
  }
  absl::Status verified = Verify(out.module);
  if (!verified.ok()) {
    return Error("", absl::StrCat("the imported graph does not verify: ",
                                  verified.message()));
  }
  out.constants = std::move(ctx.constants());
  return out;
}

}  // namespace

bool IsOnnxPath(absl::string_view path) {
  return absl::EndsWith(path, ".onnx");
}

std::string SanitizeOnnxName(absl::string_view name) {
  std::string out;
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) out = "_";
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_';
    out.push_back(ok ? c : '_');
  }
  return out;
}

absl::StatusOr<OnnxModel> ImportOnnxBytes(absl::string_view bytes,
                                          absl::string_view model_name,
                                          const std::string& model_dir,
                                          const OnnxImportOptions& options) {
  if (static_cast<int64_t>(bytes.size()) > kMaxModelBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(model_name,
                     ": error: the model is 2 GiB or larger; keep its weights "
                     "in external data"));
  }
  onnx::ModelProto model;
  bool parsed = false;
  try {
    parsed = model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  } catch (const std::exception& e) {
    parsed = false;
  }
  if (!parsed) {
    return absl::InvalidArgumentError(
        absl::StrCat(model_name,
                     ": error: not a valid ONNX model (the protobuf is "
                     "truncated or corrupt)"));
  }
  return ModelImporter(model, model_name, model_dir, options).Run();
}

absl::StatusOr<OnnxModel> ImportOnnxFile(const std::string& path,
                                         const OnnxImportOptions& options) {
  absl::StatusOr<std::string> bytes = ReadRegularFile(path, kMaxModelBytes);
  if (!bytes.ok()) {
    return absl::Status(
        bytes.status().code(),
        absl::StrCat(path, ": error: ", bytes.status().message()));
  }
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  return ImportOnnxBytes(*bytes, path, dir, options);
}

}  // namespace hgc
