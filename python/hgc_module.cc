// The `hgc` Python module:
//
//   import hgc
//   model = hgc.compile("model.onnx", threads=2)   # or .graph text / path,
//                                                 # onnx.ModelProto, bytes
//   y = model(x)                                  # numpy in, numpy out
//   model(x, out=y)                               # into a given array
//
// docs/python.md is the user's guide.
#include <map>
#include <optional>
#include <set>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "frontend/onnx/onnx_import.h"
#include "hgc/hgc.h"
#include "pybind11/numpy.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "onnx/onnx_pb.h"
#include "python/arrays.h"
#include "python/dynamic_model.h"
#include "python/errors.h"
#include "python/model.h"
#include "support/file_io.h"

namespace hgc {
namespace python {
namespace {

namespace py = pybind11;

struct CompileArgs {
  Options options;
  OnnxImportOptions onnx;
  std::map<std::string, Tensor> constants;
};

// A graph compiled, with its parameters' names and constants: what each
// kind of source gives before the Model is made.
struct Compiled {
  std::unique_ptr<CompiledGraph> graph;
  std::vector<std::string> names;
  std::map<std::string, Tensor> constants;
};

Compiled FromOnnx(absl::StatusOr<OnnxModel> model, const CompileArgs& args) {
  ThrowIfError(model.status());
  Compiled c;
  absl::StatusOr<std::unique_ptr<CompiledGraph>> graph =
      Compile(model->module, args.options);
  ThrowIfError(graph.status());
  c.graph = *std::move(graph);
  std::map<std::string, std::string> onnx_name;  // parameter -> model input
  for (const auto& [name, param] : model->input_names) onnx_name[param] = name;
  for (const std::string& param : c.graph->param_names()) {
    auto it = onnx_name.find(param);
    c.names.push_back(it == onnx_name.end() ? param : it->second);
  }
  c.constants = std::move(model->constants);
  return c;
}

Compiled FromGraph(absl::StatusOr<std::unique_ptr<CompiledGraph>> graph) {
  ThrowIfError(graph.status());
  Compiled c;
  c.graph = *std::move(graph);
  c.names = c.graph->param_names();
  return c;
}

// Compiles `source` (see compile's docstring) without the GIL.
Compiled CompileSource(py::handle source, const CompileArgs& args) {
  if (py::hasattr(source, "SerializeToString")) {  // onnx.ModelProto
    std::string bytes = source.attr("SerializeToString")().cast<std::string>();
    py::gil_scoped_release no_gil;
    return FromOnnx(ImportOnnxBytes(bytes, "<ModelProto>", "", args.onnx), args);
  }
  if (py::isinstance<py::bytes>(source)) {
    std::string bytes = source.cast<std::string>();
    py::gil_scoped_release no_gil;
    return FromOnnx(ImportOnnxBytes(bytes, "<bytes>", "", args.onnx), args);
  }
  if (!py::isinstance<py::str>(source) &&
      !py::hasattr(source, "__fspath__")) {
    throw Error("hgc.compile takes a path, .graph text, an onnx.ModelProto "
                "or serialized ONNX bytes");
  }
  const std::string text =
      py::str(py::module_::import("os").attr("fspath")(source));
  py::gil_scoped_release no_gil;
  if (absl::StrContains(text, "graph") && absl::StrContains(text, "{")) {
    return FromGraph(CompileText(text, args.options, "<text>"));
  }
  if (IsOnnxPath(text)) return FromOnnx(ImportOnnxFile(text, args.onnx), args);
  return FromGraph(CompileFile(text, args.options));
}

// constants={name: array} as tensors of the graph's parameter types,
// once the graph is known.
void AddUserConstants(const py::dict& given, const CompiledGraph& graph,
                      const std::vector<std::string>& names,
                      std::map<std::string, Tensor>& constants) {
  for (auto [key, value] : given) {
    const std::string name = py::str(key);
    int param = -1;
    for (int i = 0; i < graph.num_params(); ++i) {
      if (graph.param_names()[i] == name || names[i] == name) param = i;
    }
    if (param < 0 || !graph.param_is_const()[param]) {
      throw Error(absl::StrCat("constants: '", name,
                               "' is not a const parameter of the graph"));
    }
    const TensorType& type = graph.param_types()[param];
    bool copied = false;
    py::array a = AsInputArray(value, type,
                               absl::StrCat("constant '", name, "'"), &copied);
    absl::StatusOr<Tensor> t = Tensor::Create(type);
    ThrowIfError(t.status());
    if (type.dtype == DType::kBF16 && a.itemsize() == 4) {
      Bf16FromFloat(static_cast<const float*>(a.data()),
                    reinterpret_cast<uint16_t*>(t->mutable_raw()),
                    type.NumElements());
    } else {
      std::memcpy(t->mutable_raw(), a.data(), t->size_in_bytes());
    }
    constants[graph.param_names()[param]] = *std::move(t);
  }
}

// An ONNX source as what to import: a file (external data beside it) or
// serialized bytes.
struct OnnxSource {
  std::string path;   // set for a file
  std::string bytes;  // the model (read from the file too)
};

// `source` as an ONNX model, or nullopt when it is .graph text or a path
// that is not an .onnx file.
std::optional<OnnxSource> AsOnnxSource(py::handle source) {
  OnnxSource s;
  if (py::hasattr(source, "SerializeToString")) {
    s.bytes = source.attr("SerializeToString")().cast<std::string>();
    return s;
  }
  if (py::isinstance<py::bytes>(source)) {
    s.bytes = source.cast<std::string>();
    return s;
  }
  if (!py::isinstance<py::str>(source) && !py::hasattr(source, "__fspath__")) {
    return std::nullopt;
  }
  const std::string text =
      py::str(py::module_::import("os").attr("fspath")(source));
  if (!IsOnnxPath(text) || absl::StrContains(text, "{")) return std::nullopt;
  // protobuf parses less than 2 GiB.
  absl::StatusOr<std::string> bytes =
      ReadRegularFile(text, (int64_t{1} << 31) - 1);
  ThrowIfError(bytes.status());
  s.path = text;
  s.bytes = *std::move(bytes);
  return s;
}

// The model's input names (initializers left out) and the dimensions of
// them that are symbolic and not bound by `bound`. Unparsable bytes give
// none: the import reports the error.
std::vector<SymbolicDim> UnboundDims(
    const std::string& bytes, const OnnxImportOptions& bound,
    std::vector<std::string>& input_names) {
  onnx::ModelProto model;
  std::vector<SymbolicDim> dims;
  if (!model.ParseFromString(bytes)) return dims;
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) {
    initializers.insert(init.name());
  }
  for (const auto& input : model.graph().input()) {
    if (initializers.count(input.name())) continue;
    const int index = static_cast<int>(input_names.size());
    input_names.push_back(input.name());
    const auto& shape = input.type().tensor_type().shape();
    for (int axis = 0; axis < shape.dim_size(); ++axis) {
      const auto& dim = shape.dim(axis);
      if (dim.has_dim_param() && !bound.dims.count(dim.dim_param())) {
        dims.push_back({index, axis, dim.dim_param()});
      }
    }
  }
  return dims;
}

py::object CompileModel(py::handle source, int threads,
                        const std::string& pipeline, const std::string& graph,
                        const py::dict& constants, const py::dict& dims,
                        bool lift_patterns) {
  CompileArgs args;
  args.options.num_threads = threads;
  args.options.pipeline = pipeline;
  args.options.graph = graph;
  args.onnx.lift_patterns = lift_patterns;
  for (auto [name, value] : dims) {
    args.onnx.dims[py::str(name)] = value.cast<int64_t>();
  }
  if (std::optional<OnnxSource> onnx = AsOnnxSource(source)) {
    std::vector<std::string> input_names;
    std::vector<SymbolicDim> unbound =
        UnboundDims(onnx->bytes, args.onnx, input_names);
    if (!unbound.empty()) {
      if (!constants.empty()) {
        throw Error("constants= is not supported with unbound symbolic "
                    "dimensions (bind them with dims=)");
      }
      auto compiler = [onnx = *onnx, args](const DynamicModel::Dims& values) {
        CompileArgs shaped = args;
        for (const auto& [name, value] : values) shaped.onnx.dims[name] = value;
        Compiled c = FromOnnx(
            onnx.path.empty()
                ? ImportOnnxBytes(onnx.bytes, "<model>", "", shaped.onnx)
                : ImportOnnxFile(onnx.path, shaped.onnx),
            shaped);
        auto model = std::make_unique<Model>(std::move(c.graph), c.names);
        model->SetConstants(c.constants);
        return model;
      };
      return py::cast(std::make_unique<DynamicModel>(
          compiler, std::move(unbound), std::move(input_names)));
    }
  }
  Compiled c = CompileSource(source, args);
  AddUserConstants(constants, *c.graph, c.names, c.constants);
  auto model = std::make_unique<Model>(std::move(c.graph), c.names);
  model->SetConstants(c.constants);
  return py::cast(std::move(model));
}

}  // namespace
}  // namespace python
}  // namespace hgc

PYBIND11_MODULE(hgc, m) {
  namespace py = pybind11;
  using hgc::python::DynamicModel;
  using hgc::python::Model;
  m.doc() = "hgc: a deep-learning graph compiler for x86 CPUs";
  py::register_exception<hgc::python::Error>(m, "Error", PyExc_ValueError);
  py::class_<Model>(m, "Model")
      .def("__call__", &Model::Call, py::arg("out") = py::none(),
           "model(*inputs, out=None): runs the graph on numpy arrays (one "
           "per non-const parameter, in order) and returns its result (a "
           "tuple for several); with out=, writes into those arrays.")
      .def_property_readonly("input_names", &Model::input_names)
      .def_property_readonly("input_types", &Model::input_types)
      .def_property_readonly("output_types", &Model::output_types)
      .def_property_readonly("num_threads", &Model::num_threads)
      .def_property_readonly("last_call_input_copies",
                             &Model::last_call_input_copies)
      .def_property_readonly("last_call_released_gil",
                             &Model::last_call_released_gil);
  py::class_<DynamicModel>(m, "DynamicModel")
      .def("__call__", &DynamicModel::Call, py::arg("out") = py::none(),
           "model(*inputs, out=None): as Model's; the inputs' shapes give "
           "the symbolic dimensions, and the model is compiled once for "
           "each set of values and cached.")
      .def_property_readonly("input_names", &DynamicModel::input_names)
      .def_property_readonly("cached_shapes", &DynamicModel::cached_shapes)
      .def_property_readonly("compiles", &DynamicModel::compiles);
  m.def("compile", &hgc::python::CompileModel, py::arg("source"),
        py::kw_only(), py::arg("threads") = 1, py::arg("pipeline") = "O2",
        py::arg("graph") = "", py::arg("constants") = py::dict(),
        py::arg("dims") = py::dict(), py::arg("lift_patterns") = true,
        "compile(source, *, threads=1, pipeline='O2', graph='', "
        "constants={}, dims={}, lift_patterns=True) -> Model\n\n"
        "source: a path (.onnx or .graph), .graph text, an onnx.ModelProto "
        "or serialized ONNX bytes. constants: values of const parameters "
        "by name (an ONNX model's initializers are bound already). dims: "
        "values of an ONNX model's symbolic dimensions by name; with some "
        "left unbound, a DynamicModel compiles once per input shape. "
        "lift_patterns: whether an ONNX model's decomposed LayerNorm and "
        "GELU chains become single ops (False imports every node as "
        "written, as the driver's --onnx-literal).");
}
