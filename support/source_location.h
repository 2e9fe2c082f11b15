// Source locations and the files they point into.
#ifndef HGC_SUPPORT_SOURCE_LOCATION_H_
#define HGC_SUPPORT_SOURCE_LOCATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace hgc {

// A position in a file registered with a SourceManager: file id and byte
// offset. Default-constructed locations are "unknown" (ops built in C++).
struct SourceLoc {
  int32_t file_id = -1;
  int64_t offset = -1;

  bool known() const { return file_id >= 0 && offset >= 0; }
};

// 1-based line and column; columns count characters (UTF-8 code points).
struct LineCol {
  int64_t line = 0;
  int64_t column = 0;
};

// Owns the text of every source file and maps offsets to lines and columns.
// Line tables are built on first use, so lexing never tracks lines.
class SourceManager {
 public:
  // Registers a file and returns its id.
  int32_t AddFile(std::string name, std::string text);

  const std::string& FileName(int32_t file_id) const;
  absl::string_view FileText(int32_t file_id) const;

  // Line and column of `loc`, which must be known and inside its file (an
  // offset equal to the file size, i.e. end of file, is allowed).
  LineCol GetLineCol(SourceLoc loc) const;

  // The text of the line holding `loc`, without its newline.
  absl::string_view LineText(SourceLoc loc) const;

 private:
  struct File {
    std::string name;
    std::string text;
    mutable std::vector<int64_t> line_starts;  // built lazily
  };
  const File& GetFile(int32_t id) const { return *files_[id]; }
  const std::vector<int64_t>& LineStarts(const File& file) const;
  int64_t LineIndex(SourceLoc loc) const;

  std::vector<std::unique_ptr<File>> files_;
};

}  // namespace hgc

#endif  // HGC_SUPPORT_SOURCE_LOCATION_H_
