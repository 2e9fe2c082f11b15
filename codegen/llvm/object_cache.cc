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
#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
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

// SHA-256 over `kind` with kObjectCacheFormat, the build of hgc, the LLVM
// version, the target, the options and `content`.
std::string KeyOf(absl::string_view kind, absl::string_view content,
                  const TargetSpec& spec, const IrCompilerOptions& options) {
  llvm::SHA256 hash;
  // Each field ends in a NUL, so that no two lists of fields run together
  // into the same bytes.
  auto field = [&hash](absl::string_view text) {
    hash.update(llvm::StringRef(text.data(), text.size()));
    hash.update(llvm::StringRef("\0", 1));
  };
  field(absl::StrCat(kind, " ", kObjectCacheFormat));
  field(HgcBuildIdentity());
  field(LLVM_VERSION_STRING);
  field(spec.triple);
  field(spec.cpu);
  field(spec.FeatureString());
  field(absl::StrCat(options.opt_level, " ", options.llvm_default_pipeline, " ",
                     options.prefer_vector_width, " ", options.auto_vectorize));
  field(content);
  const llvm::StringRef digest = hash.final();
  return absl::BytesToHexString(
      absl::string_view(digest.data(), digest.size()));
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

std::string ObjectCache::EntryPath(absl::string_view key,
                                   absl::string_view extension) const {
  return absl::StrCat(dir_, "/", key, extension);
}

std::optional<std::string> ObjectCache::LoadEntry(absl::string_view key,
                                                  absl::string_view extension,
                                                  bool* corrupt) {
  *corrupt = false;
  absl::StatusOr<std::string> entry =
      IsValidKey(key)
          ? ReadRegularFile(EntryPath(key, extension), kMaxEntryBytes)
          : absl::NotFoundError("no such key");
  if (!entry.ok()) return std::nullopt;
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
    *corrupt = true;
    return std::nullopt;
  }
  return std::string(payload);
}

std::optional<std::string> ObjectCache::Load(absl::string_view key) {
  bool corrupt = false;
  std::optional<std::string> object = LoadEntry(key, ".o", &corrupt);
  if (corrupt) ++corrupt_;
  ++(object.has_value() ? hits_ : misses_);
  return object;
}

std::optional<ObjectCache::ObjectList> ObjectCache::LoadObjectList(
    absl::string_view key) {
  bool corrupt = false;
  std::optional<std::string> payload = LoadEntry(key, ".objs", &corrupt);
  if (!payload.has_value()) return std::nullopt;
  std::vector<std::string> lines = absl::StrSplit(*payload, '\n');
  if (lines.size() < 2) return std::nullopt;
  for (const std::string& line : lines) {
    if (!IsValidKey(line)) return std::nullopt;
  }
  ObjectList list;
  list.check = std::move(lines.front());
  list.objects.assign(std::make_move_iterator(lines.begin() + 1),
                      std::make_move_iterator(lines.end()));
  return list;
}

absl::Status ObjectCache::Store(absl::string_view key,
                                absl::string_view object) {
  absl::Status stored = StoreEntry(key, ".o", object);
  ++(stored.ok() ? stores_ : failed_stores_);
  return stored;
}

absl::Status ObjectCache::StoreObjectList(absl::string_view key,
                                          const ObjectList& list) {
  if (!IsValidKey(list.check) || list.objects.empty() ||
      !std::all_of(list.objects.begin(), list.objects.end(), IsValidKey)) {
    return absl::InvalidArgumentError(
        "an object list needs a check and object keys, all names");
  }
  return StoreEntry(key, ".objs",
                    absl::StrCat(list.check, "\n",
                                 absl::StrJoin(list.objects, "\n")));
}

absl::Status ObjectCache::StoreEntry(absl::string_view key,
                                     absl::string_view extension,
                                     absl::string_view payload) {
  if (!IsValidKey(key)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not an object cache key: '", key, "'"));
  }
  const std::string path = EntryPath(key, extension);
  // A name no other writer uses: this process's id and a sequence number.
  const std::string temp =
      absl::StrCat(dir_, "/.", key, ".tmp-", getpid(), "-", temp_sequence_++);
  const int fd =
      open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write '", temp, "': ", std::strerror(errno)));
  }
  char header[kHeaderBytes];
  const uint64_t size = payload.size();
  const uint64_t checksum = Checksum(payload);
  std::memcpy(header, kMagic, sizeof(kMagic));
  std::memcpy(header + sizeof(kMagic), &size, sizeof(size));
  std::memcpy(header + sizeof(kMagic) + sizeof(size), &checksum,
              sizeof(checksum));
  bool ok = WriteAll(fd, absl::string_view(header, kHeaderBytes)) &&
            WriteAll(fd, payload);
  ok = close(fd) == 0 && ok;
  if (!ok || rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temp.c_str());
    return absl::DataLossError(
        absl::StrCat("cannot write '", path, "': ", std::strerror(error)));
  }
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
  return KeyOf("hgc object cache", bitcode, spec, options);
}

std::string GraphObjectsKey(absl::string_view description,
                            const TargetSpec& spec,
                            const IrCompilerOptions& options) {
  return KeyOf("hgc graph objects", description, spec, options);
}

}  // namespace codegen
}  // namespace hgc
