#include "passes/pipeline_parser.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hgc {
namespace {

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' ||
         c == '_';
}

bool IsValueChar(char c) {
  return c != ',' && c != '{' && c != '}' && c != '=' &&
         !absl::ascii_isspace(static_cast<unsigned char>(c));
}

class PipelineParser {
 public:
  explicit PipelineParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<std::vector<PipelineEntry>> Parse() {
    std::vector<PipelineEntry> entries;
    SkipSpace();
    if (AtEnd()) return entries;
    while (true) {
      PipelineEntry entry;
      absl::StatusOr<std::string> name = Take(IsNameChar, "a pass name");
      if (!name.ok()) return name.status();
      entry.name = *name;
      SkipSpace();
      if (Peek() == '{') {
        ++pos_;
        absl::Status s = ParseOptions(entry);
        if (!s.ok()) return s;
      }
      entries.push_back(std::move(entry));
      SkipSpace();
      if (AtEnd()) return entries;
      if (Peek() != ',') return Error("expected ',' or the end");
      ++pos_;
      SkipSpace();
    }
  }

 private:
  absl::Status ParseOptions(PipelineEntry& entry) {
    SkipSpace();
    while (Peek() != '}') {
      if (AtEnd()) return Error("expected '}'");
      absl::StatusOr<std::string> key = Take(IsNameChar, "an option name");
      if (!key.ok()) return key.status();
      SkipSpace();
      if (Peek() != '=') return Error("expected '=' after the option name");
      ++pos_;
      SkipSpace();
      absl::StatusOr<std::string> value = Take(IsValueChar, "an option value");
      if (!value.ok()) return value.status();
      entry.options.emplace_back(*key, *value);
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        SkipSpace();
      }
    }
    ++pos_;  // '}'
    return absl::OkStatus();
  }

  template <typename Pred>
  absl::StatusOr<std::string> Take(Pred pred, absl::string_view what) {
    size_t start = pos_;
    while (!AtEnd() && pred(text_[pos_])) ++pos_;
    if (pos_ == start) return Error(absl::StrCat("expected ", what));
    return std::string(text_.substr(start, pos_ - start));
  }

  void SkipSpace() {
    while (!AtEnd() &&
           absl::ascii_isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  absl::Status Error(absl::string_view what) const {
    std::string found =
        AtEnd() ? "the end" : absl::StrCat("'", text_.substr(pos_, 1), "'");
    return absl::InvalidArgumentError(
        absl::StrCat("pipeline '", text_, "': ", what, ", found ", found,
                     " at column ", pos_ + 1));
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<PipelineEntry>> ParsePipeline(
    absl::string_view text) {
  return PipelineParser(text).Parse();
}

std::string PipelineToString(const std::vector<PipelineEntry>& entries) {
  return absl::StrJoin(
      entries, ",", [](std::string* out, const PipelineEntry& e) {
        out->append(e.name);
        if (e.options.empty()) return;
        out->append("{");
        out->append(absl::StrJoin(e.options, ",", absl::PairFormatter("=")));
        out->append("}");
      });
}

}  // namespace hgc
