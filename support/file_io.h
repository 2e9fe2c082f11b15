// Reading and writing the files a user names (graphs, .npy inputs and
// outputs) without blocking, unbounded reads or partial results.
#ifndef HGC_SUPPORT_FILE_IO_H_
#define HGC_SUPPORT_FILE_IO_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hgc {

// The whole contents of the regular file `path`, at most `max_bytes` long.
// The file is opened without blocking (O_NONBLOCK, so a FIFO nobody writes
// to cannot hang the open) and checked with fstat on the open descriptor
// before anything is read. Errors:
//   NotFound          "cannot open 'PATH': No such file or directory"
//   InvalidArgument   "cannot open 'PATH': <strerror>" for other open errors,
//                     "cannot read 'PATH': not a regular file (a directory)"
//                     (or a FIFO, a character device, ...),
//                     "cannot read 'PATH': file is larger than N MiB",
//                     "cannot read 'PATH': <strerror>" for a failed read.
absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            int64_t max_bytes);

// Writes each (path, contents) pair all or nothing:
//  1. every final name is checked before anything is written: it must be
//     free in an existing directory, or a regular file we may write to;
//  2. every file is written in full to a temporary name beside its final
//     one (".NAME.tmp-PID", with "-1", "-2", ... added while that name is
//     taken) and flushed;
//  3. each final name that holds a file gets a hard link of it beside it
//     (".NAME.bak-PID", likewise), then the temporary files are renamed over
//     the final names; the backups are removed once all are renamed.
// A failure at any step leaves the directories as they were: if a rename
// fails after others were done (the directory changed meanwhile), those
// are undone, earlier files restored from their backups and new names
// removed, and no temporary file or backup is left. Errors name the file
// and the reason:
//   FailedPrecondition  "cannot write 'PATH': a directory is in the way"
//                       (or a FIFO, a symbolic link, ...),
//                       "cannot write 'PATH': a read-only file is in the
//                       way" (one we may not write to, or one without any
//                       write permission bit, which is refused to root as
//                       well), "cannot write 'PATH': No such file or
//                       directory" (or "Not a directory") for its directory;
//   PermissionDenied    "cannot write 'PATH': <strerror>" when the temporary
//                       file cannot be made, "cannot write 'PATH': cannot
//                       keep a copy of the earlier file: <strerror>" when
//                       the backup cannot (a file system without hard
//                       links);
//   DataLoss            "cannot write 'PATH': <strerror>" for a failed write
//                       (e.g. "No space left on device", "File too large")
//                       or rename; a rename failure that could not be fully
//                       undone adds "; could not restore 'PATH' (its earlier
//                       contents are in 'BACKUP'): <strerror>".
absl::Status WriteFilesAtomically(
    const std::vector<std::pair<std::string, std::string>>& files);

namespace file_io_internal {

// WriteFilesAtomically, calling `before_rename(i)` (when set) just before
// the temporary file of files[i] is renamed: tests change the directory
// there to make a rename fail after others were done.
absl::Status WriteFilesAtomically(
    const std::vector<std::pair<std::string, std::string>>& files,
    const std::function<void(size_t)>& before_rename);

}  // namespace file_io_internal

}  // namespace hgc

#endif  // HGC_SUPPORT_FILE_IO_H_
