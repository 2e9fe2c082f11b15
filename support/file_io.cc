#include "support/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace hgc {
namespace {

std::string ErrnoText(int err) { return std::generic_category().message(err); }

absl::Status OsError(absl::string_view what, const std::string& path, int err) {
  std::string message = absl::StrCat(what, " '", path, "': ", ErrnoText(err));
  return err == ENOENT ? absl::NotFoundError(message)
                       : absl::InvalidArgumentError(message);
}

absl::string_view FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a plain file";
}

std::string TooLarge(const std::string& path, int64_t max_bytes) {
  return max_bytes >= (int64_t{1} << 20)
             ? absl::StrCat("cannot read '", path, "': file is larger than ",
                            max_bytes >> 20, " MiB")
             : absl::StrCat("cannot read '", path, "': file is larger than ",
                            max_bytes, " bytes");
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  // Closes now; returns errno of a failed close, 0 on success.
  int Close() {
    int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

// Writes all of `data` to `fd`; 0 or the errno of the failure.
int WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// The directory part of `path` with its slash ("" for a bare name) and
// the name after it.
std::pair<std::string, std::string> SplitPath(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash + 1), path.substr(slash + 1)};
}

// ".BASE.SUFFIX-PID" beside `path`, then ".BASE.SUFFIX-PID-1", ... for the
// attempt'th try after a name that was taken.
std::string SideName(const std::string& path, absl::string_view suffix,
                     int attempt) {
  auto [dir, base] = SplitPath(path);
  std::string name = absl::StrCat(dir, ".", base, ".", suffix, "-", ::getpid());
  if (attempt > 0) absl::StrAppend(&name, "-", attempt);
  return name;
}

// How many taken side names are skipped before giving up with EEXIST.
constexpr int kSideNameAttempts = 100;

absl::Status CannotWrite(const std::string& path, absl::string_view reason) {
  return absl::FailedPreconditionError(
      absl::StrCat("cannot write '", path, "': ", reason));
}

// Whether `path` may be written, looked at before anything is: OK when it
// does not exist (in an existing directory) or is a regular file we may
// write to; `*exists` says which.
absl::Status CheckFinalName(const std::string& path, bool* exists) {
  *exists = false;
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) {
    *exists = true;
    // A symbolic link is refused too: replacing it would not write where
    // it points, writing through it would not write `path`.
    if (!S_ISREG(st.st_mode)) {
      absl::string_view kind = FileKind(st.st_mode);
      if (kind == "not a plain file") kind = "something other than a file";
      return CannotWrite(path, absl::StrCat(kind, " is in the way"));
    }
    // A file without any write permission bit is refused even where the
    // access check would let us (root).
    if ((st.st_mode & 0222) == 0 ||
        ::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0) {
      return CannotWrite(path, "a read-only file is in the way");
    }
    return absl::OkStatus();
  }
  int err = errno;
  if (err != ENOENT) return CannotWrite(path, ErrnoText(err));
  // The name is free; its directory must exist.
  std::string dir = SplitPath(path).first;
  if (dir.empty()) return absl::OkStatus();
  if (::stat(dir.c_str(), &st) != 0) return CannotWrite(path, ErrnoText(errno));
  if (!S_ISDIR(st.st_mode)) return CannotWrite(path, ErrnoText(ENOTDIR));
  return absl::OkStatus();
}

// One file of WriteFilesAtomically and the names it holds on the way.
struct PendingFile {
  const std::string* path;
  const std::string* contents;
  bool existed = false;  // a regular file was at `path` before
  std::string temp;      // the new contents until renamed; "" when none
  std::string backup;    // a hard link of the earlier file; "" when none
  bool renamed = false;  // `temp` now lies at `path`
};

// Creates and fills the temporary file of `file`, flushed to disk.
absl::Status WriteTemp(PendingFile& file) {
  const std::string& path = *file.path;
  int raw = -1;
  std::string temp;
  for (int attempt = 0; attempt < kSideNameAttempts; ++attempt) {
    temp = SideName(path, "tmp", attempt);
    raw = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (raw >= 0 || errno != EEXIST) break;
  }
  if (raw < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write '", path, "': ", ErrnoText(errno)));
  }
  file.temp = temp;
  Fd fd(raw);
  int err = WriteAll(fd.get(), *file.contents);
  // fsync makes a full disk show up here rather than after the rename.
  if (err == 0 && ::fsync(fd.get()) != 0 && errno != EINVAL) err = errno;
  int close_err = fd.Close();
  if (err == 0) err = close_err;
  if (err != 0) {
    return absl::DataLossError(
        absl::StrCat("cannot write '", path, "': ", ErrnoText(err)));
  }
  return absl::OkStatus();
}

// Links the file now at the final name of `file` to a backup name.
absl::Status TakeBackup(PendingFile& file) {
  const std::string& path = *file.path;
  for (int attempt = 0; attempt < kSideNameAttempts; ++attempt) {
    std::string backup = SideName(path, "bak", attempt);
    if (::link(path.c_str(), backup.c_str()) == 0) {
      file.backup = backup;
      return absl::OkStatus();
    }
    if (errno != EEXIST) break;
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "cannot write '", path,
      "': cannot keep a copy of the earlier file: ", ErrnoText(errno)));
}

// Puts the directory back as it was: renamed files are undone (the earlier
// file restored from its backup, or the new name removed), temporary files
// and backups removed. Returns what could not be restored, "" when all was.
std::string RollBack(std::vector<PendingFile>& files) {
  std::string problems;
  for (auto it = files.rbegin(); it != files.rend(); ++it) {
    PendingFile& file = *it;
    if (file.renamed) {
      if (file.existed) {
        if (::rename(file.backup.c_str(), file.path->c_str()) == 0) {
          file.backup.clear();
        } else {
          int err = errno;
          absl::StrAppend(&problems, "; could not restore '", *file.path,
                          "' (its earlier contents are in '", file.backup,
                          "'): ", ErrnoText(err));
          file.backup.clear();  // not removed below: it is the only copy
        }
      } else if (::unlink(file.path->c_str()) != 0) {
        int err = errno;
        absl::StrAppend(&problems, "; could not remove the new '", *file.path,
                        "': ", ErrnoText(err));
      }
      file.renamed = false;
    }
    if (!file.temp.empty()) ::unlink(file.temp.c_str());
    if (!file.backup.empty()) ::unlink(file.backup.c_str());
    file.temp.clear();
    file.backup.clear();
  }
  return problems;
}

}  // namespace

absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
  // writer before the fstat below could refuse it.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return OsError("cannot open", path, errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return OsError("cannot read", path, errno);
  // A directory, FIFO or device (e.g. /dev/zero) is refused before reading:
  // it may never end.
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read '", path,
                                                   "': not a regular file (",
                                                   FileKind(st.st_mode), ")"));
  }
  if (st.st_size > max_bytes) {
    return absl::InvalidArgumentError(TooLarge(path, max_bytes));
  }
  // Regular files never block; reads go back to the ordinary mode.
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return OsError("cannot read", path, errno);
  }
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return OsError("cannot read", path, errno);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    // The file may grow while it is read.
    if (static_cast<int64_t>(text.size()) > max_bytes) {
      return absl::InvalidArgumentError(TooLarge(path, max_bytes));
    }
  }
  return text;
}

namespace file_io_internal {

absl::Status WriteFilesAtomically(
    const std::vector<std::pair<std::string, std::string>>& files,
    const std::function<void(size_t)>& before_rename) {
  std::vector<PendingFile> pending(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    pending[i].path = &files[i].first;
    pending[i].contents = &files[i].second;
    absl::Status checked = CheckFinalName(files[i].first, &pending[i].existed);
    if (!checked.ok()) return checked;
  }
  for (PendingFile& file : pending) {
    absl::Status written = WriteTemp(file);
    if (!written.ok()) {
      RollBack(pending);
      return written;
    }
  }
  for (PendingFile& file : pending) {
    if (!file.existed) continue;
    absl::Status backed_up = TakeBackup(file);
    if (!backed_up.ok()) {
      RollBack(pending);
      return backed_up;
    }
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    PendingFile& file = pending[i];
    if (before_rename) before_rename(i);
    if (::rename(file.temp.c_str(), file.path->c_str()) != 0) {
      int err = errno;
      std::string problems = RollBack(pending);
      return absl::DataLossError(absl::StrCat("cannot write '", *file.path,
                                              "': ", ErrnoText(err), problems));
    }
    file.renamed = true;
    file.temp.clear();
  }
  for (PendingFile& file : pending) {
    if (!file.backup.empty()) ::unlink(file.backup.c_str());
  }
  return absl::OkStatus();
}

}  // namespace file_io_internal

absl::Status WriteFilesAtomically(
    const std::vector<std::pair<std::string, std::string>>& files) {
  return file_io_internal::WriteFilesAtomically(files, nullptr);
}

}  // namespace hgc
