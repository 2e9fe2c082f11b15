// Reading and writing the files a user names (graphs, .npy inputs and
// outputs) without blocking, unbounded reads or partial results.
#ifndef HGC_SUPPORT_FILE_IO_H_
#define HGC_SUPPORT_FILE_IO_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

// Writes each (path, contents) pair all-or-nothing: every file is first
// written in full to a temporary name beside its final one
// (".PATH.tmp-PID"), flushed, and only when all are complete renamed over
// the final names. On any failure the temporary files are removed, nothing
// new is left under the final names, and the error names the file and the
// reason (strerror), e.g. "cannot write 'out/out0.npy': No space left on
// device".
absl::Status WriteFilesAtomically(
    const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace hgc

#endif  // HGC_SUPPORT_FILE_IO_H_
