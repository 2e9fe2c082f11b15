#include "frontend/parser_test_util.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "frontend/parser.h"
#include "support/diagnostics.h"

namespace hgc {
namespace parser_test {

// Parses `text` as "t.graph"; the formatted error, or "" (and a test
// failure) when it parses.
std::string Diag(absl::string_view text) {
  SourceManager sm;
  absl::StatusOr<Module> m = ParseModule(text, "t.graph", sm);
  EXPECT_FALSE(m.ok()) << "parsed:\n" << text;
  if (m.ok()) return "";
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(GetLoc(m.status()).has_value()) << m.status();
  return FormatError(m.status(), sm);
}

// The first line of Diag(text): "t.graph:L:C: error: message".
std::string Error(absl::string_view text) {
  std::string diag = Diag(text);
  return std::string(diag.substr(0, diag.find('\n')));
}

Module ParseOk(absl::string_view text) {
  SourceManager sm;
  absl::StatusOr<Module> m = ParseModule(text, "t.graph", sm);
  EXPECT_TRUE(m.ok()) << FormatError(m.status(), sm);
  if (!m.ok()) return Module();
  return std::move(*m);
}

// A graph @g(%x: f32[4], %y: f32[4]) -> f32[4] with `body` as its body.
std::string G(absl::string_view body) {
  return absl::StrCat("graph @g(%x: f32[4], %y: f32[4]) -> f32[4] {\n", body,
                      "}\n");
}

::testing::AssertionResult HasSubstr(absl::string_view text,
                                     absl::string_view part) {
  if (absl::StrContains(text, part)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << text << "' does not contain '" << part << "'";
}

}  // namespace parser_test
}  // namespace hgc
