#include "driver/input_files.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "frontend/onnx/onnx_import.h"
#include "frontend/parser.h"
#include "support/diagnostics.h"
#include "support/file_io.h"
#include "tensor_util/npy.h"

namespace hgc {
namespace {

// The .graph module in `file`, or on stdin for "-".
absl::StatusOr<Module> ReadGraphFile(const std::string& file,
                                     SourceManager& sm) {
  if (file != "-") return ParseFile(file, sm);
  std::string text;
  char buffer[1 << 16];
  while (std::cin.read(buffer, sizeof(buffer)) || std::cin.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(std::cin.gcount()));
    if (static_cast<int64_t>(text.size()) > kMaxSourceFileSize) {
      return absl::InvalidArgumentError(absl::StrCat(
          "<stdin> is larger than ", kMaxSourceFileSize, " bytes"));
    }
  }
  return ParseModule(text, "<stdin>", sm);
}

}  // namespace

std::string InputBinding::ParamName(const std::string& name) const {
  auto it = param_of_input.find(name);
  return it == param_of_input.end() ? name : it->second;
}

absl::StatusOr<InputFile> ReadInputFile(const std::string& file,
                                        const OnnxImportOptions& onnx,
                                        SourceManager& sm) {
  InputFile input;
  if (!IsOnnxPath(file)) {
    absl::StatusOr<Module> module = ReadGraphFile(file, sm);
    if (!module.ok()) return module.status();
    input.module = std::move(*module);
    return input;
  }
  absl::StatusOr<OnnxModel> model = ImportOnnxFile(file, onnx);
  if (!model.ok()) return model.status();
  input.module = std::move(model->module);
  input.binding.constants = std::move(model->constants);
  input.lifted_patterns = model->lifted_patterns;
  for (const auto& [onnx_name, param] : model->input_names) {
    input.binding.param_of_input[onnx_name] = param;
  }
  return input;
}

std::string FormatInputFileError(const absl::Status& status,
                                 const std::string& file,
                                 const SourceManager& sm) {
  if (IsOnnxPath(file)) return absl::StrCat(status.message(), "\n");
  const std::string name = file == "-" ? "<stdin>" : file;
  return FormatError(status, sm, absl::StrCat(name, ":1:1"));
}

absl::StatusOr<std::vector<Tensor>> PrepareInputs(
    const Graph& graph, absl::Span<const RandomFillOptions> fill,
    absl::Span<const std::pair<std::string, std::string>> input_files,
    uint64_t seed, const InputBinding& binding) {
  std::map<std::string, std::string> files;
  for (const auto& [given_name, path] : input_files) {
    const std::string name = binding.ParamName(given_name);
    if (graph.FindParam(name) == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input names '", name, "', but @", graph.name(),
                       " has no parameter %", name));
    }
    if (!files.emplace(name, path).second) {
      return ErrorAt(graph.FindParam(name)->loc(),
                     absl::StrCat("--input given twice for %", name, " ('",
                                  files[name], "' and '", path, "')"));
    }
  }
  std::vector<Tensor> inputs;
  for (int i = 0; i < graph.num_params(); ++i) {
    const Value* param = graph.param(i);
    auto it = files.find(param->name());
    auto bound = binding.constants.find(param->name());
    if (it == files.end() && bound != binding.constants.end()) {
      inputs.push_back(bound->second);
      continue;
    }
    if (it == files.end()) {
      absl::StatusOr<Tensor> t =
          RandomTensor(param->type(), seed, param->name(), fill[i]);
      if (!t.ok()) return AttachLoc(t.status(), param->loc());
      inputs.push_back(std::move(*t));
      continue;
    }
    absl::StatusOr<Tensor> conformed =
        ReadNpyAs(it->second, param->type(), param->name());
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

}  // namespace hgc
