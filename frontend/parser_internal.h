// Internal to the `.graph` parser (frontend/parser.h): the recursive-descent
// Parser class. Not part of any public API: only frontend/parser.cc and
// frontend/type_and_attr_parser.cc include this header.
//
// The files split the Parser by concept:
//   parser.cc                 token plumbing, the module, graph, parameter,
//                             statement and return grammar, the `@name`
//                             check, and the public ParseModule / ParseFile
//   type_and_attr_parser.cc   the type grammar (`f32[4, 8]`) and the
//                             attribute grammar (`{name = value, ...}`,
//                             nested `[...]` lists)
#ifndef HGC_FRONTEND_PARSER_INTERNAL_H_
#define HGC_FRONTEND_PARSER_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "frontend/lexer.h"
#include "frontend/token.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "ir/tensor_type.h"
#include "support/diagnostics.h"
#include "support/source_location.h"

namespace hgc {
namespace parser_internal {

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
  // A statement's result names (each new, none twice) and the '=' after.
  absl::StatusOr<std::vector<Token>> ParseDefinedNames();
  // A registered op name and the '(' after it; the name's token.
  absl::StatusOr<Token> ParseOpName();
  // The operands after the op's '(', through the ')'.
  absl::StatusOr<std::vector<Value*>> ParseOperands();
  // The declared result types after ':', or none without one.
  absl::StatusOr<std::vector<TensorType>> ParseDeclaredTypes();
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

}  // namespace parser_internal
}  // namespace hgc

#endif  // HGC_FRONTEND_PARSER_INTERNAL_H_
