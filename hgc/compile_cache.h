// The in-process cache of compiled graphs behind hgc::Compile, CompileText
// and CompileFile (docs/cache.md): compiling a graph this process has
// compiled before, with the same options, costs a copy of its program
// instead of the passes and codegen.
//
// The key (CompileCacheKey) is the module as the printer writes it after
// verification, with every value name replaced by its order of first
// appearance (so "%x" and "%input" compile alike), the entry graph, the
// pipeline, the threads and threading, and the ISA cap with the CPU it
// applies to. hgc's and LLVM's versions cannot change within a process.
//
// What is cached is what compiling leaves immutable: the generated code
// (shared, through the executable's code owner) and the program, with a
// private copy of the constant slots the init steps use. Each hit gets an
// Executable of its own: its own thread pool and scratch, the constant
// slots of const parameters and the all-zero slots of the init steps (their
// results, as compiled) allocated afresh as zero, the other slots of the
// init steps copied (SetConstants may rewrite them), and the literal
// constants only the main steps read shared, as nothing writes them.
//
// Concurrent compiles of one key compile once: the others wait for it and
// then hit (or, if it failed, compile in turn). The cache keeps the most
// recently used entries, at most Limits::max_entries of them holding at
// most Limits::max_bytes of constants. HGC_COMPILE_CACHE=0 turns the
// process's cache off.
#ifndef HGC_HGC_COMPILE_CACHE_H_
#define HGC_HGC_COMPILE_CACHE_H_

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "runtime/executable.h"
#include "runtime/threading.h"

namespace hgc {

// What enters the key besides the module.
struct CompileCacheKeyOptions {
  std::string entry;     // the entry graph's name
  std::string pipeline;  // as given to the session
  int num_threads = 1;
  Threading threading = Threading::kOwnPool;
};

// The key of compiling `module` (which must verify) with `options`.
std::string CompileCacheKey(const Module& module,
                            const CompileCacheKeyOptions& options);

// Whether every byte of `tensor` is zero. The pages of a large tensor that
// were never written are not read (reading would fault each one in):
// /proc/self/pagemap says which they are, as Tensor::Create's memory is
// private and anonymous. Without pagemap, every byte is compared.
bool IsAllZero(const Tensor& tensor);

// `text` with each value name ('%' and an identifier or integer) outside
// string literals replaced by "%" and its order of first appearance.
std::string NormalizeValueNames(absl::string_view text);

class CompileCache {
 public:
  struct Limits {
    int max_entries = 64;                   // 0: cache nothing
    int64_t max_bytes = int64_t{256} << 20;  // cached constants, all entries
  };
  struct Counters {
    int64_t hits = 0;
    int64_t misses = 0;  // compiles run
    int64_t waits = 0;   // lookups that waited for a compile in flight
    int64_t evictions = 0;
    int64_t entries = 0;
    int64_t bytes = 0;
  };
  using CompileFn =
      std::function<absl::StatusOr<std::unique_ptr<Executable>>()>;

  explicit CompileCache(Limits limits) : limits_(limits) {}
  CompileCache(const CompileCache&) = delete;
  CompileCache& operator=(const CompileCache&) = delete;

  // The process's cache, with the default limits, or none
  // (max_entries 0) when HGC_COMPILE_CACHE is "0".
  static CompileCache& Global();

  bool enabled() const { return limits_.max_entries > 0; }

  // An executable of the program cached under `key`, or of what `compile`
  // returns (then cached). `compile` runs at most once at a time per key;
  // its error is returned and nothing is cached. A hit's executable runs
  // on `num_threads` threads of kind `threading`: the key's, which the
  // program was compiled for.
  absl::StatusOr<std::unique_ptr<Executable>> GetOrCompile(
      const std::string& key, int num_threads, Threading threading,
      const CompileFn& compile);

  Counters counters() const;
  // Drops every entry (executables made from them keep their code).
  void Clear();

 private:
  struct Snapshot;
  struct InFlight {
    bool done = false;
  };
  struct Entry {
    std::shared_ptr<const Snapshot> snapshot;
    std::list<std::string>::iterator lru_position;
  };

  // Adds `snapshot` under `key` and evicts the least recently used
  // entries beyond the limits.
  void Insert(const std::string& key, std::shared_ptr<const Snapshot> snapshot)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Limits limits_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);  // most recent first
  absl::flat_hash_map<std::string, std::shared_ptr<InFlight>> in_flight_
      ABSL_GUARDED_BY(mu_);
  Counters counters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace hgc

#endif  // HGC_HGC_COMPILE_CACHE_H_
