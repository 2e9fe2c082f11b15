#include "frontend/parser.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/parser_test_util.h"
#include "gtest/gtest.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "support/diagnostics.h"

namespace hgc {
namespace {

using parser_test::Diag;
using parser_test::G;
using parser_test::HasSubstr;
using parser_test::kMlp;
using parser_test::ParseOk;

constexpr char kMha[] =
    R"(graph @mha(%q: f32[8, 16, 384, 64], %k: f32[8, 16, 384, 64],
           %v: f32[8, 16, 384, 64], %mask: f32[8, 1, 1, 384]) -> f32[8, 16, 384, 64] {
  %s = matmul(%q, %k) {transpose_b = true}
  %c = constant() {value = 0.125} : f32[]
  %t = mul(%s, %c)
  %m = add(%t, %mask)
  %p = softmax(%m) {axis = -1}
  %o = matmul(%p, %v)
  return %o
}
)";

// Every attribute kind, several graphs, several results, comments between
// tokens, numeric and named values.
constexpr char kKitchenSink[] = R"(
// leading comment
graph @first ( %x : f32 [ 4 , 8 ] , %w : bf16[8, 2] const ,  // params
               %s: f32[], %g: f32[8], %g2: f32[8] )
    -> ( f32[4, 8] , bf16[4, 2] ) {
  %0 = gelu(%x) {approximate = "tanh"}   // string attribute
  %1 = cast(%0) {to = bf16} : bf16[4, 8] // dtype attribute
  %2 = matmul(%1, %w) {transpose_a = false} : bf16[4, 2]
  %r = reduce_sum(%x) {axes = [0, -1], keep_dims = true} : f32[1, 1]
  %b = add(%x, %s)
  %c = clamp(%b) {min = -1.5, max = 2.5e3}
  %q = quantize(%c) {scale = [0.5, 0.25, 1.0, 2.0, 0.5, 0.5, 0.5, 0.5], zero_point = 3, axis = 1, to = u8}
  %d = dequantize(%q) {scale = [0.5, 0.25, 1.0, 2.0, 0.5, 0.5, 0.5, 0.5], zero_point = 3, axis = 1}
  %k = constant() {value = [true, false, true, true, false, false, true, true]} : bool[8]
  %z = constant() {value = [1, -2, 3, 4]} : s32[2, 2]
  %sel = select(%k, %d, %x)
  %t = transpose(%sel) {perm = [1, 0]}
  %re = reshape(%t) {shape = [-1]}
  %l = layernorm(%x, %g, %g2) {epsilon = 1e-3}
  return %sel, %2
}

graph @second(%a: s8[2, 3], %b: u8[3, 2]) -> s32[2, 2] {
  %m = matmul(%a, %b)
  return %m
}
)";

// ---------------------------------------------------------------------------
// The grammar.

TEST(ParserTest, DesignMlpExample) {
  Module m = ParseOk(kMlp);
  ASSERT_EQ(m.graphs().size(), 1u);
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(g.name(), "mlp_bottom");
  ASSERT_EQ(g.num_params(), 5);
  EXPECT_EQ(g.param(0)->name(), "x");
  EXPECT_FALSE(g.param(0)->is_const());
  EXPECT_TRUE(g.param(1)->is_const());
  EXPECT_EQ(g.param(1)->type().ToString(), "f32[13, 512]");
  std::vector<std::string> kinds, names;
  for (const auto& op : g.ops()) {
    kinds.push_back(op->kind());
    names.push_back(op->result()->name());
  }
  EXPECT_EQ(absl::StrJoin(kinds, ","), "matmul,add,relu,matmul,add,relu");
  EXPECT_EQ(absl::StrJoin(names, ","), "0,1,2,3,4,5");
  ASSERT_EQ(g.results().size(), 1u);
  EXPECT_EQ(g.results()[0]->name(), "5");
  EXPECT_EQ(g.results()[0]->type().ToString(), "f32[128, 256]");
  ASSERT_EQ(g.declared_result_types().size(), 1u);
  EXPECT_EQ(g.declared_result_types()[0].ToString(), "f32[128, 256]");
}

TEST(ParserTest, DesignMhaExample) {
  Module m = ParseOk(kMha);
  ASSERT_EQ(m.graphs().size(), 1u);
  const Graph& g = *m.graphs()[0];
  std::vector<const Op*> ops;
  for (const auto& op : g.ops()) ops.push_back(op.get());
  ASSERT_EQ(ops.size(), 6u);
  ASSERT_NE(ops[0]->FindAttr("transpose_b"), nullptr);
  EXPECT_TRUE(ops[0]->FindAttr("transpose_b")->as_bool());
  EXPECT_EQ(ops[0]->result()->type().ToString(), "f32[8, 16, 384, 384]");
  EXPECT_EQ(ops[1]->FindAttr("value")->ToString(), "0.125");
  EXPECT_EQ(ops[1]->result()->type().ToString(), "f32[]");
  EXPECT_EQ(ops[4]->FindAttr("axis")->as_int(), -1);
  EXPECT_EQ(g.results()[0]->type().ToString(), "f32[8, 16, 384, 64]");
}

TEST(ParserTest, CanonicalPrintOfMlp) {
  Module m = ParseOk(kMlp);
  EXPECT_EQ(PrintModule(m),
            "graph @mlp_bottom(%x: f32[128, 13], %w0: f32[13, 512] const, "
            "%b0: f32[512] const, %w1: f32[512, 256] const, %b1: f32[256] "
            "const) -> f32[128, 256] {\n"
            "  %0 = matmul(%x, %w0) : f32[128, 512]\n"
            "  %1 = add(%0, %b0) : f32[128, 512]\n"
            "  %2 = relu(%1) : f32[128, 512]\n"
            "  %3 = matmul(%2, %w1) : f32[128, 256]\n"
            "  %4 = add(%3, %b1) : f32[128, 256]\n"
            "  %5 = relu(%4) : f32[128, 256]\n"
            "  return %5\n"
            "}\n");
}

TEST(ParserTest, KitchenSink) {
  Module m = ParseOk(kKitchenSink);
  ASSERT_EQ(m.graphs().size(), 2u);
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(g.name(), "first");
  EXPECT_EQ(g.declared_result_types().size(), 2u);
  EXPECT_EQ(g.results().size(), 2u);
  const Op* gelu = g.ops().front().get();
  EXPECT_EQ(gelu->FindAttr("approximate")->as_string(), "tanh");
  const Op* cast = std::next(g.ops().begin())->get();
  EXPECT_EQ(cast->FindAttr("to")->as_dtype(), DType::kBF16);
  EXPECT_EQ(m.graphs()[1]->results()[0]->type().ToString(), "s32[2, 2]");
  std::string printed = PrintModule(m);
  EXPECT_TRUE(HasSubstr(printed, "{axes = [0, -1], keep_dims = true}"));
  EXPECT_TRUE(HasSubstr(printed, "{max = 2.5e+03, min = -1.5}"));
  EXPECT_TRUE(HasSubstr(printed,
                        "{value = [true, false, true, true, false, false, "
                        "true, true]} : bool[8]"));
  EXPECT_TRUE(HasSubstr(printed, "return %sel, %2\n"));
  EXPECT_TRUE(HasSubstr(
      printed, "\ngraph @second(%a: s8[2, 3], %b: u8[3, 2]) -> s32[2, 2]"));
}

TEST(ParserTest, ScalarsZeroDimsAndResultLists) {
  Module m = ParseOk(
      "graph @g(%s: f32[], %e: f32[0, 4]) -> (f32[], f32[0, 4], f32[0, 4]) {\n"
      "  %a = neg(%s)\n"
      "  return %a, %e, %e\n"
      "}\n");
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(g.param(0)->type().rank(), 0);
  EXPECT_EQ(g.param(1)->type().NumElements(), 0);
  EXPECT_EQ(g.results().size(), 3u);
  // A single result type may also be parenthesized.
  ParseOk("graph @g(%s: f32[]) -> (f32[]) { return %s }");
}

TEST(ParserTest, ParameterlessGraphAndConstantOnly) {
  Module m = ParseOk(
      "graph @g() -> s8[2] {\n"
      "  %c = constant() {value = [-128, 127]} : s8[2]\n"
      "  return %c\n"
      "}\n");
  EXPECT_EQ(m.graphs()[0]->num_params(), 0);
}

TEST(ParserTest, CommentsEverywhereAndCrLf) {
  ParseOk(
      "//c\r\ngraph//c\r\n@g//c\r\n(//c\r\n%x//c\r\n://c\r\nf32//c\r\n[//c\r\n"
      "4//c\r\n]//c\r\nconst//c\r\n)//c\r\n->//c\r\nf32[4]//c\r\n{//c\r\n"
      "%y//c\r\n=//c\r\nsoftmax//c\r\n(//c\r\n%x//c\r\n)//c\r\n{//c\r\naxis//c"
      "\r\n=//c\r\n0//c\r\n}//c\r\n://c\r\nf32[4]//c\r\nreturn//c\r\n%y//c\r\n"
      "}//c");
}

TEST(ParserTest, KeywordsAreContextual) {
  // Keywords and dtype names may name values, graphs and attributes.
  Module m = ParseOk(
      "graph @graph(%return: f32[4], %const: f32[4]) -> f32[4] {\n"
      "  %f32 = add(%return, %const)\n"
      "  return %f32\n"
      "}\n");
  EXPECT_EQ(m.graphs()[0]->name(), "graph");
}

TEST(ParserTest, DeclaredTypeEqualToInferredIsAccepted) {
  ParseOk(G("  %a = add(%x, %y) : f32[4]\n  return %a\n"));
}

TEST(ParserTest, SymbolReferencesMayPointForward) {
  // A fused op calling a body graph defined after it (docs/compiler.md §1).
  constexpr char kFused[] =
      "graph @main(%x: f32[4]) -> f32[4] {\n"
      "  %f = fusion(%x) {body = @main_fused_0, kind = \"elementwise\"} : "
      "f32[4]\n"
      "  return %f\n"
      "}\n"
      "graph @main_fused_0(%x: f32[4]) -> f32[4] {\n"
      "  %a = relu(%x)\n"
      "  return %a\n"
      "}\n";
  Module m = ParseOk(kFused);
  ASSERT_EQ(m.graphs().size(), 2u);
  const Op* fusion = m.graphs()[0]->ops().front().get();
  ASSERT_NE(fusion->FindAttr("body"), nullptr);
  EXPECT_EQ(fusion->FindAttr("body")->as_symbol(), "main_fused_0");
  EXPECT_TRUE(HasSubstr(PrintModule(m),
                        "{body = @main_fused_0, kind = "
                        "\"elementwise\"} : f32[4]"));
}

TEST(ParserErrorTest, UndefinedSymbolIsReportedAtTheReference) {
  EXPECT_EQ(Diag("graph @main(%x: f32[4]) -> f32[4] {\n"
                 "  %f = fusion(%x) {body = @nowhere, kind = \"elementwise\"} "
                 ": f32[4]\n"
                 "  return %f\n"
                 "}\n"),
            "t.graph:2:27: error: reference to undefined graph '@nowhere'\n"
            "  %f = fusion(%x) {body = @nowhere, kind = \"elementwise\"} : "
            "f32[4]\n"
            "                          ^\n");
}

// ---------------------------------------------------------------------------
// Round trip: parse -> print -> parse -> print gives the same text.

std::string RoundTrip(absl::string_view text) {
  SourceManager sm1, sm2;
  absl::StatusOr<Module> m1 = ParseModule(text, "a.graph", sm1);
  EXPECT_TRUE(m1.ok()) << FormatError(m1.status(), sm1);
  if (!m1.ok()) return "";
  std::string p1 = PrintModule(*m1);
  absl::StatusOr<Module> m2 = ParseModule(p1, "b.graph", sm2);
  EXPECT_TRUE(m2.ok()) << FormatError(m2.status(), sm2) << p1;
  if (!m2.ok()) return "";
  EXPECT_EQ(PrintModule(*m2), p1);
  return p1;
}

TEST(ParserTest, RoundTrip) {
  RoundTrip(kMlp);
  RoundTrip(kMha);
  RoundTrip(kKitchenSink);
  // Floats keep their value and their FLOAT-ness; strings their escapes.
  std::string p = RoundTrip(
      "graph @g(%x: f32[4]) -> f32[4] {\n"
      "  %a = clamp(%x) {min = -0.0, max = 1e300}\n"
      "  %b = constant() {value = [1.0, 2, 5e-324, 0.1]} : f32[4]\n"
      "  %c = add(%a, %b)\n"
      "  return %c\n"
      "}\n");
  EXPECT_TRUE(HasSubstr(p, "{max = 1e+300, min = -0.0}"));
  EXPECT_TRUE(HasSubstr(p, "[1.0, 2, 5e-324, 0.1]"));
  // Non-finite constants and clamp bounds print as inf, -inf and nan, and
  // parse back.
  p = RoundTrip(
      "graph @g(%x: f32[4]) -> f32[4] {\n"
      "  %a = clamp(%x) {min = -inf, max = inf}\n"
      "  %b = constant() {value = [-inf, 0.0, nan, inf]} : f32[4]\n"
      "  %m = constant() {value = -inf} : f32[]\n"
      "  %c = add(%a, %b)\n"
      "  %d = max(%c, %m)\n"
      "  return %d\n"
      "}\n");
  EXPECT_TRUE(HasSubstr(p, "{max = inf, min = -inf}"));
  EXPECT_TRUE(HasSubstr(p, "[-inf, 0.0, nan, inf]"));
  EXPECT_TRUE(HasSubstr(p, "{value = -inf} : f32[]"));
  p = RoundTrip(
      "graph @g(%x: f32[4]) -> f32[4] {\n"
      "  %a = softmax(%x) {axis = -1}\n  return %a\n}\n");
  // Default-valued attributes are dropped by the printer.
  EXPECT_TRUE(HasSubstr(p, "%a = softmax(%x) : f32[4]\n"));
}

// ---------------------------------------------------------------------------
// ParseFile.

TEST(ParseFileTest, ReadsAFileAndNamesErrorsAfterIt) {
  std::string dir = ::testing::TempDir();
  std::string path = dir + "/parse_file_test.graph";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::string text = G("  %a = relu(%z)\n  return %a\n");
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  SourceManager sm;
  absl::StatusOr<Module> m = ParseFile(path, sm);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(FormatError(m.status(), sm).substr(0, path.size() + 5),
            path + ":2:13");
}

TEST(ParseFileTest, UnreadableFiles) {
  SourceManager sm;
  absl::StatusOr<Module> m = ParseFile("/nonexistent/dir/x.graph", sm);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(m.status().message(),
            "cannot open '/nonexistent/dir/x.graph': No such file or "
            "directory");
  m = ParseFile(::testing::TempDir(), sm);  // a directory
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(HasSubstr(m.status().message(), "not a regular file"));
  m = ParseFile("/dev/zero", sm);  // would never end
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(HasSubstr(m.status().message(), "not a regular file"));
}

}  // namespace
}  // namespace hgc
