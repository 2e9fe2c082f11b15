// An on-disk cache of the object code the JIT generates (docs/cache.md).
//
// Jit::AddModules asks it before optimizing and compiling a module: the
// key (ObjectCacheKey) hashes the module's bitcode as emitted, the target
// (triple, CPU, features), the optimization options, the LLVM version,
// kObjectCacheFormat and the build of hgc, so that a hit is the object the
// same compile would generate. The generated code reaches kernels, runtime
// helpers and other modules by symbol name, resolved when the JIT links
// it, so an object is valid in any process. Xbyak microkernels are
// generated at run time apart from this (microkernels/kernel_cache.h) and
// are not cached here.
//
// Entries are DIR/<key>.o, and DIR/<key>.objs for a graph's list of
// objects (GraphObjectsKey; its check and object keys, a line each): a
// header (magic, payload size, xxHash64 of the payload) and the payload.
// A store writes a temporary file of its own in DIR (O_EXCL) and renames
// it over the entry, so readers see a whole entry or none, whatever other
// writers do. A missing, short or corrupt entry is a miss, and the compile
// that follows rewrites it.
//
// The directory must belong to the user and be writable by nobody else:
// anyone who can write there can make hgc run their code. Open refuses
// other directories, and creates a missing one with mode 0700.
#ifndef HGC_CODEGEN_LLVM_OBJECT_CACHE_H_
#define HGC_CODEGEN_LLVM_OBJECT_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codegen/llvm/ir_compiler.h"
#include "llvm/IR/Module.h"

namespace hgc {
namespace codegen {

// Changes whenever what hgc puts in an object, or how it names one,
// changes in a way the bitcode does not show, or the graph lists' format
// does.
inline constexpr int kObjectCacheFormat = 1;

class ObjectCache {
 public:
  // What the cache did since it was opened.
  struct Counters {
    int64_t hits = 0;
    int64_t misses = 0;   // including the corrupt entries
    int64_t corrupt = 0;  // entries found short or failing their checksum
    int64_t stores = 0;
    int64_t failed_stores = 0;
  };

  // Opens the cache in `dir`, creating it (and missing parents) with mode
  // 0700. FailedPrecondition when it is not a directory, does not belong
  // to the user or is writable by the group or others; PermissionDenied
  // when it cannot be created.
  static absl::StatusOr<std::unique_ptr<ObjectCache>> Open(
      const std::string& dir);

  // The process's cache: the directory HGC_CACHE_DIR names, opened on the
  // first call. Null when the variable is unset or empty, or when Open
  // refuses the directory; the refusal is printed once on stderr
  // ("hgc: warning: ..."), and compiles then run without a cache.
  static ObjectCache* FromEnvironment();

  ObjectCache(const ObjectCache&) = delete;
  ObjectCache& operator=(const ObjectCache&) = delete;

  const std::string& dir() const { return dir_; }

  // The object stored under `key`, or nullopt on a miss: no entry, or an
  // entry that is short, too long or fails its checksum. Thread-safe.
  std::optional<std::string> Load(absl::string_view key);

  // Stores `object` under `key`, replacing any entry atomically.
  // InvalidArgument for a key that is not [0-9a-zA-Z_-]+; the errors of
  // writing the file otherwise (the caller may ignore them: the cache is
  // only a cache). Thread-safe, and safe against other processes.
  absl::Status Store(absl::string_view key, absl::string_view object);

  // A graph's list: the keys of its objects, and `check`, which the
  // compile that stored it derived from what it made, for the user of the
  // objects to compare with what it makes. All names, as keys are.
  struct ObjectList {
    std::string check;
    std::vector<std::string> objects;
  };
  // The list stored under graph key `key`, or nullopt on a miss, as Load.
  // A list without objects, or holding anything but names, is corrupt.
  // Not counted in counters(). Thread-safe.
  std::optional<ObjectList> LoadObjectList(absl::string_view key);
  // Stores `list` under graph key `key`, as Store. InvalidArgument when
  // `key` or a name of the list is not [0-9a-zA-Z_-]+.
  absl::Status StoreObjectList(absl::string_view key, const ObjectList& list);

  Counters counters() const;

 private:
  explicit ObjectCache(std::string dir) : dir_(std::move(dir)) {}
  std::string EntryPath(absl::string_view key,
                        absl::string_view extension) const;
  // The payload of entry `key` + `extension`; nullopt on a miss, counted
  // as corrupt when the file is there but not an entry.
  std::optional<std::string> LoadEntry(absl::string_view key,
                                       absl::string_view extension,
                                       bool* corrupt);
  absl::Status StoreEntry(absl::string_view key, absl::string_view extension,
                          absl::string_view payload);

  std::string dir_;
  std::atomic<int64_t> hits_{0};
  std::atomic<int64_t> misses_{0};
  std::atomic<int64_t> corrupt_{0};
  std::atomic<int64_t> stores_{0};
  std::atomic<int64_t> failed_stores_{0};
  std::atomic<int64_t> temp_sequence_{0};
};

// The cache key of compiling `module` (as emitted, before optimization)
// for `spec` with `options`: 64 hex digits of SHA-256 over the module's
// bitcode, the spec's triple, CPU and features, the options, the LLVM
// version, kObjectCacheFormat and the build of hgc that runs (the device,
// inode, size and modification time of the executable or shared library
// holding hgc: a rebuild may change the optimization pipeline, which the
// bitcode does not show). The module must verify.
std::string ObjectCacheKey(const llvm::Module& module, const TargetSpec& spec,
                           const IrCompilerOptions& options);

// The cache key of a graph's list of objects: SHA-256 over `description`
// (whatever decides the graph's LLVM modules: the module as the passes
// left it, the entry graph and the compile options) and, as for
// ObjectCacheKey, the target, the options, the LLVM version,
// kObjectCacheFormat and the build of hgc.
std::string GraphObjectsKey(absl::string_view description,
                            const TargetSpec& spec,
                            const IrCompilerOptions& options);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LLVM_OBJECT_CACHE_H_
