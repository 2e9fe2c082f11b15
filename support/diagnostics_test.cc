#include "support/diagnostics.h"

#include "gtest/gtest.h"

namespace hgc {
namespace {

TEST(DiagnosticsTest, FormatsLocatedErrorWithCaret) {
  SourceManager sm;
  int32_t id = sm.AddFile("model.graph", "graph @g() {\n  %3 = matmull(%2)\n}\n");
  absl::Status s = ErrorAt({id, 20}, "unknown op 'matmull'");
  EXPECT_EQ(FormatError(s, sm),
            "model.graph:2:8: error: unknown op 'matmull'\n"
            "  %3 = matmull(%2)\n"
            "       ^\n");
}

TEST(DiagnosticsTest, ColumnsCountCharactersAndCopyTabs) {
  SourceManager sm;
  // "é" is two bytes; the error points at 'x' (byte 4, character 4).
  int32_t id = sm.AddFile("f.graph", "\t\xC3\xA9 x");
  LineCol lc = sm.GetLineCol({id, 4});
  EXPECT_EQ(lc.line, 1);
  EXPECT_EQ(lc.column, 4);
  EXPECT_EQ(FormatError(ErrorAt({id, 4}, "bad"), sm),
            "f.graph:1:4: error: bad\n\t\xC3\xA9 x\n\t  ^\n");
}

TEST(DiagnosticsTest, EndOfFileAndUnlocatedErrors) {
  SourceManager sm;
  int32_t id = sm.AddFile("e.graph", "a\nbc");
  LineCol lc = sm.GetLineCol({id, 4});
  EXPECT_EQ(lc.line, 2);
  EXPECT_EQ(lc.column, 3);
  EXPECT_EQ(FormatError(absl::InvalidArgumentError("oops"), sm), "error: oops\n");
  EXPECT_EQ(FormatError(absl::NotFoundError("cannot open"), sm, "x.graph"),
            "x.graph: error: cannot open\n");
}

TEST(DiagnosticsTest, LongLinesAreShownAsAWindow) {
  SourceManager sm;
  std::string text(3000000, 'a');
  text[2000000] = '!';
  int32_t id = sm.AddFile("long.graph", text);
  std::string formatted = FormatError(ErrorAt({id, 2000000}, "bad"), sm);
  EXPECT_LT(formatted.size(), 500u);
  EXPECT_EQ(formatted.rfind("long.graph:1:2000001: error: bad\n...", 0), 0u);
  // The caret sits under the '!'.
  size_t line_start = formatted.find('\n') + 1;
  size_t caret_start = formatted.find('\n', line_start) + 1;
  size_t bang = formatted.find('!') - line_start;
  EXPECT_EQ(formatted.find('^', caret_start) - caret_start, bang);
}

TEST(DiagnosticsTest, BinaryBytesAreShownAsQuestionMarks) {
  SourceManager sm;
  int32_t id = sm.AddFile("bin.graph", std::string("a\x01\xFF\xC3\xA9z", 6));
  // 'z' is byte 5, character 5 (a, \x01, \xFF, \xC3\xA9, z).
  EXPECT_EQ(FormatError(ErrorAt({id, 5}, "bad"), sm),
            "bin.graph:1:5: error: bad\na??\xC3\xA9z\n    ^\n");
}

TEST(DiagnosticsTest, AttachLocKeepsTheFirstLocation) {
  absl::Status s = ErrorAt({0, 5}, "first");
  s = AttachLoc(s, {0, 9});
  EXPECT_EQ(GetLoc(s)->offset, 5);
  EXPECT_FALSE(GetLoc(absl::InvalidArgumentError("x")).has_value());
  EXPECT_TRUE(AttachLoc(absl::OkStatus(), {0, 1}).ok());
}

}  // namespace
}  // namespace hgc
