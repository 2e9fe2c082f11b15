#include "codegen/llvm/object_cache.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include "support/file_io.h"

namespace hgc {
namespace codegen {
namespace {

// The header before the payload: kMagic, then the payload's size and its
// xxHash64, each 8 bytes in the machine's byte order (x86-64 only).
constexpr char kMagic[8] = {'H', 'G', 'C', 'O', 'B', 'J', '0', '1'};
constexpr size_t kHeaderBytes = sizeof(kMagic) + 2 * sizeof(uint64_t);
// Far above any object hgc generates; a bigger file is not an entry.
constexpr int64_t kMaxEntryBytes = int64_t{1} << 30;

bool IsValidKey(absl::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' &&
        c != '-') {
      return false;
    }
  }
  return true;
}

uint64_t Checksum(absl::string_view payload) {
  return llvm::xxHash64(llvm::StringRef(payload.data(), payload.size()));
}

// Creates `dir` and its missing parents, each with mode 0700.
absl::Status MakeDirectories(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    const std::string prefix =
        slash == std::string::npos ? dir : dir.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0700) != 0 &&
        errno != EEXIST) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create the cache directory '", prefix,
                       "': ", std::strerror(errno)));
    }
    if (slash == std::string::npos) return absl::OkStatus();
  }
}

// OK when `dir` is a directory of the user's that nobody else may write to.
absl::Status CheckSafeDirectory(const std::string& dir) {
  struct stat info;
  if (stat(dir.c_str(), &info) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot use the cache directory '", dir, "': ", std::strerror(errno)));
  }
  if (!S_ISDIR(info.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot use the cache directory '", dir, "': not a directory"));
  }
  if (info.st_uid != geteuid()) {
    return absl::FailedPreconditionError(
        absl::StrCat("refusing the cache directory '", dir,
                     "': it belongs to another user"));
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("refusing the cache directory '", dir,
                     "': others may write to it (chmod go-w, or choose "
                     "another directory)"));
  }
  return absl::OkStatus();
}

// Writes all of `data` to `fd`.
bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t written = write(fd, data.data(), data.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    data.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

// Which build of hgc is running: the path, size and modification time of
// the file (executable or shared library) holding this code. Any rebuild
// changes it, so that a change to hgc's optimization pipeline or code
// generator, which the bitcode does not show, never meets an object of the
// old one.
const std::string& HgcBuildIdentity() {
  static const std::string* const identity = [] {
    Dl_info info;
    const char* path = "/proc/self/exe";
    // The main executable's name may be relative (argv[0]); a shared
    // library's is the path it was loaded from.
    if (dladdr(reinterpret_cast<const void*>(&HgcBuildIdentity), &info) != 0 &&
        info.dli_fname != nullptr && info.dli_fname[0] == '/') {
      path = info.dli_fname;
    }
    struct stat file;
    if (stat(path, &file) != 0) {
      // Unknown: a key no other process makes, so nothing is shared.
      return new std::string(absl::StrCat("pid ", getpid()));
    }
    return new std::string(absl::StrCat(
        file.st_dev, " ", file.st_ino, " ", file.st_size, " ",
        file.st_mtim.tv_sec, ".", file.st_mtim.tv_nsec));
  }();
  return *identity;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ObjectCache>> ObjectCache::Open(
    const std::string& dir) {
  if (dir.empty()) {
    return absl::InvalidArgumentError("the cache directory name is empty");
  }
  std::string path = dir;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  struct stat info;
  if (stat(path.c_str(), &info) != 0 && errno == ENOENT) {
    if (absl::Status made = MakeDirectories(path); !made.ok()) return made;
  }
  if (absl::Status safe = CheckSafeDirectory(path); !safe.ok()) return safe;
  return std::unique_ptr<ObjectCache>(new ObjectCache(std::move(path)));
}

ObjectCache* ObjectCache::FromEnvironment() {
  static ObjectCache* const cache = []() -> ObjectCache* {
    const char* env = std::getenv("HGC_CACHE_DIR");
    if (env == nullptr || *env == '\0') return nullptr;
    absl::StatusOr<std::unique_ptr<ObjectCache>> opened = Open(env);
    if (!opened.ok()) {
      std::cerr << "hgc: warning: HGC_CACHE_DIR: " << opened.status().message()
                << "; compiling without a cache\n";
      return nullptr;
    }
    return opened->release();
  }();
  return cache;
}

std::string ObjectCache::EntryPath(absl::string_view key) const {
  return absl::StrCat(dir_, "/", key, ".o");
}

std::optional<std::string> ObjectCache::Load(absl::string_view key) {
  absl::StatusOr<std::string> entry =
      IsValidKey(key) ? ReadRegularFile(EntryPath(key), kMaxEntryBytes)
                      : absl::NotFoundError("no such key");
  if (!entry.ok()) {
    ++misses_;
    return std::nullopt;
  }
  uint64_t size = 0;
  uint64_t checksum = 0;
  if (entry->size() >= kHeaderBytes) {
    std::memcpy(&size, entry->data() + sizeof(kMagic), sizeof(size));
    std::memcpy(&checksum, entry->data() + sizeof(kMagic) + sizeof(size),
                sizeof(checksum));
  }
  const absl::string_view payload =
      absl::string_view(*entry).substr(std::min(entry->size(), kHeaderBytes));
  if (entry->size() < kHeaderBytes ||
      std::memcmp(entry->data(), kMagic, sizeof(kMagic)) != 0 ||
      size != payload.size() || checksum != Checksum(payload)) {
    ++corrupt_;
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return std::string(payload);
}

absl::Status ObjectCache::Store(absl::string_view key,
                                absl::string_view object) {
  if (!IsValidKey(key)) {
    ++failed_stores_;
    return absl::InvalidArgumentError(
        absl::StrCat("not an object cache key: '", key, "'"));
  }
  const std::string path = EntryPath(key);
  // A name no other writer uses: this process's id and a sequence number.
  const std::string temp = absl::StrCat(dir_, "/.", key, ".tmp-", getpid(),
                                        "-", temp_sequence_++);
  const int fd =
      open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    ++failed_stores_;
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot write '", temp, "': ", std::strerror(errno)));
  }
  char header[kHeaderBytes];
  const uint64_t size = object.size();
  const uint64_t checksum = Checksum(object);
  std::memcpy(header, kMagic, sizeof(kMagic));
  std::memcpy(header + sizeof(kMagic), &size, sizeof(size));
  std::memcpy(header + sizeof(kMagic) + sizeof(size), &checksum,
              sizeof(checksum));
  bool ok = WriteAll(fd, absl::string_view(header, kHeaderBytes)) &&
            WriteAll(fd, object);
  ok = close(fd) == 0 && ok;
  if (!ok || rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temp.c_str());
    ++failed_stores_;
    return absl::DataLossError(absl::StrCat("cannot write '", path,
                                            "': ", std::strerror(error)));
  }
  ++stores_;
  return absl::OkStatus();
}

ObjectCache::Counters ObjectCache::counters() const {
  Counters counters;
  counters.hits = hits_;
  counters.misses = misses_;
  counters.corrupt = corrupt_;
  counters.stores = stores_;
  counters.failed_stores = failed_stores_;
  return counters;
}

std::string ObjectCacheKey(const llvm::Module& module, const TargetSpec& spec,
                           const IrCompilerOptions& options) {
  std::string bitcode;
  {
    llvm::raw_string_ostream out(bitcode);
    llvm::WriteBitcodeToFile(module, out);
  }
  llvm::SHA256 hash;
  // Each field ends in a NUL, so that no two lists of fields run together
  // into the same bytes.
  auto field = [&hash](absl::string_view text) {
    hash.update(llvm::StringRef(text.data(), text.size()));
    hash.update(llvm::StringRef("\0", 1));
  };
  field(absl::StrCat("hgc object cache ", kObjectCacheFormat));
  field(HgcBuildIdentity());
  field(LLVM_VERSION_STRING);
  field(spec.triple);
  field(spec.cpu);
  field(spec.FeatureString());
  field(absl::StrCat(options.opt_level, " ", options.llvm_default_pipeline,
                     " ", options.prefer_vector_width, " ",
                     options.auto_vectorize));
  field(bitcode);
  const llvm::StringRef digest = hash.final();
  return absl::BytesToHexString(
      absl::string_view(digest.data(), digest.size()));
}

}  // namespace codegen
}  // namespace hgc
