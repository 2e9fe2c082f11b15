#include "frontend/lexer.h"

#include <limits>
#include <optional>
#include <system_error>

#include "absl/strings/charconv.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "support/diagnostics.h"
#include "support/source_location.h"

namespace hgc {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }
bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The code point of the well-formed sequence of `len` bytes at `p`.
uint32_t DecodeUtf8(const unsigned char* p, int len) {
  switch (len) {
    case 1:
      return p[0];
    case 2:
      return ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu);
    case 3:
      return ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
    default:
      return ((p[0] & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) |
             ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
  }
}

// How a diagnostic shows the well-formed character of `len` bytes at
// `offset`: 'x' for printable ASCII, U+0001 for control characters, and
// 'é' (U+00E9) otherwise. Never copies a byte that is not printable.
std::string DescribeChar(absl::string_view text, int64_t offset, int len) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data() + offset);
  uint32_t cp = DecodeUtf8(p, len);
  if (cp >= 0x21 && cp < 0x7F)
    return absl::StrCat("'", text.substr(offset, 1), "'");
  if (cp < 0x80) return absl::StrFormat("U+%04X", cp);
  return absl::StrFormat("'%s' (U+%04X)", text.substr(offset, len), cp);
}

// An invalid escape for a diagnostic: '\q', or '\' followed by U+0001
// when the escaped character is not printable.
std::string DescribeEscape(absl::string_view text, int64_t offset, int len) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data() + offset);
  uint32_t cp = DecodeUtf8(p, len);
  if (cp < 0x21 || cp == 0x7F) {
    return absl::StrFormat("'\\' followed by U+%04X", cp);
  }
  return absl::StrCat("'\\", text.substr(offset, len), "'");
}

}  // namespace

int Utf8SequenceLength(absl::string_view text, size_t pos) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  size_t n = text.size();
  unsigned char b0 = p[pos];
  if (b0 < 0x80) return 1;
  int len;
  // The allowed range of the second byte excludes overlong forms (E0, F0),
  // UTF-16 surrogates (ED) and code points above U+10FFFF (F4).
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 < 0xC2) {
    return 0;  // continuation byte, or overlong 2-byte form
  } else if (b0 < 0xE0) {
    len = 2;
  } else if (b0 < 0xF0) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 < 0xF5) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (n - pos < static_cast<size_t>(len)) return 0;
  if (p[pos + 1] < lo || p[pos + 1] > hi) return 0;
  for (int i = 2; i < len; ++i) {
    if (!IsContinuation(p[pos + i])) return 0;
  }
  return len;
}

int64_t FindInvalidUtf8(absl::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    int len = Utf8SequenceLength(text, pos);
    if (len == 0) return static_cast<int64_t>(pos);
    pos += len;
  }
  return -1;
}

Token Lexer::Make(TokenKind kind, int64_t start) const {
  Token token;
  token.kind = kind;
  token.text = text_.substr(start, pos_ - start);
  token.offset = start;
  return token;
}

absl::Status Lexer::Error(int64_t offset, absl::string_view message) const {
  return ErrorAt(SourceLoc{file_id_, offset}, message);
}

absl::Status Lexer::Utf8Error(int64_t offset) const {
  return Error(offset,
               absl::StrFormat("invalid UTF-8 byte 0x%02X",
                               static_cast<unsigned char>(text_[offset])));
}

absl::Status Lexer::BadCharError(int64_t offset,
                                 absl::string_view context) const {
  int len = Utf8SequenceLength(text_, offset);
  if (len == 0) return Utf8Error(offset);
  return Error(offset, absl::StrCat("unexpected character ",
                                    DescribeChar(text_, offset, len), context));
}

absl::Status Lexer::SkipWhitespaceAndComments() {
  const int64_t n = static_cast<int64_t>(text_.size());
  while (pos_ < n) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < n && text_[pos_ + 1] == '/') {
      pos_ += 2;
      while (pos_ < n && text_[pos_] != '\n') {
        if (static_cast<unsigned char>(text_[pos_]) < 0x80) {
          ++pos_;
          continue;
        }
        int len = Utf8SequenceLength(text_, pos_);
        if (len == 0) return Utf8Error(pos_);
        pos_ += len;
      }
    } else if (c == '/') {
      return Error(pos_, "unexpected character '/' (comments start with '//')");
    } else {
      break;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Token> Lexer::Next() {
  absl::Status skipped = SkipWhitespaceAndComments();
  if (!skipped.ok()) return skipped;
  const int64_t start = pos_;
  if (pos_ == static_cast<int64_t>(text_.size()))
    return Make(TokenKind::kEof, start);
  const char c = text_[pos_];
  auto single = [&](TokenKind kind) {
    ++pos_;
    return Make(kind, start);
  };
  switch (c) {
    case '(':
      return single(TokenKind::kLParen);
    case ')':
      return single(TokenKind::kRParen);
    case '{':
      return single(TokenKind::kLBrace);
    case '}':
      return single(TokenKind::kRBrace);
    case '[':
      return single(TokenKind::kLBracket);
    case ']':
      return single(TokenKind::kRBracket);
    case ',':
      return single(TokenKind::kComma);
    case ':':
      return single(TokenKind::kColon);
    case '=':
      return single(TokenKind::kEqual);
    case '%':
      return LexValue(start);
    case '@':
      return LexSymbol(start);
    case '"':
      return LexString(start);
    case '-':
      if (pos_ + 1 < static_cast<int64_t>(text_.size())) {
        char next = text_[pos_ + 1];
        if (next == '>') {
          pos_ += 2;
          return Make(TokenKind::kArrow, start);
        }
        if (IsDigit(next)) return LexNumber(start);
        if (std::optional<Token> inf = LexNonFinite(start)) return *inf;
      }
      return Error(start, "expected a digit, 'inf' or '>' after '-'");
    default:
      break;
  }
  if (IsDigit(c)) return LexNumber(start);
  if (std::optional<Token> non_finite = LexNonFinite(start)) {
    return *non_finite;
  }
  if (IsIdentStart(c)) {
    while (pos_ < static_cast<int64_t>(text_.size()) &&
           IsIdentChar(text_[pos_])) {
      ++pos_;
    }
    return Make(TokenKind::kIdent, start);
  }
  return BadCharError(start, "");
}

// `inf`, `-inf` and `nan` as whole words: the printer's spelling of the
// non-finite floats (ir/attribute.cc's FormatFloat), so that a graph with a
// -inf mask constant prints and parses back.
std::optional<Token> Lexer::LexNonFinite(int64_t start) {
  const int64_t n = static_cast<int64_t>(text_.size());
  const bool negative = text_[start] == '-';
  const int64_t word = start + (negative ? 1 : 0);
  // Most identifiers start otherwise: no second scan of their letters.
  if (word >= n || (text_[word] != 'i' && text_[word] != 'n')) {
    return std::nullopt;
  }
  int64_t end = word;
  while (end < n && IsIdentChar(text_[end])) ++end;
  const absl::string_view text = text_.substr(word, end - word);
  double value = 0;
  if (text == "inf") {
    value = negative ? -std::numeric_limits<double>::infinity()
                     : std::numeric_limits<double>::infinity();
  } else if (text == "nan" && !negative) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else {
    return std::nullopt;
  }
  pos_ = end;
  Token token = Make(TokenKind::kFloat, start);
  token.float_value = value;
  return token;
}

absl::StatusOr<Token> Lexer::LexNumber(int64_t start) {
  const int64_t n = static_cast<int64_t>(text_.size());
  auto skip_digits = [&] {
    while (pos_ < n && IsDigit(text_[pos_])) ++pos_;
  };
  if (text_[pos_] == '-') ++pos_;
  skip_digits();
  bool is_float = false;
  if (pos_ < n && text_[pos_] == '.') {
    is_float = true;
    ++pos_;
    skip_digits();
  }
  if (pos_ < n && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    int64_t p = pos_ + 1;
    if (p < n && (text_[p] == '+' || text_[p] == '-')) ++p;
    if (p < n && IsDigit(text_[p])) {
      is_float = true;
      pos_ = p;
      skip_digits();
    } else {
      return Error(pos_, absl::StrCat("expected digits in the exponent of ",
                                      QuoteForDiagnostic(text_.substr(
                                          start, pos_ + 1 - start))));
    }
  }
  if (pos_ < n && (IsIdentChar(text_[pos_]) || text_[pos_] == '.')) {
    return Error(
        pos_,
        absl::StrCat("unexpected character '", text_.substr(pos_, 1),
                     "' after number ",
                     QuoteForDiagnostic(text_.substr(start, pos_ - start))));
  }
  Token token = Make(is_float ? TokenKind::kFloat : TokenKind::kInt, start);
  if (!is_float) {
    if (!absl::SimpleAtoi(token.text, &token.int_value)) {
      return Error(start, absl::StrCat("integer literal ",
                                       QuoteForDiagnostic(token.text),
                                       " does not fit in 64 bits"));
    }
    return token;
  }
  const char* end = token.text.data() + token.text.size();
  absl::from_chars_result r =
      absl::from_chars(token.text.data(), end, token.float_value);
  if (r.ec == std::errc::result_out_of_range) {
    return Error(start, absl::StrCat("floating-point literal ",
                                     QuoteForDiagnostic(token.text),
                                     " is out of range for a 64-bit float"));
  }
  if (r.ec != std::errc() || r.ptr != end) {
    return Error(start, absl::StrCat("malformed floating-point literal ",
                                     QuoteForDiagnostic(token.text)));
  }
  return token;
}

absl::StatusOr<Token> Lexer::LexValue(int64_t start) {
  const int64_t n = static_cast<int64_t>(text_.size());
  ++pos_;  // '%'
  if (pos_ < n && IsIdentStart(text_[pos_])) {
    while (pos_ < n && IsIdentChar(text_[pos_])) ++pos_;
    return Make(TokenKind::kValue, start);
  }
  // The INT form: digits, with the grammar's optional '-'. It is a name, so
  // it needs no range check ("%007" and "%7" are different values).
  int64_t p = pos_;
  if (p < n && text_[p] == '-') ++p;
  if (p < n && IsDigit(text_[p])) {
    pos_ = p;
    while (pos_ < n && IsDigit(text_[pos_])) ++pos_;
    if (pos_ < n && IsIdentChar(text_[pos_])) {
      return Error(start,
                   "a value name is '%' followed by an identifier or "
                   "an integer (e.g. '%x', '%0')");
    }
    return Make(TokenKind::kValue, start);
  }
  return Error(start, "expected an identifier or an integer after '%'");
}

absl::StatusOr<Token> Lexer::LexSymbol(int64_t start) {
  const int64_t n = static_cast<int64_t>(text_.size());
  ++pos_;  // '@'
  if (pos_ < n && IsIdentStart(text_[pos_])) {
    while (pos_ < n && IsIdentChar(text_[pos_])) ++pos_;
    return Make(TokenKind::kSymbol, start);
  }
  return Error(start, "expected an identifier after '@'");
}

absl::StatusOr<Token> Lexer::LexString(int64_t start) {
  const int64_t n = static_cast<int64_t>(text_.size());
  ++pos_;  // opening quote
  while (true) {
    if (pos_ == n || text_[pos_] == '\n') {
      return Error(start, "unterminated string literal");
    }
    const unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      ++pos_;
      return Make(TokenKind::kString, start);
    }
    if (c == '\\') {
      if (pos_ + 1 == n || text_[pos_ + 1] == '\n') {
        return Error(start, "unterminated string literal");
      }
      const char e = text_[pos_ + 1];
      if (e == '"' || e == '\\' || e == 'n' || e == 't') {
        pos_ += 2;
        continue;
      }
      int len = Utf8SequenceLength(text_, pos_ + 1);
      if (len == 0) return Utf8Error(pos_ + 1);
      return Error(pos_, absl::StrCat("invalid escape sequence ",
                                      DescribeEscape(text_, pos_ + 1, len),
                                      " in string literal (allowed: \\\" "
                                      "\\\\ \\n \\t)"));
    }
    if (c < 0x20 && c != '\t') {
      return BadCharError(pos_, " in string literal (write \\n or \\t)");
    }
    if (c < 0x80) {
      ++pos_;
      continue;
    }
    int len = Utf8SequenceLength(text_, pos_);
    if (len == 0) return Utf8Error(pos_);
    pos_ += len;
  }
}

}  // namespace hgc
