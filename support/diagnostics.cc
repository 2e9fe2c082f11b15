#include "support/diagnostics.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace hgc {
namespace {

constexpr absl::string_view kLocPayload = "hgc.dev/source-loc";
constexpr int64_t kMaxShownLine = 160;

bool IsContinuationByte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// The length of the valid UTF-8 sequence starting `text`, or 0 if it does
// not start with one.
int64_t ValidUtf8Length(absl::string_view text) {
  unsigned char c = static_cast<unsigned char>(text[0]);
  int64_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3
                 : (c >> 3) == 0x1E ? 4 : 0;
  if (length == 0 || length > static_cast<int64_t>(text.size())) return 0;
  for (int64_t i = 1; i < length; ++i) {
    if (!IsContinuationByte(text[i])) return 0;
  }
  return length;
}

}  // namespace

absl::Status ErrorAt(SourceLoc loc, absl::string_view message) {
  return AttachLoc(absl::InvalidArgumentError(message), loc);
}

absl::Status AttachLoc(absl::Status status, SourceLoc loc) {
  if (status.ok() || !loc.known() || GetLoc(status).has_value()) return status;
  status.SetPayload(kLocPayload,
                    absl::Cord(absl::StrCat(loc.file_id, ":", loc.offset)));
  return status;
}

std::optional<SourceLoc> GetLoc(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kLocPayload);
  if (!payload.has_value()) return std::nullopt;
  std::pair<std::string, std::string> parts =
      absl::StrSplit(std::string(*payload), ':');
  SourceLoc loc;
  if (!absl::SimpleAtoi(parts.first, &loc.file_id) ||
      !absl::SimpleAtoi(parts.second, &loc.offset)) {
    return std::nullopt;
  }
  return loc;
}

std::string FormatError(const absl::Status& status, const SourceManager& sm,
                        absl::string_view default_file) {
  std::string message(status.message());
  std::optional<SourceLoc> loc = GetLoc(status);
  if (!loc.has_value()) {
    if (default_file.empty()) return absl::StrCat("error: ", message, "\n");
    return absl::StrCat(default_file, ": error: ", message, "\n");
  }
  LineCol lc = sm.GetLineCol(*loc);
  absl::string_view line = sm.LineText(*loc);
  int64_t at = loc->offset - (line.data() - sm.FileText(loc->file_id).data());
  // Very long lines (minified or generated files) are shown as a window
  // around the error so the message stays readable.
  std::string prefix;
  if (line.size() > kMaxShownLine) {
    int64_t begin = std::max<int64_t>(0, at - kMaxShownLine / 2);
    while (begin > 0 && IsContinuationByte(line[begin])) --begin;
    int64_t end = std::min<int64_t>(line.size(), begin + kMaxShownLine);
    while (end < static_cast<int64_t>(line.size()) &&
           IsContinuationByte(line[end])) {
      ++end;
    }
    if (begin > 0) prefix = "...";
    line = line.substr(begin, end - begin);
    at -= begin;
  }
  // Control bytes and invalid UTF-8 show as '?', so a binary file cannot
  // garble the terminal; the caret line copies tabs to line up under any
  // tab width.
  std::string shown, caret = prefix.empty() ? "" : "   ";
  for (int64_t i = 0; i < static_cast<int64_t>(line.size());) {
    int64_t length = ValidUtf8Length(line.substr(i));
    bool before_error = i < at;
    unsigned char c = static_cast<unsigned char>(line[i]);
    if (length == 0) {
      if (!IsContinuationByte(line[i])) {
        shown += '?';
        if (before_error) caret += ' ';
      }
      ++i;
      continue;
    }
    if (length == 1 && (c < 0x20 || c == 0x7F) && c != '\t') {
      shown += '?';
    } else {
      shown.append(line.data() + i, length);
    }
    if (before_error) caret += c == '\t' ? '\t' : ' ';
    i += length;
  }
  caret += '^';
  return absl::StrCat(sm.FileName(loc->file_id), ":", lc.line, ":", lc.column,
                      ": error: ", message, "\n", prefix, shown, "\n", caret,
                      "\n");
}

}  // namespace hgc
