// What the driver reads: the input file (a .graph file, stdin, or an ONNX
// model) and the tensors for the entry graph's parameters.
#ifndef HGC_DRIVER_INPUT_FILES_H_
#define HGC_DRIVER_INPUT_FILES_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "frontend/onnx/onnx_import.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "support/source_location.h"
#include "tensor_util/random_fill.h"

namespace hgc {

// What an input file binds besides its graph: an ONNX model's initializer
// values (its const parameters) and the parameter each of its inputs
// became (docs/onnx.md). Empty for a .graph file.
struct InputBinding {
  std::map<std::string, Tensor> constants;            // by parameter name
  std::map<std::string, std::string> param_of_input;  // ONNX name -> param
  // The parameter `--input NAME=...` means: the one the model input NAME
  // became, else NAME itself.
  std::string ParamName(const std::string& name) const;
};

struct InputFile {
  Module module;
  InputBinding binding;
  // How many decomposed LayerNorm and GELU chains of an ONNX model became
  // one op (OnnxModel::lifted_patterns).
  int lifted_patterns = 0;
};

// Reads `file`: an ONNX model when it ends in ".onnx" (imported with
// `onnx`: --dim and --input-shape), stdin for "-", else a .graph file.
absl::StatusOr<InputFile> ReadInputFile(const std::string& file,
                                        const OnnxImportOptions& onnx,
                                        SourceManager& sm);
// The diagnostic for ReadInputFile's error: an ONNX model's errors are
// whole diagnostics already; a .graph file's are located
// (FILE:LINE:COL, FILE:1:1 when the file cannot be read at all).
std::string FormatInputFileError(const absl::Status& status,
                                 const std::string& file,
                                 const SourceManager& sm);

// One tensor per parameter of `graph`: from `input_files` (--input
// NAME=FILE.npy) where given, else the binding's constant, else seeded
// random values with `fill[i]` (tensor_util/random_inputs.h, chosen on the
// graph as written).
absl::StatusOr<std::vector<Tensor>> PrepareInputs(
    const Graph& graph, absl::Span<const RandomFillOptions> fill,
    absl::Span<const std::pair<std::string, std::string>> input_files,
    uint64_t seed, const InputBinding& binding);

}  // namespace hgc

#endif  // HGC_DRIVER_INPUT_FILES_H_
