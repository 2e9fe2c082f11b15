// The `.graph` lexer: a hand-written scanner over one file's bytes.
//
// Tokens (design.md, "Details"):
//   IDENT   [A-Za-z_][A-Za-z0-9_]*     keywords and dtypes are identifiers
//   VALUE   '%' (IDENT | INT)          one token: no space after '%'
//   SYMBOL  '@' IDENT                  one token: no space after '@'
//   INT     -?[0-9]+                   must fit in int64
//   FLOAT   -?[0-9]+ ('.' [0-9]*)? ([eE] [+-]? [0-9]+)?   with a '.' or an
//                                      exponent; must be a finite double that
//                                      does not underflow to zero
//           'inf' | '-inf' | 'nan'     whole words: the non-finite values,
//                                      as the printer writes them (so no
//                                      identifier is spelled so)
//   STRING  '"' ... '"'                escapes \" \\ \n \t; no raw newline or
//                                      other control character except tab
//   ( ) { } [ ] , : = ->
// Whitespace is space, tab, CR and LF; `//` starts a comment that runs to the
// end of the line. The input must be UTF-8 throughout, comments included;
// non-ASCII characters are allowed only in comments and strings. A number
// directly followed by a letter, digit, '_' or '.' ("1.0f", "12ab", "1.2.3")
// is an error rather than two tokens.
//
// Errors are InvalidArgument, located (support/diagnostics.h) at the byte
// that is wrong: the first byte of an invalid UTF-8 sequence, the backslash
// of a bad escape, the opening quote of an unterminated string, the first
// byte of an out-of-range number.
//
// Lexing is linear in the input and allocation-free.
#ifndef HGC_FRONTEND_LEXER_H_
#define HGC_FRONTEND_LEXER_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontend/token.h"

namespace hgc {

// The length (1 to 4) of the well-formed UTF-8 sequence starting at
// `text[pos]`, or 0 when the bytes there are not UTF-8 (stray continuation
// byte, overlong form, surrogate, code point above U+10FFFF, or a sequence
// cut short). Requires pos < text.size().
int Utf8SequenceLength(absl::string_view text, size_t pos);

// The offset of the first byte of the first invalid UTF-8 sequence in
// `text`, or -1 when all of `text` is UTF-8.
int64_t FindInvalidUtf8(absl::string_view text);

class Lexer {
 public:
  // Lexes `text`, which must outlive the lexer and every token it returns.
  // `file_id` is the SourceManager id errors are located in (-1: unlocated).
  explicit Lexer(absl::string_view text, int32_t file_id = -1)
      : text_(text), file_id_(file_id) {}

  // The next token. At the end of the input returns kEof (offset =
  // text.size()), and again on every later call. After an error the lexer's
  // state is unspecified; callers stop at the first error.
  absl::StatusOr<Token> Next();

  // Byte offset where the next call starts scanning.
  int64_t offset() const { return pos_; }

 private:
  absl::Status SkipWhitespaceAndComments();
  absl::StatusOr<Token> LexNumber(int64_t start);
  // A FLOAT `inf`, `-inf` or `nan` at `start`, or nothing (pos_ unmoved).
  std::optional<Token> LexNonFinite(int64_t start);
  absl::StatusOr<Token> LexValue(int64_t start);
  absl::StatusOr<Token> LexSymbol(int64_t start);
  absl::StatusOr<Token> LexString(int64_t start);

  Token Make(TokenKind kind, int64_t start) const;
  absl::Status Error(int64_t offset, absl::string_view message) const;
  // "unexpected character ..." or, if the bytes at `offset` are not UTF-8,
  // the UTF-8 error.
  absl::Status BadCharError(int64_t offset, absl::string_view context) const;
  absl::Status Utf8Error(int64_t offset) const;

  absl::string_view text_;
  int32_t file_id_;
  int64_t pos_ = 0;
};

}  // namespace hgc

#endif  // HGC_FRONTEND_LEXER_H_
