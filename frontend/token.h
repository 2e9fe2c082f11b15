// Tokens of the `.graph` text format (design.md, "The `.graph` text format").
//
// A token is a kind, a view of its exact source bytes and the byte offset of
// its first byte. No line/column bookkeeping happens while lexing: the
// SourceManager turns offsets into lines and columns only when an error is
// reported.
#ifndef HGC_FRONTEND_TOKEN_H_
#define HGC_FRONTEND_TOKEN_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace hgc {

enum class TokenKind : uint8_t {
#define TOKEN(kind, description) kind,
#include "frontend/token_kinds.def"
};

// How diagnostics name a kind: "'('", "identifier", "end of file", ...
absl::string_view TokenKindDescription(TokenKind kind);

// The enumerator's name ("kLParen"), for test failure messages.
absl::string_view TokenKindName(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::kEof;
  // The token's exact bytes in the source, sigils and quotes included
  // ("%x", "@main", "\"tanh\""). Empty for kEof. Points into the lexed text,
  // so it lives as long as that text does.
  absl::string_view text;
  // Byte offset of the first byte in the source (the text size for kEof).
  int64_t offset = 0;
  // The literal's value, range-checked by the lexer: kInt only.
  int64_t int_value = 0;
  // The literal's value, finite: kFloat only.
  double float_value = 0;

  bool is(TokenKind k) const { return kind == k; }
  // Whether this is the identifier `word` (keywords and dtypes are
  // identifiers recognized by context).
  bool IsIdent(absl::string_view word) const {
    return kind == TokenKind::kIdent && text == word;
  }
  // kValue / kSymbol: the name without its '%' / '@' ("x" for "%x").
  absl::string_view name() const { return text.substr(1); }
};

// The value of a kString token's text (quotes included), with escapes
// resolved. Requires text the lexer accepted as a string literal.
std::string DecodeStringLiteral(absl::string_view text);

// `text` in single quotes for a diagnostic, cut to its first 40 characters
// plus "..." when longer (a 3 MB identifier makes no readable message).
// `text` must be valid UTF-8; the cut falls on a character boundary.
std::string QuoteForDiagnostic(absl::string_view text);

// What a diagnostic says it found: "end of file" or the quoted token text.
std::string DescribeToken(const Token& token);

}  // namespace hgc

#endif  // HGC_FRONTEND_TOKEN_H_
