#include "frontend/token.h"

#include "absl/strings/str_cat.h"

namespace hgc {

absl::string_view TokenKindDescription(TokenKind kind) {
  switch (kind) {
#define TOKEN(kind, description) \
  case TokenKind::kind:          \
    return description;
#include "frontend/token_kinds.def"
  }
  return "token";
}

absl::string_view TokenKindName(TokenKind kind) {
  switch (kind) {
#define TOKEN(kind, description) \
  case TokenKind::kind:          \
    return #kind;
#include "frontend/token_kinds.def"
  }
  return "?";
}

std::string DecodeStringLiteral(absl::string_view text) {
  std::string out;
  if (text.size() < 2) return out;
  absl::string_view body = text.substr(1, text.size() - 2);
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    switch (body[++i]) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      default:
        out += body[i];
        break;  // '"' and '\\' stand for themselves
    }
  }
  return out;
}

std::string QuoteForDiagnostic(absl::string_view text) {
  constexpr int kMaxChars = 40;
  int chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars++ == kMaxChars) {
      return absl::StrCat("'", text.substr(0, i), "...'");
    }
  }
  return absl::StrCat("'", text, "'");
}

std::string DescribeToken(const Token& token) {
  if (token.kind == TokenKind::kEof) return "end of file";
  return QuoteForDiagnostic(token.text);
}

}  // namespace hgc
