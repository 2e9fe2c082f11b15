#include "frontend/parser.h"

#include <cerrno>
#include <cstdio>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "frontend/lexer.h"
#include "frontend/parser_internal.h"
#include "frontend/token.h"
#include "ir/attribute.h"
#include "ir/builder.h"
#include "ir/op_registry.h"
#include "ir/tensor_type.h"
#include "ir/verifier.h"
#include "support/diagnostics.h"
#include "support/file_io.h"
#include "support/status_macros.h"

namespace hgc {
namespace parser_internal {
namespace {

std::string Plural(size_t n, absl::string_view word) {
  return absl::StrCat(n, " ", word, n == 1 ? "" : "s");
}

}  // namespace

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

absl::StatusOr<Value*> Parser::ParseUse() {
  auto it = values_.find(tok_.name());
  if (it == values_.end()) {
    return Error(tok_, absl::StrCat("use of undefined value ",
                                    QuoteForDiagnostic(tok_.text)));
  }
  HGC_RETURN_IF_ERROR(Advance());
  return it->second;
}

absl::StatusOr<std::vector<Token>> Parser::ParseDefinedNames() {
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
  return defs;
}

absl::StatusOr<Token> Parser::ParseOpName() {
  // Checked at once so that a misspelled op is the first error.
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
  return op_tok;
}

absl::StatusOr<std::vector<Value*>> Parser::ParseOperands() {
  std::vector<Value*> operands;
  if (tok_.is(TokenKind::kRParen)) {
    HGC_RETURN_IF_ERROR(Advance());
    return operands;
  }
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
  return operands;
}

absl::StatusOr<std::vector<TensorType>> Parser::ParseDeclaredTypes() {
  std::vector<TensorType> declared;
  if (!tok_.is(TokenKind::kColon)) return declared;
  HGC_RETURN_IF_ERROR(Advance());
  while (true) {
    HGC_ASSIGN_OR_RETURN(TensorType type, ParseType());
    declared.push_back(std::move(type));
    if (!tok_.is(TokenKind::kComma)) break;
    HGC_RETURN_IF_ERROR(Advance());
  }
  return declared;
}

absl::Status Parser::ParseStatement() {
  HGC_ASSIGN_OR_RETURN(std::vector<Token> defs, ParseDefinedNames());
  HGC_ASSIGN_OR_RETURN(const Token op_tok, ParseOpName());
  HGC_ASSIGN_OR_RETURN(std::vector<Value*> operands, ParseOperands());
  AttrMap attrs;
  if (tok_.is(TokenKind::kLBrace)) {
    HGC_ASSIGN_OR_RETURN(attrs, ParseAttrs());
  }
  HGC_ASSIGN_OR_RETURN(std::vector<TensorType> declared, ParseDeclaredTypes());

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

absl::Status Parser::CheckSymbolRefs() const {
  for (const auto& [name, loc] : symbol_refs_) {
    if (!graph_names_.contains(name)) {
      return ErrorAt(loc, absl::StrCat("reference to undefined graph ",
                                       QuoteForDiagnostic("@" + name)));
    }
  }
  return absl::OkStatus();
}

}  // namespace parser_internal

absl::StatusOr<Module> ParseModule(absl::string_view text,
                                   absl::string_view filename,
                                   SourceManager& sm) {
  int32_t file_id = sm.AddFile(std::string(filename), std::string(text));
  // Lex the SourceManager's copy: tokens and locations point into it.
  return parser_internal::Parser(sm.FileText(file_id), file_id).Parse();
}

absl::StatusOr<Module> ParseFile(const std::string& path, SourceManager& sm) {
  // A directory, FIFO or device (e.g. /dev/zero) is refused before reading,
  // without blocking: it may never end.
  HGC_ASSIGN_OR_RETURN(std::string text,
                       ReadRegularFile(path, kMaxSourceFileSize));
  return ParseModule(text, path, sm);
}

}  // namespace hgc
