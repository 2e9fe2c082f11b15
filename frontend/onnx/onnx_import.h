// ONNX import: reads an ONNX model (a serialized onnx.ModelProto) into an
// hgc Module of one graph, plus the values of its initializers.
//
// What is supported, how names map and what the errors say: docs/onnx.md.
// Every error is an absl::Status whose message is the complete diagnostic,
// one line per problem:
//   MODEL.onnx: node #N 'NODE_NAME' (OP, opset V): error: MESSAGE
//   MODEL.onnx: initializer 'NAME': error: MESSAGE
//   MODEL.onnx: input 'NAME': error: MESSAGE
//   MODEL.onnx: error: MESSAGE
#ifndef HGC_FRONTEND_ONNX_ONNX_IMPORT_H_
#define HGC_FRONTEND_ONNX_ONNX_IMPORT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace hgc {

struct OnnxImportOptions {
  // Values of the model's symbolic dimensions (an input dim's dim_param),
  // by name: what `--dim NAME=N` gives.
  std::map<std::string, int64_t, std::less<>> dims;
  // Whole shapes of model inputs, by the input's ONNX name: what
  // `--input-shape NAME=D0,D1,...` gives. The rank and every fixed
  // dimension must match the model's; a symbolic dimension takes the
  // given size (and must agree with `dims` and other inputs).
  std::map<std::string, std::vector<int64_t>, std::less<>> input_shapes;
  // Whether decomposed LayerNorm and GELU chains become `layernorm` and
  // `gelu` ops (frontend/onnx/patterns.h). The lifted ops round
  // differently from the chains; false imports every node as written
  // (what `--onnx-literal` asks for).
  bool lift_patterns = true;
};

// An imported model.
struct OnnxModel {
  // One graph, named after the model's graph: the model's inputs, then one
  // `const` parameter per initializer used as a tensor; the model's
  // outputs in order.
  Module module;
  // The const parameters' values (the initializers), by parameter name.
  std::map<std::string, Tensor> constants;
  // Each model input's ONNX name and the parameter it became, in order.
  std::vector<std::pair<std::string, std::string>> input_names;
  // How many chains became one op (OnnxImportOptions::lift_patterns).
  int lifted_patterns = 0;
};

// Whether `path` names an ONNX model: it ends in ".onnx".
bool IsOnnxPath(absl::string_view path);

// The .graph identifier an ONNX name becomes: every character outside
// [A-Za-z0-9_] is replaced by '_', and '_' is put in front of a name that
// is empty or starts with a digit. (The importer adds "_1", "_2", ... to
// names that would collide.)
std::string SanitizeOnnxName(absl::string_view name);

// Imports the model in the file `path`. External data is read only from
// regular files inside the model's directory.
absl::StatusOr<OnnxModel> ImportOnnxFile(const std::string& path,
                                         const OnnxImportOptions& options = {});

// Imports a model from its serialized bytes. `model_name` labels the
// errors; external data is looked up in `model_dir` (and refused when
// `model_dir` is empty).
absl::StatusOr<OnnxModel> ImportOnnxBytes(
    absl::string_view bytes, absl::string_view model_name,
    const std::string& model_dir, const OnnxImportOptions& options = {});

}  // namespace hgc

#endif  // HGC_FRONTEND_ONNX_ONNX_IMPORT_H_
