// The Parser's type and attribute grammar (frontend/parser_internal.h):
// element type and dimensions of a tensor type, and attribute lists with
// their scalar, `@name` and nested list values.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "frontend/parser.h"
#include "frontend/parser_internal.h"
#include "frontend/token.h"
#include "ir/attribute.h"
#include "ir/dtype.h"
#include "ir/tensor_type.h"
#include "support/status_macros.h"

namespace hgc {
namespace parser_internal {

absl::StatusOr<TensorType> Parser::ParseType() {
  if (!tok_.is(TokenKind::kIdent)) return Expected("type (e.g. 'f32[4, 8]')");
  const Token dtype_tok = tok_;
  std::optional<DType> dtype = ParseDType(dtype_tok.text);
  if (!dtype.has_value()) {
    // `f64[4]` is a misspelled type; `return` after a dangling ':' is not.
    absl::StatusOr<Token> next = PeekNext();
    if (!next.ok() || !next->is(TokenKind::kLBracket)) {
      return Expected("type (e.g. 'f32[4, 8]')");
    }
    return Error(dtype_tok,
                 absl::StrCat("unknown element type ",
                              QuoteForDiagnostic(dtype_tok.text),
                              " (expected f32, bf16, f16, s32, s8, u8 or "
                              "bool)"));
  }
  HGC_RETURN_IF_ERROR(Advance());
  HGC_RETURN_IF_ERROR(Expect(
      TokenKind::kLBracket,
      absl::StrCat("after element type ", QuoteForDiagnostic(dtype_tok.text))));
  Shape shape;
  if (!tok_.is(TokenKind::kRBracket)) {
    while (true) {
      if (!tok_.is(TokenKind::kInt)) return Expected("dimension (an integer)");
      if (tok_.int_value < 0) {
        return Error(tok_, absl::StrCat("negative dimension ", tok_.int_value));
      }
      if (static_cast<int64_t>(shape.size()) == kMaxRank) {
        return Error(tok_, absl::StrCat("too many dimensions (a type has at "
                                        "most ",
                                        kMaxRank, ")"));
      }
      shape.push_back(tok_.int_value);
      HGC_RETURN_IF_ERROR(Advance());
      if (tok_.is(TokenKind::kRBracket)) break;
      if (!tok_.is(TokenKind::kComma)) {
        return Expected("',' or ']' after dimension");
      }
      HGC_RETURN_IF_ERROR(Advance());
    }
  }
  HGC_RETURN_IF_ERROR(Advance());  // ']'
  absl::StatusOr<int64_t> count = CheckedNumElements(shape);
  if (!count.ok()) return Error(dtype_tok, count.status().message());
  return TensorType(*dtype, std::move(shape));
}

absl::StatusOr<AttrMap> Parser::ParseAttrs() {
  HGC_RETURN_IF_ERROR(Advance());  // '{'
  AttrMap attrs;
  while (true) {
    if (!tok_.is(TokenKind::kIdent)) return Expected("attribute name");
    const Token name_tok = tok_;
    if (attrs.find(name_tok.text) != attrs.end()) {
      return Error(name_tok, absl::StrCat("duplicate attribute ",
                                          QuoteForDiagnostic(name_tok.text)));
    }
    HGC_RETURN_IF_ERROR(Advance());
    HGC_RETURN_IF_ERROR(Expect(
        TokenKind::kEqual, absl::StrCat("after attribute name ",
                                        QuoteForDiagnostic(name_tok.text))));
    HGC_ASSIGN_OR_RETURN(Attribute value, ParseAttrValue(0));
    attrs.emplace(std::string(name_tok.text), std::move(value));
    if (tok_.is(TokenKind::kRBrace)) break;
    if (!tok_.is(TokenKind::kComma)) {
      return Expected("',' or '}' after attribute value");
    }
    HGC_RETURN_IF_ERROR(Advance());
  }
  HGC_RETURN_IF_ERROR(Advance());  // '}'
  return attrs;
}

std::optional<Attribute> Parser::ScalarAttr() {
  switch (tok_.kind) {
    case TokenKind::kInt:
      return Attribute::Int(tok_.int_value);
    case TokenKind::kFloat:
      return Attribute::Float(tok_.float_value);
    case TokenKind::kString:
      return Attribute::String(DecodeStringLiteral(tok_.text));
    case TokenKind::kSymbol:
      symbol_refs_.emplace_back(std::string(tok_.name()), Loc(tok_));
      return Attribute::Symbol(std::string(tok_.name()));
    case TokenKind::kIdent:
      if (tok_.text == "true" || tok_.text == "false") {
        return Attribute::Bool(tok_.text == "true");
      }
      if (std::optional<DType> dtype = ParseDType(tok_.text)) {
        return Attribute::Type(*dtype);
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

absl::StatusOr<Attribute> Parser::ParseAttrValue(int depth) {
  if (std::optional<Attribute> scalar = ScalarAttr()) {
    HGC_RETURN_IF_ERROR(Advance());
    return std::move(*scalar);
  }
  if (!tok_.is(TokenKind::kLBracket)) return Expected("attribute value");
  // Recursion is bounded here, so neither this parser nor the recursive
  // Attribute code after it (printing, comparing, destroying) can exhaust
  // the stack.
  if (depth + 1 > kMaxAttrNesting) {
    return Error(tok_, absl::StrCat("nesting too deep: attribute lists nest "
                                    "at most ",
                                    kMaxAttrNesting, " levels"));
  }
  HGC_RETURN_IF_ERROR(Advance());
  Attribute::List list;
  if (!tok_.is(TokenKind::kRBracket)) {
    while (true) {
      // Scalars directly: lists of a million numbers are the common case.
      if (std::optional<Attribute> scalar = ScalarAttr()) {
        list.push_back(std::move(*scalar));
        HGC_RETURN_IF_ERROR(Advance());
      } else {
        HGC_ASSIGN_OR_RETURN(Attribute element, ParseAttrValue(depth + 1));
        list.push_back(std::move(element));
      }
      if (tok_.is(TokenKind::kRBracket)) break;
      if (!tok_.is(TokenKind::kComma)) {
        return Expected("',' or ']' after list element");
      }
      HGC_RETURN_IF_ERROR(Advance());
    }
  }
  HGC_RETURN_IF_ERROR(Advance());  // ']'
  return Attribute::MakeList(std::move(list));
}

}  // namespace parser_internal
}  // namespace hgc
