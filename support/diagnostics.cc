#include "support/diagnostics.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace hgc {
namespace {

constexpr absl::string_view kLocPayload = "hgc.dev/source-loc";

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
  // The caret line copies tabs so the caret lines up under any tab width.
  std::string caret;
  int64_t chars = 0;
  for (char c : line) {
    if (chars + 1 >= lc.column) break;
    if ((static_cast<unsigned char>(c) & 0xC0) == 0x80) continue;
    caret += (c == '\t') ? '\t' : ' ';
    ++chars;
  }
  while (chars + 1 < lc.column) {
    caret += ' ';
    ++chars;
  }
  caret += '^';
  return absl::StrCat(sm.FileName(loc->file_id), ":", lc.line, ":", lc.column,
                      ": error: ", message, "\n", line, "\n", caret, "\n");
}

}  // namespace hgc
