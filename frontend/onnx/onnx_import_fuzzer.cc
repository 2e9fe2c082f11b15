// libFuzzer target for the ONNX importer. For every input:
//   - an error must be a status whose message is the importer's diagnostic,
//     naming the model ("fuzz.onnx: ...");
//   - an imported model must print as .graph text that parses back and
//     prints the same (what `hgc MODEL.onnx --emit=ir` promises).
// Anything else traps, which libFuzzer reports as a crash. Seed it with
// testdata/onnx/*.onnx.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "frontend/onnx/onnx_import.h"
#include "frontend/parser.h"
#include "ir/printer.h"
#include "support/source_location.h"

namespace hgc {
namespace {

[[noreturn]] void Fail(absl::string_view what, absl::string_view detail) {
  std::fprintf(stderr, "onnx_import_fuzzer: %.*s\n%.*s\n",
               static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  __builtin_trap();
}

}  // namespace
}  // namespace hgc

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hgc;  // NOLINT: the entry point's own scope
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<OnnxModel> model = ImportOnnxBytes(bytes, "fuzz.onnx", "");
  if (!model.ok()) {
    if (!absl::StartsWith(model.status().message(), "fuzz.onnx: ")) {
      Fail("an error that does not name the model", model.status().ToString());
    }
    return 0;
  }
  const std::string text = PrintModule(model->module);
  SourceManager sm;
  absl::StatusOr<Module> parsed = ParseModule(text, "printed.graph", sm);
  if (!parsed.ok()) Fail("the printed model does not parse", text);
  if (PrintModule(*parsed) != text) Fail("print, parse, print differs", text);
  return 0;
}
