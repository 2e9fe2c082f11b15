#include "support/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

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

std::string TempNameFor(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return absl::StrCat(dir, ".", base, ".tmp-", ::getpid());
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

absl::Status WriteFilesAtomically(
    const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> temps;
  auto remove_temps = [&temps]() {
    for (const std::string& t : temps) ::unlink(t.c_str());
  };
  for (const auto& [path, contents] : files) {
    std::string temp = TempNameFor(path);
    int raw =
        ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (raw < 0) {
      int err = errno;
      remove_temps();
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write '", path, "': ", ErrnoText(err)));
    }
    temps.push_back(temp);
    Fd fd(raw);
    int err = WriteAll(fd.get(), contents);
    // fsync makes a full disk show up here rather than after the rename.
    if (err == 0 && ::fsync(fd.get()) != 0 && errno != EINVAL) err = errno;
    int close_err = fd.Close();
    if (err == 0) err = close_err;
    if (err != 0) {
      remove_temps();
      return absl::DataLossError(
          absl::StrCat("cannot write '", path, "': ", ErrnoText(err)));
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (::rename(temps[i].c_str(), files[i].first.c_str()) != 0) {
      int err = errno;
      remove_temps();  // those already renamed are gone: unlink fails quietly
      return absl::DataLossError(absl::StrCat("cannot write '", files[i].first,
                                              "': ", ErrnoText(err)));
    }
  }
  return absl::OkStatus();
}

}  // namespace hgc
