// libFuzzer target for the `.graph` parser (style.md: "a fuzzer on the
// parser"). For every input:
//   - a parse error must be a located InvalidArgument whose message is UTF-8
//     and which FormatError can render;
//   - a successful parse implies the input was UTF-8, and printing the module,
//     parsing the print and printing again must give the same text.
// Anything else traps, which libFuzzer reports as a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontend/lexer.h"
#include "frontend/parser.h"
#include "ir/printer.h"
#include "support/diagnostics.h"
#include "support/source_location.h"

namespace hgc {
namespace {

[[noreturn]] void Fail(absl::string_view what, absl::string_view detail) {
  std::fprintf(stderr, "parser_fuzzer: %.*s\n%.*s\n",
               static_cast<int>(what.size()), what.data(),
               static_cast<int>(detail.size()), detail.data());
  __builtin_trap();
}

void CheckParseError(const absl::Status& status, const SourceManager& sm,
                     size_t input_size) {
  if (status.code() != absl::StatusCode::kInvalidArgument) {
    Fail("parse error is not InvalidArgument", status.ToString());
  }
  std::optional<SourceLoc> loc = GetLoc(status);
  if (!loc.has_value() || loc->file_id != 0 || loc->offset < 0 ||
      loc->offset > static_cast<int64_t>(input_size)) {
    Fail("parse error without a valid location", status.ToString());
  }
  if (FindInvalidUtf8(status.message()) >= 0) {
    Fail("parse error message is not UTF-8", status.ToString());
  }
  if (FormatError(status, sm).empty()) Fail("empty diagnostic", "");
}

}  // namespace
}  // namespace hgc

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hgc;  // NOLINT: a C entry point
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  SourceManager sm;
  absl::StatusOr<Module> module = ParseModule(text, "fuzz.graph", sm);
  if (!module.ok()) {
    CheckParseError(module.status(), sm, size);
    return 0;
  }
  if (FindInvalidUtf8(text) >= 0) Fail("accepted input that is not UTF-8", "");
  std::string printed = PrintModule(*module);
  SourceManager sm2;
  absl::StatusOr<Module> reparsed = ParseModule(printed, "printed.graph", sm2);
  if (!reparsed.ok()) {
    Fail("printed module does not parse",
         FormatError(reparsed.status(), sm2) + printed);
  }
  std::string reprinted = PrintModule(*reparsed);
  if (reprinted != printed) {
    Fail("print -> parse -> print changed the text",
         printed + "\n----- became -----\n" + reprinted);
  }
  return 0;
}
