// Helpers shared by the parser tests (parser_test.cc, parser_errors_test.cc,
// parser_hostile_test.cc): parse a text as "t.graph" and read back its
// error or module.
#ifndef HGC_FRONTEND_PARSER_TEST_UTIL_H_
#define HGC_FRONTEND_PARSER_TEST_UTIL_H_

#include <string>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "ir/graph.h"

namespace hgc {
namespace parser_test {

// A DLRM bottom MLP, as a .graph text.
inline constexpr char kMlp[] = R"(// DLRM bottom MLP, batch 128
graph @mlp_bottom(%x: f32[128, 13],
                  %w0: f32[13, 512] const, %b0: f32[512] const,
                  %w1: f32[512, 256] const, %b1: f32[256] const) -> f32[128, 256] {
  %0 = matmul(%x, %w0)
  %1 = add(%0, %b0)
  %2 = relu(%1)
  %3 = matmul(%2, %w1)
  %4 = add(%3, %b1)
  %5 = relu(%4)
  return %5
}
)";

// Parses `text` as "t.graph"; the formatted error, or "" (and a test
// failure) when it parses.
std::string Diag(absl::string_view text);

// The first line of Diag(text): "t.graph:L:C: error: message".
std::string Error(absl::string_view text);

// Parses `text` as "t.graph"; the module, or an empty one (and a test
// failure) when it does not parse.
Module ParseOk(absl::string_view text);

// A graph @g(%x: f32[4], %y: f32[4]) -> f32[4] with `body` as its body.
std::string G(absl::string_view body);

// Whether `text` contains `part`, saying what it is when not.
::testing::AssertionResult HasSubstr(absl::string_view text,
                                     absl::string_view part);

}  // namespace parser_test
}  // namespace hgc

#endif  // HGC_FRONTEND_PARSER_TEST_UTIL_H_
