#include "driver/driver.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "frontend/parser.h"
#include "ir/printer.h"
#include "runtime/reference_interpreter.h"
#include "support/diagnostics.h"
#include "support/npy.h"
#include "support/random_fill.h"
#include "support/status_macros.h"
#include "support/tensor_compare.h"

namespace hgc {
namespace {

// Tensors up to this many elements are printed in full by --run.
constexpr int64_t kMaxPrintedElements = 64;

std::string FormatElement(const Tensor& t, int64_t i) {
  double v = t.GetDouble(i);
  if (t.dtype() == DType::kBool) return v != 0 ? "true" : "false";
  if (!IsFloat(t.dtype())) return absl::StrCat(static_cast<int64_t>(v));
  return absl::StrFormat("%g", v);
}

// numpy-like nested brackets: [[1, 2], [3, 4]].
void AppendNested(const Tensor& t, int dim, int64_t& index, std::string& out) {
  if (dim == static_cast<int>(t.shape().size())) {
    out += FormatElement(t, index++);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < t.shape()[dim]; ++i) {
    if (i) out += ", ";
    AppendNested(t, dim + 1, index, out);
  }
  out += ']';
}

std::string DescribeTensor(const Tensor& t) {
  if (t.num_elements() <= kMaxPrintedElements) {
    std::string out;
    int64_t index = 0;
    AppendNested(t, 0, index, out);
    return out;
  }
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double v = t.GetDouble(i);
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return absl::StrFormat("min %g, max %g, mean %g", lo, hi,
                         sum / static_cast<double>(t.num_elements()));
}

// The graph to run: --graph NAME, or the first one in the file.
absl::StatusOr<const Graph*> SelectGraph(const Module& module,
                                         const std::string& name,
                                         const std::string& file) {
  if (name.empty()) return module.graphs().front().get();
  if (const Graph* g = module.FindGraph(name)) return g;
  std::vector<std::string> names;
  for (const auto& g : module.graphs()) names.push_back("@" + g->name());
  return absl::InvalidArgumentError(
      absl::StrCat("no graph named @", name, " in ", file,
                   " (it has: ", absl::StrJoin(names, ", "), ")"));
}

// One tensor per parameter: from --input files where given, random otherwise.
absl::StatusOr<std::vector<Tensor>> PrepareInputs(const Graph& graph,
                                                  const DriverOptions& options) {
  std::map<std::string, std::string> files;
  for (const auto& [name, path] : options.inputs) {
    if (graph.FindParam(name) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input names '", name, "', but @", graph.name(),
          " has no parameter %", name));
    }
    if (!files.emplace(name, path).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input given twice for %", name));
    }
  }
  std::vector<Tensor> inputs;
  for (int i = 0; i < graph.num_params(); ++i) {
    const Value* param = graph.param(i);
    auto it = files.find(param->name());
    if (it == files.end()) {
      HGC_ASSIGN_OR_RETURN(Tensor t,
                           RandomTensor(param->type(), options.seed, param->name()));
      inputs.push_back(std::move(t));
      continue;
    }
    absl::StatusOr<Tensor> read = ReadNpy(it->second);
    absl::StatusOr<Tensor> conformed =
        read.ok() ? ConformToType(*read, param->type(), param->name())
                  : read.status();
    if (!conformed.ok()) {
      // Point at the parameter the file was meant for.
      return ErrorAt(param->loc(),
                     absl::StrCat(conformed.status().message(), " (--input ",
                                  it->first, "=", it->second, ")"));
    }
    inputs.push_back(std::move(*conformed));
  }
  return inputs;
}

absl::Status WriteOutputs(const std::vector<Tensor>& outputs,
                          const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create output directory '", dir, "': ",
                     ec.message()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    HGC_RETURN_IF_ERROR(
        WriteNpy(absl::StrCat(dir, "/out", i, ".npy"), outputs[i]));
  }
  return absl::OkStatus();
}

// --run [--check]: executes `graph` and reports. Returns the exit code.
absl::StatusOr<int> Run(const Graph& graph, const DriverOptions& options,
                        std::ostream& out, std::ostream& err) {
  HGC_ASSIGN_OR_RETURN(std::vector<Tensor> inputs, PrepareInputs(graph, options));
  // Until the compiler exists, graphs execute on the reference interpreter.
  HGC_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, Interpret(graph, inputs));
  if (!options.output_dir.empty()) {
    HGC_RETURN_IF_ERROR(WriteOutputs(outputs, options.output_dir));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    out << "out" << i << ": " << outputs[i].type().ToString() << " = "
        << DescribeTensor(outputs[i]) << "\n";
  }
  if (!options.check) return 0;
  err << "note: no compiled executor yet; --check compares the reference "
         "interpreter with itself\n";
  HGC_ASSIGN_OR_RETURN(std::vector<Tensor> expected, Interpret(graph, inputs));
  bool pass = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tolerance tolerance = DefaultTolerance(outputs[i].dtype());
    if (options.rtol >= 0) tolerance.rtol = options.rtol;
    if (options.atol >= 0) tolerance.atol = options.atol;
    HGC_ASSIGN_OR_RETURN(CompareResult result,
                         CompareTensors(outputs[i], expected[i], tolerance));
    pass = pass && result.ok();
    out << "check out" << i << ": " << result.Summary() << "\n";
  }
  out << "check: " << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? 0 : 1;
}

}  // namespace

int RunDriver(const DriverOptions& options, std::ostream& out,
              std::ostream& err) {
  SourceManager sm;
  auto fail = [&](const absl::Status& status) {
    err << FormatError(status, sm, options.input_file);
    return 1;
  };
  absl::StatusOr<Module> module = ParseFile(options.input_file, sm);
  if (!module.ok()) return fail(module.status());
  absl::StatusOr<const Graph*> graph =
      SelectGraph(*module, options.graph, options.input_file);
  if (!graph.ok()) return fail(graph.status());
  if (options.emit_ir) out << PrintModule(*module);
  if (!options.run) return 0;
  absl::StatusOr<int> code = Run(**graph, options, out, err);
  if (!code.ok()) return fail(code.status());
  return *code;
}

}  // namespace hgc
