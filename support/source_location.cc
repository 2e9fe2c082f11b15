#include "support/source_location.h"

#include <algorithm>

namespace hgc {

int32_t SourceManager::AddFile(std::string name, std::string text) {
  auto file = std::make_unique<File>();
  file->name = std::move(name);
  file->text = std::move(text);
  files_.push_back(std::move(file));
  return static_cast<int32_t>(files_.size() - 1);
}

const std::string& SourceManager::FileName(int32_t file_id) const {
  return GetFile(file_id).name;
}

absl::string_view SourceManager::FileText(int32_t file_id) const {
  return GetFile(file_id).text;
}

const std::vector<int64_t>& SourceManager::LineStarts(const File& file) const {
  if (file.line_starts.empty()) {
    file.line_starts.push_back(0);
    for (int64_t i = 0; i < static_cast<int64_t>(file.text.size()); ++i) {
      if (file.text[i] == '\n') file.line_starts.push_back(i + 1);
    }
  }
  return file.line_starts;
}

int64_t SourceManager::LineIndex(SourceLoc loc) const {
  const std::vector<int64_t>& starts = LineStarts(GetFile(loc.file_id));
  auto it = std::upper_bound(starts.begin(), starts.end(), loc.offset);
  return (it - starts.begin()) - 1;
}

LineCol SourceManager::GetLineCol(SourceLoc loc) const {
  const File& file = GetFile(loc.file_id);
  int64_t line = LineIndex(loc);
  int64_t start = LineStarts(file)[line];
  int64_t end = std::min<int64_t>(loc.offset, file.text.size());
  // Count code points: every byte that is not a UTF-8 continuation byte.
  int64_t column = 1;
  for (int64_t i = start; i < end; ++i) {
    if ((static_cast<unsigned char>(file.text[i]) & 0xC0) != 0x80) ++column;
  }
  return {line + 1, column};
}

absl::string_view SourceManager::LineText(SourceLoc loc) const {
  const File& file = GetFile(loc.file_id);
  const std::vector<int64_t>& starts = LineStarts(file);
  int64_t line = LineIndex(loc);
  int64_t start = starts[line];
  int64_t end = line + 1 < static_cast<int64_t>(starts.size())
                    ? starts[line + 1] - 1
                    : static_cast<int64_t>(file.text.size());
  absl::string_view text(file.text);
  absl::string_view result = text.substr(start, end - start);
  if (!result.empty() && result.back() == '\r') result.remove_suffix(1);
  return result;
}

}  // namespace hgc
