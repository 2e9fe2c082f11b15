#include <string>

#include "absl/strings/str_cat.h"
#include "frontend/parser.h"
#include "frontend/parser_test_util.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "support/diagnostics.h"

namespace hgc {
namespace {

using parser_test::Diag;
using parser_test::Error;
using parser_test::G;
using parser_test::HasSubstr;
using parser_test::kMlp;
using parser_test::ParseOk;

// ---------------------------------------------------------------------------
// Errors: exact line:column and message.

TEST(ParserErrorTest, UndefinedValueFullDiagnostic) {
  // The example of style.md.
  EXPECT_EQ(Diag("graph @bad(%x: f32[4]) -> f32[4] {\n"
                 "  %y = relu(%z)\n"
                 "  return %y\n"
                 "}\n"),
            "t.graph:2:13: error: use of undefined value '%z'\n"
            "  %y = relu(%z)\n"
            "            ^\n");
}

TEST(ParserErrorTest, EmptyAndCommentOnlyFiles) {
  EXPECT_EQ(Diag(""),
            "t.graph:1:1: error: expected 'graph', found end of file\n\n^\n");
  EXPECT_EQ(Error("// nothing here\n// at all"),
            "t.graph:2:10: error: expected 'graph', found end of file");
  EXPECT_EQ(Error("  grph @g() -> f32[] {}"),
            "t.graph:1:3: error: expected 'graph', found 'grph'");
  EXPECT_EQ(Error(std::string(kMlp) + "\n junk"),
            "t.graph:14:2: error: expected 'graph' or end of file, found "
            "'junk'");
}

TEST(ParserErrorTest, GraphHeader) {
  EXPECT_EQ(Error("graph main() -> f32[] {}"),
            "t.graph:1:7: error: expected graph name (e.g. '@main') after "
            "'graph', found 'main'");
  EXPECT_EQ(Error("graph @g -> f32[] {}"),
            "t.graph:1:10: error: expected '(' after the graph name, found "
            "'->'");
  EXPECT_EQ(Error("graph @g(x: f32[]) -> f32[] {}"),
            "t.graph:1:10: error: expected parameter (e.g. '%x: f32[4]'), "
            "found 'x'");
  EXPECT_EQ(Error("graph @g(%x f32[]) -> f32[] {}"),
            "t.graph:1:13: error: expected ':' after parameter '%x', found "
            "'f32'");
  EXPECT_EQ(Error("graph @g(%x: f32[] %y: f32[]) -> f32[] {}"),
            "t.graph:1:20: error: expected ',' or ')' after parameter, found "
            "'%y'");
  EXPECT_EQ(Error("graph @g(%x: f32[],) -> f32[] {}"),
            "t.graph:1:20: error: expected parameter (e.g. '%x: f32[4]'), "
            "found ')'");
  EXPECT_EQ(Error("graph @g(%x: f32[]) f32[] {}"),
            "t.graph:1:21: error: expected '->' after the parameter list, "
            "found 'f32'");
  EXPECT_EQ(Error("graph @g(%x: f32[]) -> () {}"),
            "t.graph:1:25: error: expected type (e.g. 'f32[4, 8]'), found "
            "')'");
  EXPECT_EQ(Error("graph @g(%x: f32[]) -> (f32[] f32[]) {}"),
            "t.graph:1:31: error: expected ',' or ')' after result type, "
            "found 'f32'");
  EXPECT_EQ(Error("graph @g(%x: f32[]) -> f32[] return %x }"),
            "t.graph:1:30: error: expected '{' after the result types, found "
            "'return'");
  EXPECT_EQ(Error("graph @g(%x: f32[]) -> f32[] {\n  return %x\n"),
            "t.graph:3:1: error: expected ',' or '}' after return value, "
            "found end of file");
  EXPECT_EQ(Error("graph @g(%x: f32[]) -> f32[] {\n"),
            "t.graph:2:1: error: expected statement or '}' closing '@g', "
            "found end of file");
}

TEST(ParserErrorTest, Types) {
  EXPECT_EQ(Error("graph @g(%x: f64[4]) -> f32[] {}"),
            "t.graph:1:14: error: unknown element type 'f64' (expected f32, "
            "bf16, f16, s32, s8, u8 or bool)");
  EXPECT_EQ(Error("graph @g(%x: f32) -> f32[] {}"),
            "t.graph:1:17: error: expected '[' after element type 'f32', "
            "found ')'");
  EXPECT_EQ(Error("graph @g(%x: f32[4,]) -> f32[] {}"),
            "t.graph:1:20: error: expected dimension (an integer), found ']'");
  EXPECT_EQ(Error("graph @g(%x: f32[4.0]) -> f32[] {}"),
            "t.graph:1:18: error: expected dimension (an integer), found "
            "'4.0'");
  EXPECT_EQ(Error("graph @g(%x: f32[4 4]) -> f32[] {}"),
            "t.graph:1:20: error: expected ',' or ']' after dimension, found "
            "'4'");
  EXPECT_EQ(Error("graph @g(%x: f32[4, -2]) -> f32[] {}"),
            "t.graph:1:21: error: negative dimension -2");
  EXPECT_EQ(Error("graph @g(%x: %y) -> f32[] {}"),
            "t.graph:1:14: error: expected type (e.g. 'f32[4, 8]'), found "
            "'%y'");
}

TEST(ParserErrorTest, DimensionOverflowIsAnErrorAtTheType) {
  // 2^40 * 2^40 = 2^80 elements.
  EXPECT_EQ(Error("graph @g(%x: f32[2, 3],\n"
                  "         %y: bf16[1099511627776, 1099511627776]) -> f32[] "
                  "{}"),
            "t.graph:2:14: error: tensor of shape [1099511627776, "
            "1099511627776] has more than 2^60 elements");
  // Just 2^60 is allowed; one element more is not.
  SourceManager sm;
  EXPECT_TRUE(ParseModule("graph @g(%x: u8[1073741824, 1073741824]) -> "
                          "u8[1073741824, 1073741824] { return %x }",
                          "t.graph", sm)
                  .ok());
  EXPECT_TRUE(
      HasSubstr(Error("graph @g(%x: u8[1073741825, 1073741824]) -> f32[] {}"),
                "t.graph:1:14: error: tensor of shape"));
  // In an op's declared type too, and the product never overflows int64.
  EXPECT_TRUE(
      HasSubstr(Error(G("  %a = relu(%x) : f32[9223372036854775807, "
                        "9223372036854775807, 4]\n  return %a\n")),
                "t.graph:2:19: error: tensor of shape [9223372036854775807"));
  EXPECT_EQ(Error("graph @g(%x: f32[99999999999999999999]) -> f32[] {}"),
            "t.graph:1:18: error: integer literal '99999999999999999999' "
            "does not fit in 64 bits");
}

TEST(ParserErrorTest, TooManyDimensions) {
  std::string dims = "1";
  for (int i = 1; i < kMaxRank; ++i) dims += ",1";
  ParseOk(absl::StrCat("graph @g(%x: f32[", dims, "]) -> f32[", dims,
                       "] { return %x }"));
  EXPECT_EQ(Error(absl::StrCat("graph @g(%x: f32[", dims, ",1]) -> f32[] {}")),
            absl::StrCat("t.graph:1:", 18 + 2 * kMaxRank,
                         ": error: too many dimensions (a type has at most ",
                         kMaxRank, ")"));
}

TEST(ParserErrorTest, Redefinitions) {
  EXPECT_EQ(Error("graph @g(%x: f32[4], %x: f32[4]) -> f32[4] { return %x }"),
            "t.graph:1:22: error: redefinition of value '%x'");
  EXPECT_EQ(Error(G("  %x = relu(%y)\n  return %x\n")),
            "t.graph:2:3: error: redefinition of value '%x'");
  EXPECT_EQ(Error(G("  %a = relu(%y)\n  %a = relu(%a)\n  return %a\n")),
            "t.graph:3:3: error: redefinition of value '%a'");
  EXPECT_EQ(Error(G("  %a, %a = relu(%y)\n  return %a\n")),
            "t.graph:2:7: error: redefinition of value '%a'");
  EXPECT_EQ(Error("graph @g(%x: f32[]) -> f32[] { return %x }\n"
                  "graph @h(%x: f32[]) -> f32[] { return %x }\n"
                  "graph @g(%x: f32[]) -> f32[] { return %x }\n"),
            "t.graph:3:7: error: redefinition of graph '@g'");
  // Names are per graph: %x in @h is not %x in @g.
  EXPECT_EQ(Error("graph @g(%x: f32[]) -> f32[] { %a = neg(%x)\n return %a }\n"
                  "graph @h(%y: f32[]) -> f32[] { return %a }\n"),
            "t.graph:3:39: error: use of undefined value '%a'");
}

TEST(ParserErrorTest, UseBeforeDefinition) {
  EXPECT_EQ(Error(G("  %a = add(%x, %b)\n  %b = relu(%x)\n  return %a\n")),
            "t.graph:2:16: error: use of undefined value '%b'");
  EXPECT_EQ(Error(G("  %a = relu(%a)\n  return %a\n")),
            "t.graph:2:13: error: use of undefined value '%a'");
  EXPECT_EQ(Error(G("  return %nope\n")),
            "t.graph:2:10: error: use of undefined value '%nope'");
}

TEST(ParserErrorTest, StatementSyntax) {
  EXPECT_EQ(Error(G("  %a = add(%x %y)\n  return %a\n")),
            "t.graph:2:15: error: expected ')' after operands, found '%y'");
  EXPECT_EQ(Error(G("  %a = add(%x,)\n  return %a\n")),
            "t.graph:2:15: error: expected operand after ',', found ')'");
  EXPECT_EQ(Error(G("  %a = add(1)\n  return %a\n")),
            "t.graph:2:12: error: expected operand (e.g. '%x') or ')', found "
            "'1'");
  EXPECT_EQ(Error(G("  %a relu(%x)\n  return %a\n")),
            "t.graph:2:6: error: expected '=' after '%a', found 'relu'");
  EXPECT_EQ(Error(G("  %a = (%x)\n  return %a\n")),
            "t.graph:2:8: error: expected op name after '=', found '('");
  EXPECT_EQ(Error(G("  %a = relu %x\n  return %a\n")),
            "t.graph:2:13: error: expected '(' after op name 'relu', found "
            "'%x'");
  EXPECT_EQ(Error(G("  %a, = relu(%x)\n  return %a\n")),
            "t.graph:2:7: error: expected value name after ',', found '='");
  EXPECT_EQ(Error(G("  relu(%x)\n")),
            "t.graph:2:3: error: expected statement ('%name = op(...)' or "
            "'return'), found 'relu'");
  EXPECT_EQ(Error(G("  %a = relu(%x) : \n  return %a\n")),
            "t.graph:3:3: error: expected type (e.g. 'f32[4, 8]'), found "
            "'return'");
}

TEST(ParserErrorTest, UnknownOps) {
  EXPECT_EQ(Diag(G("  %a = matmull(%x, %y)\n  return %a\n")),
            "t.graph:2:8: error: unknown op 'matmull'; did you mean "
            "'matmul'?\n"
            "  %a = matmull(%x, %y)\n"
            "       ^\n");
  EXPECT_EQ(Error(G("  %a = frobnicate(%x)\n  return %a\n")),
            "t.graph:2:8: error: unknown op 'frobnicate'");
  // A dtype or keyword used as an op is just an unknown op.
  EXPECT_EQ(Error(G("  %a = f32(%x)\n  return %a\n")),
            "t.graph:2:8: error: unknown op 'f32'");
  EXPECT_EQ(Error(G("  %a = return(%x)\n  return %a\n")),
            "t.graph:2:8: error: unknown op 'return'");
  // The op is checked before its operands.
  EXPECT_EQ(Error(G("  %a = matmull(%undefined)\n  return %a\n")),
            "t.graph:2:8: error: unknown op 'matmull'; did you mean "
            "'matmul'?");
}

TEST(ParserErrorTest, OpTypeErrorsAreAtTheOpName) {
  const std::string header = "graph @g(%x: f32[4], %y: f32[5]) -> f32[4] {\n";
  std::string e = Error(header + "  %a = add(%x, %y)\n  return %a\n}\n");
  EXPECT_TRUE(HasSubstr(e,
                        "t.graph:2:8: error: 'add': shapes [4] and [5] do "
                        "not broadcast"))
      << e;
  EXPECT_EQ(Error(G("  %a = relu(%x, %y)\n  return %a\n")),
            "t.graph:2:8: error: op 'relu' takes 1 operand, found 2");
  EXPECT_EQ(Error(G("  %a = relu(%x) : f32[5]\n  return %a\n")),
            "t.graph:2:8: error: result type f32[5] of 'relu' does not match "
            "the inferred type f32[4]");
  EXPECT_EQ(Error(G("  %a = relu(%x) : f32[4], f32[4]\n  return %a\n")),
            "t.graph:2:8: error: op 'relu' has 1 result(s), but 2 type(s) "
            "are written");
  e = Error(G("  %a = relu(%x) {axis = 1}\n  return %a\n"));
  EXPECT_TRUE(HasSubstr(e,
                        "t.graph:2:8: error: unknown attribute 'axis' for "
                        "op 'relu'"))
      << e;
  e = Error(G("  %a = softmax(%x) {axis = 1.5}\n  return %a\n"));
  EXPECT_TRUE(HasSubstr(e,
                        "t.graph:2:8: error: attribute 'axis' of 'softmax' "
                        "must be an integer, found 1.5"))
      << e;
  e = Error(G("  %c = constant() {value = 1.0}\n  return %c\n"));
  EXPECT_TRUE(HasSubstr(e,
                        "t.graph:2:8: error: 'constant': the result type "
                        "must be written"))
      << e;
  EXPECT_EQ(Error(G("  %a, %b = relu(%x)\n  return %a\n")),
            "t.graph:2:12: error: op 'relu' has 1 result but 2 values are "
            "defined");
  // A @symbol attribute parses; relu just does not take one.
  e = Error(G("  %a = softmax(%x) {axis = @g}\n  return %a\n"));
  EXPECT_TRUE(HasSubstr(e,
                        "t.graph:2:8: error: attribute 'axis' of "
                        "'softmax' must be an integer, found @g"))
      << e;
}

TEST(ParserErrorTest, Attributes) {
  EXPECT_EQ(Error(G("  %a = softmax(%x) {}\n  return %a\n")),
            "t.graph:2:21: error: expected attribute name, found '}'");
  EXPECT_EQ(Error(G("  %a = softmax(%x) {axis 1}\n  return %a\n")),
            "t.graph:2:26: error: expected '=' after attribute name 'axis', "
            "found '1'");
  EXPECT_EQ(Error(G("  %a = softmax(%x) {axis = foo}\n  return %a\n")),
            "t.graph:2:28: error: expected attribute value, found 'foo'");
  EXPECT_EQ(Error(G("  %a = softmax(%x) {axis = 1 axis = 2}\n  return %a\n")),
            "t.graph:2:30: error: expected ',' or '}' after attribute value, "
            "found 'axis'");
  EXPECT_EQ(Error(G("  %a = softmax(%x) {axis = 1, axis = 2}\n  return %a\n")),
            "t.graph:2:31: error: duplicate attribute 'axis'");
  EXPECT_EQ(Error(G("  %a = reshape(%x) {shape = [4 1]}\n  return %a\n")),
            "t.graph:2:32: error: expected ',' or ']' after list element, "
            "found '1'");
  EXPECT_EQ(Error(G("  %a = reshape(%x) {shape = [4,]}\n  return %a\n")),
            "t.graph:2:32: error: expected attribute value, found ']'");
  EXPECT_EQ(Error(G("  %a = gelu(%x) {approximate = \"tan\\h\"}\n  return "
                    "%a\n")),
            "t.graph:2:36: error: invalid escape sequence '\\h' in string "
            "literal (allowed: \\\" \\\\ \\n \\t)");
  // Non-finite values only where an op allows them; NaN bounds nowhere.
  EXPECT_EQ(Error(G("  %a = clamp(%x) {max = nan}\n  return %a\n")),
            "t.graph:2:8: error: 'clamp': min and max must not be NaN");
  EXPECT_EQ(Error(G("  %a = softmax(%x) {axis = inf}\n  return %a\n")),
            "t.graph:2:8: error: attribute 'axis' of 'softmax' must be an "
            "integer, found inf");
  EXPECT_EQ(Error(G("  %a = clamp(%x) {min = -infinity}\n  return %a\n")),
            "t.graph:2:25: error: expected a digit, 'inf' or '>' after '-'");
  std::string e =
      Error(G("  %a = gelu(%x) {approximate = \"erf\"}\n  return %a\n"));
  EXPECT_TRUE(HasSubstr(e, "t.graph:2:8: error:")) << e;
}

TEST(ParserErrorTest, NestingTooDeep) {
  std::string ok(kMaxAttrNesting, '[');
  ok += std::string(kMaxAttrNesting, ']');
  // The parser accepts kMaxAttrNesting levels; the op then rejects the kind.
  std::string e =
      Error(G("  %a = reshape(%x) {shape = " + ok + "}\n  return %a\n"));
  EXPECT_TRUE(HasSubstr(e,
                        "t.graph:2:8: error: attribute 'shape' of "
                        "'reshape' must be a list of integers"))
      << e;
  std::string deep(100000, '[');
  EXPECT_EQ(Error(G("  %a = reshape(%x) {shape = " + deep)),
            absl::StrCat("t.graph:2:", 29 + kMaxAttrNesting,
                         ": error: nesting too deep: attribute lists nest at "
                         "most ",
                         kMaxAttrNesting, " levels"));
}

TEST(ParserErrorTest, Returns) {
  EXPECT_EQ(Error(G("  %a = relu(%x)\n")),
            "t.graph:3:1: error: missing 'return' at the end of '@g'");
  EXPECT_EQ(Error("graph @g() -> f32[] {}"),
            "t.graph:1:22: error: missing 'return' at the end of '@g'");
  EXPECT_EQ(Error(G("  return %x\n  %a = relu(%x)\n")),
            "t.graph:3:3: error: statement after 'return' ('return' must be "
            "the last statement of '@g')");
  EXPECT_EQ(Error(G("  return %x\n  %a, %b = relu(%x)\n")),
            "t.graph:3:3: error: statement after 'return' ('return' must be "
            "the last statement of '@g')");
  EXPECT_EQ(Error(G("  return %x\n  return %x\n")),
            "t.graph:3:3: error: second 'return' in '@g' (a graph has "
            "exactly one 'return', its last statement)");
  EXPECT_EQ(Error(G("  return %x %y\n")),
            "t.graph:2:13: error: expected ',' or '}' after return value, "
            "found '%y'");
  EXPECT_EQ(Error(G("  return\n")),
            "t.graph:3:1: error: expected value after 'return', found '}'");
  EXPECT_EQ(Error(G("  return %x,\n")),
            "t.graph:3:1: error: expected value after ',', found '}'");
  EXPECT_EQ(Error(G("  return %x, %y\n")),
            "t.graph:2:3: error: 'return' has 2 values but '@g' declares 1 "
            "result");
  EXPECT_EQ(Error("graph @g(%x: f32[4]) -> (f32[4], f32[4]) {\n  return "
                  "%x\n}\n"),
            "t.graph:2:3: error: 'return' has 1 value but '@g' declares 2 "
            "results");
  EXPECT_EQ(Error("graph @g(%x: f32[4], %s: f32[]) -> (f32[4], f32[4]) {\n"
                  "  return %x, %s\n}\n"),
            "t.graph:2:14: error: returned value '%s' has type f32[] but "
            "result 1 of '@g' is declared f32[4]");
}

TEST(ParserErrorTest, ColumnsCountCharactersAndCaretsKeepTabs) {
  // Each 'é' is two bytes but one column.
  EXPECT_EQ(
      Diag(G("\t%a = gelu(%x) {approximate = \"\xC3\xA9\xC3\xA9\", b = }\n"
             "  return %a\n")),
      "t.graph:2:41: error: expected attribute value, found '}'\n"
      "\t%a = gelu(%x) {approximate = \"\xC3\xA9\xC3\xA9\", b = }\n"
      "\t                                       ^\n");
}

TEST(ParserErrorTest, InvalidUtf8) {
  EXPECT_EQ(Error(G("  // fine \xC3\xA9 then \xC3(\n  return %x\n")),
            "t.graph:2:18: error: invalid UTF-8 byte 0xC3");
  EXPECT_EQ(Error(G("  %a = gelu(%x) {approximate = \"\xFF\"}\n  return %a\n")),
            "t.graph:2:33: error: invalid UTF-8 byte 0xFF");
  EXPECT_EQ(Error("\xEF\xBB\xBFgraph"),  // a BOM is a character, not space
            "t.graph:1:1: error: unexpected character '\xEF\xBB\xBF' "
            "(U+FEFF)");
  // The first error in the file wins: bad bytes before a syntax error...
  EXPECT_EQ(Error(G("  %a = relu(%x\n  // \xFF\n  return %a\n")),
            "t.graph:3:6: error: invalid UTF-8 byte 0xFF");
  // ... and a syntax error before bad bytes.
  EXPECT_EQ(Error(G("  %a = relu(%x %x // \xFF\n  return %a\n")),
            "t.graph:2:16: error: expected ')' after operands, found '%x'");
}

TEST(ParserErrorTest, NothingAfterTheFirstErrorMatters) {
  EXPECT_EQ(Error("graph @g(%x: f32[4]) -> f32[4] {\n  %a = relu(%q)\n"
                  "  %b = bogus(%x)\n  $$$ \xFF\n"),
            "t.graph:2:13: error: use of undefined value '%q'");
}

}  // namespace
}  // namespace hgc
