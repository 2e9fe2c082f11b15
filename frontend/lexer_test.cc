#include "frontend/lexer.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "support/diagnostics.h"

namespace hgc {
namespace {

// gmock is not part of the Debian gtest target; a tiny matcher instead.
::testing::AssertionResult HasSubstr(absl::string_view text,
                                     absl::string_view part) {
  if (absl::StrContains(text, part)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << text << "' does not contain '" << part << "'";
}

// Every token of `text` up to and including kEof; fails the test on a lexer
// error.
std::vector<Token> LexAll(absl::string_view text) {
  Lexer lexer(text);
  std::vector<Token> tokens;
  while (true) {
    absl::StatusOr<Token> t = lexer.Next();
    EXPECT_TRUE(t.ok()) << t.status();
    if (!t.ok()) return tokens;
    tokens.push_back(*t);
    if (t->is(TokenKind::kEof)) return tokens;
  }
}

std::vector<TokenKind> Kinds(const std::vector<Token>& tokens) {
  std::vector<TokenKind> kinds;
  for (const Token& t : tokens) kinds.push_back(t.kind);
  return kinds;
}

std::vector<std::string> Texts(const std::vector<Token>& tokens) {
  std::vector<std::string> texts;
  for (const Token& t : tokens) texts.emplace_back(t.text);
  return texts;
}

struct LexError {
  int64_t offset = -1;
  std::string message;
};

// The first lexer error in `text` (offset -1 and empty message if none).
LexError FirstError(absl::string_view text) {
  Lexer lexer(text, /*file_id=*/0);
  while (true) {
    absl::StatusOr<Token> t = lexer.Next();
    if (!t.ok()) {
      EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
      std::optional<SourceLoc> loc = GetLoc(t.status());
      EXPECT_TRUE(loc.has_value());
      return {loc ? loc->offset : -1, std::string(t.status().message())};
    }
    if (t->is(TokenKind::kEof)) return {};
  }
}

TEST(LexerTest, Punctuation) {
  std::vector<Token> tokens = LexAll("( ) { } [ ] , : = ->");
  EXPECT_EQ(Kinds(tokens),
            (std::vector<TokenKind>{
                TokenKind::kLParen, TokenKind::kRParen, TokenKind::kLBrace,
                TokenKind::kRBrace, TokenKind::kLBracket, TokenKind::kRBracket,
                TokenKind::kComma, TokenKind::kColon, TokenKind::kEqual,
                TokenKind::kArrow, TokenKind::kEof}));
  std::vector<int64_t> offsets;
  for (const Token& t : tokens) offsets.push_back(t.offset);
  EXPECT_EQ(offsets,
            (std::vector<int64_t>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20}));
  EXPECT_EQ(tokens[9].text, "->");
}

TEST(LexerTest, PunctuationNeedsNoSpaces) {
  std::vector<Token> tokens = LexAll("f32[4,8]->(%x){a=1}:");
  EXPECT_EQ(Texts(tokens), (std::vector<std::string>{
                               "f32", "[", "4", ",", "8", "]", "->", "(", "%x",
                               ")", "{", "a", "=", "1", "}", ":", ""}));
}

TEST(LexerTest, KeywordsAndDTypesAreIdentifiers) {
  std::vector<Token> tokens =
      LexAll("graph return const true false f32 bf16 bool foo_Bar9 _x");
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    EXPECT_EQ(tokens[i].kind, TokenKind::kIdent) << tokens[i].text;
  }
  EXPECT_TRUE(tokens[0].IsIdent("graph"));
  EXPECT_FALSE(tokens[0].IsIdent("return"));
  EXPECT_EQ(tokens[8].text, "foo_Bar9");
  EXPECT_EQ(tokens[9].text, "_x");
}

TEST(LexerTest, ValuesAndSymbols) {
  std::vector<Token> tokens = LexAll("%x %0 %_a1 %007 %-1 @main @_m2");
  EXPECT_EQ(Kinds(tokens),
            (std::vector<TokenKind>{TokenKind::kValue, TokenKind::kValue,
                                    TokenKind::kValue, TokenKind::kValue,
                                    TokenKind::kValue, TokenKind::kSymbol,
                                    TokenKind::kSymbol, TokenKind::kEof}));
  EXPECT_EQ(tokens[0].name(), "x");
  EXPECT_EQ(tokens[1].name(), "0");
  EXPECT_EQ(tokens[3].name(), "007");  // names, not numbers: no normalizing
  EXPECT_EQ(tokens[4].name(), "-1");
  EXPECT_EQ(tokens[5].name(), "main");
  EXPECT_EQ(tokens[6].offset, 26);
}

TEST(LexerTest, Integers) {
  std::vector<Token> tokens =
      LexAll("0 -7 42 9223372036854775807 -9223372036854775808");
  ASSERT_EQ(tokens.size(), 6u);
  std::vector<int64_t> values;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(tokens[i].kind, TokenKind::kInt);
    values.push_back(tokens[i].int_value);
  }
  EXPECT_EQ(values, (std::vector<int64_t>{0, -7, 42, INT64_MAX, INT64_MIN}));
}

TEST(LexerTest, Floats) {
  std::vector<Token> tokens = LexAll(
      "1.0 -2.5e-3 1e5 1E+2 3. 0.125 -0.0 1.7976931348623157e308 5e-324 "
      "1.e2");
  ASSERT_EQ(tokens.size(), 11u);
  std::vector<double> values;
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(tokens[i].kind, TokenKind::kFloat) << tokens[i].text;
    values.push_back(tokens[i].float_value);
  }
  EXPECT_EQ(values,
            (std::vector<double>{1.0, -2.5e-3, 1e5, 100.0, 3.0, 0.125, 0.0,
                                 1.7976931348623157e308, 5e-324, 100.0}));
  EXPECT_TRUE(std::signbit(tokens[6].float_value));
}

TEST(LexerTest, NonFiniteFloats) {
  std::vector<Token> tokens = LexAll("inf -inf nan infx nanny inf_");
  ASSERT_EQ(tokens.size(), 7u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(tokens[i].kind, TokenKind::kFloat) << tokens[i].text;
  }
  EXPECT_EQ(tokens[0].float_value, std::numeric_limits<double>::infinity());
  EXPECT_EQ(tokens[1].float_value, -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(tokens[2].float_value));
  EXPECT_EQ(tokens[1].text, "-inf");
  // Longer words are identifiers; '-' before one (or before nan) is an
  // error.
  for (int i = 3; i < 6; ++i) EXPECT_EQ(tokens[i].kind, TokenKind::kIdent);
  for (const char* text : {"-infx", "-nan", "- inf"}) {
    LexError e = FirstError(text);
    EXPECT_EQ(e.offset, 0) << text;
    EXPECT_EQ(e.message, "expected a digit, 'inf' or '>' after '-'") << text;
  }
}

TEST(LexerTest, Strings) {
  std::vector<Token> tokens = LexAll(R"("tanh" "a\"b\\c\nd\te" "" "tab	raw")");
  ASSERT_EQ(tokens.size(), 5u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(tokens[i].kind, TokenKind::kString);
  EXPECT_EQ(tokens[0].text, "\"tanh\"");
  EXPECT_EQ(DecodeStringLiteral(tokens[0].text), "tanh");
  EXPECT_EQ(DecodeStringLiteral(tokens[1].text), "a\"b\\c\nd\te");
  EXPECT_EQ(DecodeStringLiteral(tokens[2].text), "");
  EXPECT_EQ(DecodeStringLiteral(tokens[3].text), "tab\traw");
  // UTF-8 inside strings is kept byte for byte.
  std::vector<Token> utf8 = LexAll("\"h\xC3\xA9llo \xF0\x9F\x98\x80\"");
  EXPECT_EQ(DecodeStringLiteral(utf8[0].text), "h\xC3\xA9llo \xF0\x9F\x98\x80");
}

TEST(LexerTest, CommentsAndWhitespace) {
  std::vector<Token> tokens =
      LexAll("// lead \xC3\xA9 comment\r\n  x // trailing\n\ty\t// at eof");
  EXPECT_EQ(Texts(tokens), (std::vector<std::string>{"x", "y", ""}));
  EXPECT_EQ(tokens[0].offset, 22);
  EXPECT_EQ(tokens[1].offset, 37);
  // A comment may hold '//' and quotes; only the newline ends it.
  EXPECT_EQ(Texts(LexAll("a // \"unterminated // ( \n b")),
            (std::vector<std::string>{"a", "b", ""}));
}

TEST(LexerTest, EofIsStickyAndAtTheEnd) {
  Lexer lexer("x  ");
  ASSERT_TRUE(lexer.Next().ok());
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Token> t = lexer.Next();
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->kind, TokenKind::kEof);
    EXPECT_EQ(t->offset, 3);
  }
  absl::StatusOr<Token> empty = Lexer("").Next();
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->kind, TokenKind::kEof);
  EXPECT_EQ(empty->offset, 0);
}

TEST(LexerTest, ErrorsCarryFileIdAndOffset) {
  Lexer lexer("ab $", /*file_id=*/7);
  ASSERT_TRUE(lexer.Next().ok());
  absl::StatusOr<Token> t = lexer.Next();
  ASSERT_FALSE(t.ok());
  std::optional<SourceLoc> loc = GetLoc(t.status());
  ASSERT_TRUE(loc.has_value());
  EXPECT_EQ(loc->file_id, 7);
  EXPECT_EQ(loc->offset, 3);
  EXPECT_EQ(t.status().message(), "unexpected character '$'");
}

TEST(LexerTest, NumberErrors) {
  LexError e = FirstError("x 1e999");
  EXPECT_EQ(e.offset, 2);
  EXPECT_EQ(e.message,
            "floating-point literal '1e999' is out of range for a 64-bit "
            "float");
  EXPECT_EQ(FirstError("-1e999").offset, 0);
  e = FirstError("1e-999");  // underflow to zero is rejected too
  EXPECT_EQ(e.offset, 0);
  EXPECT_TRUE(HasSubstr(e.message, "out of range"));
  e = FirstError("[ 9223372036854775808");
  EXPECT_EQ(e.offset, 2);
  EXPECT_EQ(e.message,
            "integer literal '9223372036854775808' does not fit in 64 bits");
  EXPECT_EQ(FirstError("-9223372036854775809").offset, 0);
  e = FirstError("1.0f");
  EXPECT_EQ(e.offset, 3);
  EXPECT_EQ(e.message, "unexpected character 'f' after number '1.0'");
  EXPECT_EQ(FirstError("12ab").offset, 2);
  EXPECT_EQ(FirstError("1.2.3").offset, 3);
  e = FirstError("1e");
  EXPECT_EQ(e.offset, 1);
  EXPECT_EQ(e.message, "expected digits in the exponent of '1e'");
  EXPECT_EQ(FirstError("2.5e+x").offset, 3);
  e = FirstError("a - 1");
  EXPECT_EQ(e.offset, 2);
  EXPECT_EQ(e.message, "expected a digit, 'inf' or '>' after '-'");
  EXPECT_EQ(FirstError("-").offset, 0);
  EXPECT_EQ(FirstError(".5").offset, 0);
}

TEST(LexerTest, HugeLiteralsAreQuotedShort) {
  std::string digits(100000, '7');
  LexError e = FirstError(digits);
  EXPECT_EQ(e.offset, 0);
  EXPECT_EQ(e.message, absl::StrCat("integer literal '", std::string(40, '7'),
                                    "...' does not fit in 64 bits"));
}

TEST(LexerTest, NameErrors) {
  LexError e = FirstError("a % x");
  EXPECT_EQ(e.offset, 2);
  EXPECT_EQ(e.message, "expected an identifier or an integer after '%'");
  EXPECT_EQ(FirstError("%").offset, 0);
  EXPECT_EQ(FirstError("%-").offset, 0);
  e = FirstError("%12ab");
  EXPECT_EQ(e.offset, 0);
  EXPECT_TRUE(HasSubstr(e.message, "a value name is '%' followed by"));
  e = FirstError("graph @ main");
  EXPECT_EQ(e.offset, 6);
  EXPECT_EQ(e.message, "expected an identifier after '@'");
  EXPECT_EQ(FirstError("@1").offset, 0);
}

TEST(LexerTest, StringErrors) {
  LexError e = FirstError("x \"abc");
  EXPECT_EQ(e.offset, 2);
  EXPECT_EQ(e.message, "unterminated string literal");
  EXPECT_EQ(FirstError("x \"ab\ncd\"").offset, 2);  // no raw newlines
  EXPECT_EQ(FirstError("\"ab\\").offset, 0);
  EXPECT_EQ(FirstError("\"ab\\\n\"").offset, 0);
  e = FirstError(R"("a\qb")");
  EXPECT_EQ(e.offset, 2);
  EXPECT_EQ(
      e.message,
      R"(invalid escape sequence '\q' in string literal (allowed: \" \\ \n \t))");
  e = FirstError("\"a\\\x01\"");
  EXPECT_EQ(e.offset, 2);
  EXPECT_TRUE(HasSubstr(e.message, "'\\' followed by U+0001"));
  e = FirstError("\"a\x01\"");
  EXPECT_EQ(e.offset, 2);
  EXPECT_EQ(e.message,
            "unexpected character U+0001 in string literal (write \\n or \\t)");
  EXPECT_EQ(FirstError("\"a\rb\"").offset, 2);
  // An escaped non-ASCII character names the character.
  e = FirstError("\"\\\xC3\xA9\"");
  EXPECT_EQ(e.offset, 1);
  EXPECT_TRUE(HasSubstr(e.message, "'\\\xC3\xA9'"));
}

TEST(LexerTest, UnexpectedCharacters) {
  LexError e = FirstError("x / y");
  EXPECT_EQ(e.offset, 2);
  EXPECT_EQ(e.message, "unexpected character '/' (comments start with '//')");
  e = FirstError("a $");
  EXPECT_EQ(e.offset, 2);
  EXPECT_EQ(e.message, "unexpected character '$'");
  e = FirstError(absl::string_view("ab\0", 3));
  EXPECT_EQ(e.offset, 2);
  EXPECT_EQ(e.message, "unexpected character U+0000");
  e = FirstError("x \x7F");
  EXPECT_EQ(e.message, "unexpected character U+007F");
  e = FirstError("x \xC3\xA9");
  EXPECT_EQ(e.offset, 2);
  EXPECT_EQ(e.message, "unexpected character '\xC3\xA9' (U+00E9)");
  e = FirstError("\f");
  EXPECT_EQ(e.message, "unexpected character U+000C");
}

TEST(LexerTest, InvalidUtf8IsReportedAtItsFirstByte) {
  struct Case {
    std::string text;
    int64_t offset;
    std::string byte;
  };
  const std::vector<Case> cases = {
      {"ab\xFF", 2, "0xFF"},               // never valid
      {"x \x80", 2, "0x80"},               // stray continuation
      {"// ok \xC3\x28\n", 6, "0xC3"},     // in a comment
      {"// \xE2\x82", 3, "0xE2"},          // cut short at EOF
      {"\"\xE2\x82\" x", 1, "0xE2"},       // cut short in a string
      {"\"ok\xC0\xAF\"", 3, "0xC0"},       // overlong '/'
      {"// \xE0\x80\xAF", 3, "0xE0"},      // overlong 3-byte
      {"// \xED\xA0\x80", 3, "0xED"},      // UTF-16 surrogate
      {"// \xF4\x90\x80\x80", 3, "0xF4"},  // above U+10FFFF
      {"// \xF0\x80\x80\xAF", 3, "0xF0"},  // overlong 4-byte
      {"// \xF5\x80\x80\x80", 3, "0xF5"},
      {"\"\\\xFF\"", 2, "0xFF"},    // escaped invalid byte
      {"\xC3\xA9\xFF", 0, "0xC3"},  // valid é outside string
  };
  for (const Case& c : cases) {
    LexError e = FirstError(c.text);
    if (c.offset == 0) {
      // Valid UTF-8 outside a comment or string is "unexpected", first.
      EXPECT_TRUE(HasSubstr(e.message, "unexpected character"));
      continue;
    }
    EXPECT_EQ(e.offset, c.offset) << absl::CEscape(c.text);
    EXPECT_EQ(e.message, "invalid UTF-8 byte " + c.byte)
        << absl::CEscape(c.text);
  }
}

TEST(Utf8Test, SequenceLengths) {
  EXPECT_EQ(Utf8SequenceLength("a", 0), 1);
  EXPECT_EQ(Utf8SequenceLength("\xC3\xA9", 0), 2);
  EXPECT_EQ(Utf8SequenceLength("\xE2\x82\xAC", 0), 3);
  EXPECT_EQ(Utf8SequenceLength("\xF0\x9F\x98\x80", 0), 4);
  EXPECT_EQ(Utf8SequenceLength("\xF4\x8F\xBF\xBF", 0), 4);  // U+10FFFF
  EXPECT_EQ(Utf8SequenceLength("\xED\x9F\xBF", 0), 3);      // U+D7FF
  EXPECT_EQ(Utf8SequenceLength("\xEE\x80\x80", 0), 3);      // U+E000
  EXPECT_EQ(Utf8SequenceLength("\xC2\x80", 0), 2);
  EXPECT_EQ(Utf8SequenceLength("\xC1\xBF", 0), 0);
  EXPECT_EQ(Utf8SequenceLength("\xC3", 0), 0);
  EXPECT_EQ(Utf8SequenceLength("\xC3\xC3", 0), 0);
  EXPECT_EQ(FindInvalidUtf8("ok \xC3\xA9 fine"), -1);
  EXPECT_EQ(FindInvalidUtf8("ok \xC3\xA9 \xA9"), 6);
}

TEST(LexerTest, KindDescriptions) {
  EXPECT_EQ(TokenKindDescription(TokenKind::kRParen), "')'");
  EXPECT_EQ(TokenKindDescription(TokenKind::kEof), "end of file");
  EXPECT_EQ(TokenKindName(TokenKind::kArrow), "kArrow");
  Token eof;
  EXPECT_EQ(DescribeToken(eof), "end of file");
  Token ident;
  ident.kind = TokenKind::kIdent;
  ident.text = "relu";
  EXPECT_EQ(DescribeToken(ident), "'relu'");
  // Cut at a character boundary, counting characters, not bytes.
  std::string long_text;
  for (int i = 0; i < 50; ++i) long_text += "\xC3\xA9";
  std::string quoted = QuoteForDiagnostic(long_text);
  EXPECT_EQ(quoted, "'" + long_text.substr(0, 80) + "...'");
}

}  // namespace
}  // namespace hgc
