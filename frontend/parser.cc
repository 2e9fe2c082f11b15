#include "frontend/parser.h"

#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "frontend/lexer.h"
#include "frontend/token.h"
#include "ir/attribute.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/op_registry.h"
#include "ir/tensor_type.h"
#include "ir/verifier.h"
#include "support/diagnostics.h"
#include "support/file_io.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

std::string Plural(size_t n, absl::string_view word) {
  return absl::StrCat(n, " ", word, n == 1 ? "" : "s");
}

class Parser {
 public:
  Parser(absl::string_view text, int32_t file_id)
      : lexer_(text, file_id), file_id_(file_id) {}

  absl::StatusOr<Module> Parse();

 private:
  // Token plumbing. `tok_` is the current (not yet consumed) token.
  absl::Status Advance();
  SourceLoc Loc(const Token& t) const { return SourceLoc{file_id_, t.offset}; }
  absl::Status Error(const Token& t, absl::string_view message) const {
    return ErrorAt(Loc(t), message);
  }
  // "expected WHAT, found <current token>" at the current token.
  absl::Status Expected(absl::string_view what) const {
    return Error(
        tok_, absl::StrCat("expected ", what, ", found ", DescribeToken(tok_)));
  }
  // Consumes a `kind` token, or fails with "expected <kind> <context>".
  absl::Status Expect(TokenKind kind, absl::string_view context);
  // The token after the current one, without consuming anything. Callers
  // use it only to choose a message, so a lexer error there is not reported
  // (the current token is the first error).
  absl::StatusOr<Token> PeekNext() const;

  absl::Status ParseGraph(Module& module);
  absl::Status ParseParams();
  absl::Status ParseResultTypes();
  absl::StatusOr<TensorType> ParseType();
  absl::Status ParseStatement();
  absl::Status ParseReturn();
  absl::StatusOr<AttrMap> ParseAttrs();
  absl::StatusOr<Attribute> ParseAttrValue(int depth);
  // The current token as a scalar attribute (not consumed), or nullopt.
  std::optional<Attribute> ScalarAttr();
  // The value named by the current kValue token, which is consumed.
  absl::StatusOr<Value*> ParseUse();
  absl::Status CheckNewValueName(const Token& t) const;
  // The current graph as diagnostics name it: '@name'.
  std::string GraphRef() const {
    return QuoteForDiagnostic(absl::StrCat("@", graph_->name()));
  }
  absl::Status CheckSymbolRefs() const;

  Lexer lexer_;
  int32_t file_id_;
  Token tok_;

  absl::flat_hash_set<std::string> graph_names_;
  // Every `@name` written in an attribute, checked once all graphs are read.
  std::vector<std::pair<std::string, SourceLoc>> symbol_refs_;

  // State of the graph being parsed.
  Graph* graph_ = nullptr;
  absl::flat_hash_map<std::string, Value*> values_;
  bool returned_ = false;
};

absl::Status Parser::Advance() {
  HGC_ASSIGN_OR_RETURN(tok_, lexer_.Next());
  return absl::OkStatus();
}

absl::Status Parser::Expect(TokenKind kind, absl::string_view context) {
  if (!tok_.is(kind)) {
    return Expected(absl::StrCat(TokenKindDescription(kind), " ", context));
  }
  return Advance();
}

absl::StatusOr<Token> Parser::PeekNext() const {
  Lexer copy = lexer_;
  return copy.Next();
}

absl::StatusOr<Module> Parser::Parse() {
  Module module;
  HGC_RETURN_IF_ERROR(Advance());
  if (!tok_.IsIdent("graph")) return Expected("'graph'");
  while (!tok_.is(TokenKind::kEof)) {
    if (!tok_.IsIdent("graph")) return Expected("'graph' or end of file");
    HGC_RETURN_IF_ERROR(ParseGraph(module));
  }
  HGC_RETURN_IF_ERROR(CheckSymbolRefs());
  HGC_RETURN_IF_ERROR(Verify(module));
  return module;
}

absl::Status Parser::ParseGraph(Module& module) {
  HGC_RETURN_IF_ERROR(Advance());  // 'graph'
  if (!tok_.is(TokenKind::kSymbol)) {
    return Expected("graph name (e.g. '@main') after 'graph'");
  }
  const Token name_tok = tok_;
  std::string name(name_tok.name());
  if (!graph_names_.insert(name).second) {
    return Error(name_tok, absl::StrCat("redefinition of graph ",
                                        QuoteForDiagnostic(name_tok.text)));
  }
  graph_ = module.AddGraph(name, Loc(name_tok));
  values_.clear();
  returned_ = false;
  HGC_RETURN_IF_ERROR(Advance());
  HGC_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "after the graph name"));
  HGC_RETURN_IF_ERROR(ParseParams());
  HGC_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "after the parameter list"));
  HGC_RETURN_IF_ERROR(ParseResultTypes());
  HGC_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "after the result types"));
  while (!tok_.is(TokenKind::kRBrace)) {
    if (returned_) {
      // Only reached when the token after the return values starts a
      // statement (see ParseReturn).
      return Error(tok_, absl::StrCat("statement after 'return' ('return' "
                                      "must be the last statement of ",
                                      QuoteForDiagnostic(name_tok.text), ")"));
    }
    if (tok_.IsIdent("return")) {
      HGC_RETURN_IF_ERROR(ParseReturn());
    } else if (tok_.is(TokenKind::kValue)) {
      HGC_RETURN_IF_ERROR(ParseStatement());
    } else if (tok_.is(TokenKind::kEof)) {
      return Expected(absl::StrCat("statement or '}' closing ",
                                   QuoteForDiagnostic(name_tok.text)));
    } else {
      return Expected("statement ('%name = op(...)' or 'return')");
    }
  }
  if (!returned_) {
    return Error(tok_, absl::StrCat("missing 'return' at the end of ",
                                    QuoteForDiagnostic(name_tok.text)));
  }
  return Advance();  // '}'
}

absl::Status Parser::CheckNewValueName(const Token& t) const {
  if (values_.contains(t.name())) {
    return Error(
        t, absl::StrCat("redefinition of value ", QuoteForDiagnostic(t.text)));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseParams() {
  if (tok_.is(TokenKind::kRParen)) return Advance();
  while (true) {
    if (!tok_.is(TokenKind::kValue)) {
      return Expected("parameter (e.g. '%x: f32[4]')");
    }
    const Token name_tok = tok_;
    HGC_RETURN_IF_ERROR(CheckNewValueName(name_tok));
    HGC_RETURN_IF_ERROR(Advance());
    HGC_RETURN_IF_ERROR(Expect(
        TokenKind::kColon,
        absl::StrCat("after parameter ", QuoteForDiagnostic(name_tok.text))));
    HGC_ASSIGN_OR_RETURN(TensorType type, ParseType());
    bool is_const = false;
    if (tok_.IsIdent("const")) {
      is_const = true;
      HGC_RETURN_IF_ERROR(Advance());
    }
    std::string name(name_tok.name());
    Value* param =
        graph_->AddParam(name, std::move(type), is_const, Loc(name_tok));
    values_.emplace(std::move(name), param);
    if (tok_.is(TokenKind::kRParen)) return Advance();
    if (!tok_.is(TokenKind::kComma)) {
      return Expected("',' or ')' after parameter");
    }
    HGC_RETURN_IF_ERROR(Advance());
  }
}

absl::Status Parser::ParseResultTypes() {
  std::vector<TensorType> types;
  if (!tok_.is(TokenKind::kLParen)) {
    HGC_ASSIGN_OR_RETURN(TensorType type, ParseType());
    types.push_back(std::move(type));
  } else {
    HGC_RETURN_IF_ERROR(Advance());
    while (true) {
      HGC_ASSIGN_OR_RETURN(TensorType type, ParseType());
      types.push_back(std::move(type));
      if (tok_.is(TokenKind::kRParen)) break;
      if (!tok_.is(TokenKind::kComma)) {
        return Expected("',' or ')' after result type");
      }
      HGC_RETURN_IF_ERROR(Advance());
    }
    HGC_RETURN_IF_ERROR(Advance());
  }
  graph_->SetDeclaredResultTypes(std::move(types));
  return absl::OkStatus();
}

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

absl::StatusOr<Value*> Parser::ParseUse() {
  auto it = values_.find(tok_.name());
  if (it == values_.end()) {
    return Error(tok_, absl::StrCat("use of undefined value ",
                                    QuoteForDiagnostic(tok_.text)));
  }
  HGC_RETURN_IF_ERROR(Advance());
  return it->second;
}

absl::Status Parser::ParseStatement() {
  // Result names.
  std::vector<Token> defs;
  // Names defined by this statement so far; only built for long lists, so
  // that the common one-result statement allocates no set.
  absl::flat_hash_set<absl::string_view> def_names;
  constexpr size_t kLinearScanDefs = 8;
  while (true) {
    HGC_RETURN_IF_ERROR(CheckNewValueName(tok_));
    bool duplicate = false;
    if (defs.size() < kLinearScanDefs) {
      for (const Token& d : defs) duplicate |= d.text == tok_.text;
    } else {
      if (def_names.empty()) {
        for (const Token& d : defs) def_names.insert(d.name());
      }
      duplicate = !def_names.insert(tok_.name()).second;
    }
    if (duplicate) {
      return Error(tok_, absl::StrCat("redefinition of value ",
                                      QuoteForDiagnostic(tok_.text)));
    }
    defs.push_back(tok_);
    HGC_RETURN_IF_ERROR(Advance());
    if (!tok_.is(TokenKind::kComma)) break;
    HGC_RETURN_IF_ERROR(Advance());
    if (!tok_.is(TokenKind::kValue)) return Expected("value name after ','");
  }
  HGC_RETURN_IF_ERROR(
      Expect(TokenKind::kEqual,
             absl::StrCat("after ", QuoteForDiagnostic(defs.back().text))));

  // Op name, checked at once so that a misspelled op is the first error.
  if (!tok_.is(TokenKind::kIdent)) return Expected("op name after '='");
  const Token op_tok = tok_;
  if (OpRegistry::Get().Find(op_tok.text) == nullptr) {
    std::string suggestion = SuggestOpName(op_tok.text);
    return Error(
        op_tok,
        absl::StrCat("unknown op ", QuoteForDiagnostic(op_tok.text),
                     suggestion.empty()
                         ? ""
                         : absl::StrCat("; did you mean '", suggestion, "'?")));
  }
  HGC_RETURN_IF_ERROR(Advance());
  HGC_RETURN_IF_ERROR(
      Expect(TokenKind::kLParen,
             absl::StrCat("after op name ", QuoteForDiagnostic(op_tok.text))));

  // Operands.
  std::vector<Value*> operands;
  if (tok_.is(TokenKind::kRParen)) {
    HGC_RETURN_IF_ERROR(Advance());
  } else {
    while (true) {
      if (!tok_.is(TokenKind::kValue)) {
        return Expected(operands.empty() ? "operand (e.g. '%x') or ')'"
                                         : "operand after ','");
      }
      HGC_ASSIGN_OR_RETURN(Value * v, ParseUse());
      operands.push_back(v);
      if (tok_.is(TokenKind::kRParen)) break;
      if (!tok_.is(TokenKind::kComma)) return Expected("')' after operands");
      HGC_RETURN_IF_ERROR(Advance());
    }
    HGC_RETURN_IF_ERROR(Advance());  // ')'
  }

  AttrMap attrs;
  if (tok_.is(TokenKind::kLBrace)) {
    HGC_ASSIGN_OR_RETURN(attrs, ParseAttrs());
  }
  std::vector<TensorType> declared;
  if (tok_.is(TokenKind::kColon)) {
    HGC_RETURN_IF_ERROR(Advance());
    while (true) {
      HGC_ASSIGN_OR_RETURN(TensorType type, ParseType());
      declared.push_back(std::move(type));
      if (!tok_.is(TokenKind::kComma)) break;
      HGC_RETURN_IF_ERROR(Advance());
    }
  }

  // Inference, attribute validation and the declared-type check happen in
  // the Builder; its errors are located at the op name.
  HGC_ASSIGN_OR_RETURN(
      Op * op, Builder(graph_).CreateOp(op_tok.text, std::move(operands),
                                        std::move(attrs), std::move(declared),
                                        Loc(op_tok)));
  if (op->num_results() != static_cast<int>(defs.size())) {
    return Error(op_tok,
                 absl::StrCat("op ", QuoteForDiagnostic(op_tok.text), " has ",
                              Plural(op->num_results(), "result"), " but ",
                              Plural(defs.size(), "value"), " are defined"));
  }
  for (int i = 0; i < op->num_results(); ++i) {
    std::string name(defs[i].name());
    op->result(i)->set_name(name);
    values_.emplace(std::move(name), op->result(i));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseReturn() {
  const Token return_tok = tok_;
  HGC_RETURN_IF_ERROR(Advance());
  std::vector<Value*> results;
  std::vector<Token> result_toks;
  while (true) {
    if (!tok_.is(TokenKind::kValue)) {
      return Expected(results.empty() ? "value after 'return'"
                                      : "value after ','");
    }
    result_toks.push_back(tok_);
    HGC_ASSIGN_OR_RETURN(Value * v, ParseUse());
    results.push_back(v);
    if (!tok_.is(TokenKind::kComma)) break;
    HGC_RETURN_IF_ERROR(Advance());
  }
  const std::vector<TensorType>& declared = graph_->declared_result_types();
  if (results.size() != declared.size()) {
    return Error(return_tok,
                 absl::StrCat("'return' has ", Plural(results.size(), "value"),
                              " but ", GraphRef(), " declares ",
                              Plural(declared.size(), "result")));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i]->type() != declared[i]) {
      return Error(
          result_toks[i],
          absl::StrCat("returned value ",
                       QuoteForDiagnostic(result_toks[i].text), " has type ",
                       results[i]->type().ToString(), " but result ", i, " of ",
                       GraphRef(), " is declared ", declared[i].ToString()));
    }
  }
  graph_->SetResults(std::move(results), Loc(return_tok));
  returned_ = true;
  if (tok_.is(TokenKind::kRBrace)) return absl::OkStatus();
  if (tok_.IsIdent("return")) {
    return Error(tok_, absl::StrCat("second 'return' in ", GraphRef(),
                                    " (a graph has exactly one 'return', "
                                    "its last statement)"));
  }
  if (tok_.is(TokenKind::kValue)) {
    // `%a = ...` or `%a, %b = ...` after the return is a misplaced statement;
    // anything else is a malformed return list.
    absl::StatusOr<Token> next = PeekNext();
    if (next.ok() &&
        (next->is(TokenKind::kEqual) || next->is(TokenKind::kComma))) {
      return absl::OkStatus();  // ParseGraph reports it
    }
  }
  return Expected("',' or '}' after return value");
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

absl::Status Parser::CheckSymbolRefs() const {
  for (const auto& [name, loc] : symbol_refs_) {
    if (!graph_names_.contains(name)) {
      return ErrorAt(loc, absl::StrCat("reference to undefined graph ",
                                       QuoteForDiagnostic("@" + name)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Module> ParseModule(absl::string_view text,
                                   absl::string_view filename,
                                   SourceManager& sm) {
  int32_t file_id = sm.AddFile(std::string(filename), std::string(text));
  // Lex the SourceManager's copy: tokens and locations point into it.
  return Parser(sm.FileText(file_id), file_id).Parse();
}

absl::StatusOr<Module> ParseFile(const std::string& path, SourceManager& sm) {
  // A directory, FIFO or device (e.g. /dev/zero) is refused before reading,
  // without blocking: it may never end.
  HGC_ASSIGN_OR_RETURN(std::string text,
                       ReadRegularFile(path, kMaxSourceFileSize));
  return ParseModule(text, path, sm);
}

}  // namespace hgc
