// In-process JIT compilation of hgc's LLVM modules.
//
// Jit wraps llvm::orc::LLJIT; this header and jit.cc are the only places in
// hgc that know ORC exists (its API changes every LLVM release). A Jit:
//   - targets one TargetSpec (host CPU, ISA-capped) and generates code with
//     its IrCompiler's TargetMachine, so `--emit=asm` shows exactly what
//     runs;
//   - optimizes each added module at O2 (IrCompiler::Optimize), then hands
//     it to LLJIT as a ThreadSafeModule; code is generated on the first
//     Lookup of any symbol the module defines. AddModules instead
//     optimizes and generates code for several modules at once, on threads
//     with a TargetMachine each, and hands LLJIT the objects;
//   - resolves external references to absolute addresses the caller
//     registers (microkernel entry points, runtime helpers) and to a short
//     allow-list of libc functions LLVM may emit calls to (memcpy, memset);
//   - owns all generated code until it is destroyed;
//   - names every function it loads in perf's map when there is one
//     (JitOptions::perf_map, or HGC_PERF_MAP=1: support/perf_map.h).
// Creating several Jits concurrently is safe, and so are concurrent calls
// on one Jit.
#ifndef HGC_CODEGEN_LLVM_JIT_H_
#define HGC_CODEGEN_LLVM_JIT_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "codegen/llvm/ir_compiler.h"
#include "codegen/llvm/object_cache.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "support/perf_map.h"

namespace llvm {
namespace orc {
class LLJIT;
}  // namespace orc
}  // namespace llvm

namespace hgc {
namespace codegen {

// Options of a Jit.
struct JitOptions {
  // Optimization level and vector-width policy (shared with IrCompiler).
  IrCompilerOptions compiler;
  // When set, every added module is written after optimization to
  // <dump_dir>/<module name>.ll and .s (the `--dump-kernels` hook). The
  // directory must exist. Dumping costs a second codegen run per module.
  std::string dump_dir;
  // Where to name each loaded function for `perf` (support/perf_map.h);
  // null: PerfMap::FromEnvironment(), the HGC_PERF_MAP switch.
  PerfMap* perf_map = nullptr;
  // Where AddModules finds and keeps objects (object_cache.h); null:
  // ObjectCache::FromEnvironment(), the HGC_CACHE_DIR switch. Unused while
  // dump_dir is set, so that every module is optimized and dumped.
  ObjectCache* object_cache = nullptr;
};

// An external symbol made visible to JIT'd code at a fixed address.
struct AbsoluteSymbol {
  std::string name;     // as the IR declares it (no platform mangling)
  const void* address;  // function or data address in this process
};

// A module and the context it was built in (declared first, so that it is
// destroyed after the module).
struct ContextAndModule {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
};

// An LLJIT instance that owns the code compiled into it.
class Jit {
 public:
  // Creates a JIT for `spec`. FailedPrecondition when LLVM cannot target
  // the host, Internal on other LLVM failures.
  static absl::StatusOr<std::unique_ptr<Jit>> Create(TargetSpec spec,
                                                     JitOptions options = {});

  // Releases all compiled code; function pointers obtained from Lookup
  // dangle afterwards.
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  // The target the code is compiled for.
  const TargetSpec& spec() const { return spec_; }
  // The layout modules must use; AddModule sets it (and the triple) anyway.
  const llvm::DataLayout& data_layout() const { return data_layout_; }

  // Optimizes `module` and adds it to the JIT, taking ownership of it and of
  // the context it was built in (nothing else may use that context
  // afterwards). Internal when the module does not verify; AlreadyExists-
  // style LLVM errors (a symbol defined twice) come back as Internal with
  // LLVM's message.
  absl::Status AddModule(std::unique_ptr<llvm::LLVMContext> context,
                         std::unique_ptr<llvm::Module> module);

  // Optimizes `modules` and generates their code now, on up to
  // `num_threads` threads (the caller's and num_threads - 1 more, each with
  // a TargetMachine of its own; LLVM is thread-safe across contexts), then
  // adds the objects to the JIT. Takes ownership of every module and
  // context. The errors are AddModule's (the first module's in order wins),
  // and none of the modules is added when one fails to compile (an object
  // LLJIT then refuses, say for a symbol defined twice, leaves the ones
  // before it added).
  // References between the modules and to absolute symbols resolve at the
  // first Lookup, as for AddModule.
  absl::Status AddModules(std::vector<ContextAndModule> modules,
                          int num_threads);

  // Adds objects `objects` (an earlier AddModules' code, from the object
  // cache), counted in objects_from_cache(). Errors as AddModules'.
  absl::Status AddObjects(const std::vector<std::string>& objects);

  // Makes each symbol resolvable from modules added before (not yet
  // compiled) or after. Defining a name twice is an error (Internal).
  absl::Status DefineAbsoluteSymbols(
      const std::vector<AbsoluteSymbol>& symbols);

  // The address of `name` (a function or global defined by an added module
  // or registered as absolute), compiling its module first if needed.
  // NotFound when no added module defines it; Internal when compilation
  // fails (e.g. an unresolved external).
  absl::StatusOr<void*> Lookup(absl::string_view name);

  // The object cache AddModules uses (null: none), and how many of the
  // objects it added came from it and how many it compiled.
  const ObjectCache* object_cache() const { return object_cache_; }
  int objects_from_cache() const { return objects_from_cache_; }
  int objects_compiled() const { return objects_compiled_; }
  // The object cache keys of the modules the last AddModules added, in
  // order; empty without a cache or when a module had none (one that does
  // not verify).
  std::vector<std::string> object_keys() const {
    absl::MutexLock lock(&keys_mu_);
    return object_keys_;
  }

  // Lookup cast to a function pointer type, e.g.
  //   HGC_ASSIGN_OR_RETURN(StepFn fn, jit->LookupFunction<StepFn>("step0"));
  template <typename Fn>
  absl::StatusOr<Fn> LookupFunction(absl::string_view name) {
    absl::StatusOr<void*> address = Lookup(name);
    if (!address.ok()) return address.status();
    return reinterpret_cast<Fn>(*address);
  }

 private:
  Jit(TargetSpec spec, JitOptions options);

  // Writes the optimized module and its assembly under options_.dump_dir.
  absl::Status Dump(IrCompiler& compiler, const llvm::Module& module);

  // `module`'s object from the object cache, or nullopt (no cache, a
  // miss, or a module that does not verify). Sets `key` to the module's
  // key when there is a cache and the module verifies.
  std::optional<std::string> LoadCachedObject(llvm::Module& module,
                                              std::string& key);

  // Optimizes `module`, dumps it when asked, and returns its object code,
  // stored in the object cache under `key` unless that is empty.
  absl::StatusOr<std::string> CompileModule(IrCompiler& compiler,
                                            llvm::Module& module,
                                            const std::string& key);

  class PerfMapListener;

  TargetSpec spec_;
  JitOptions options_;
  llvm::DataLayout data_layout_;
  ObjectCache* object_cache_ = nullptr;
  std::atomic<int> objects_from_cache_{0};
  std::atomic<int> objects_compiled_{0};
  mutable absl::Mutex keys_mu_;
  std::vector<std::string> object_keys_ ABSL_GUARDED_BY(keys_mu_);
  // Errors ORC reports asynchronously (a module failing to materialize),
  // held until the Lookup that triggered them returns them.
  absl::Mutex errors_mu_;
  std::string session_errors_ ABSL_GUARDED_BY(errors_mu_);
  // IrCompiler's TargetMachine optimizes (AddModule) and generates code (the
  // first Lookup of a module; the caller's share of AddModules, whose other
  // threads have TargetMachines of their own) and is single-threaded.
  absl::Mutex compiler_mu_;
  std::unique_ptr<IrCompiler> compiler_ ABSL_GUARDED_BY(compiler_mu_);
  // Registered with the linking layer when there is a perf map; outlives it.
  std::unique_ptr<PerfMapListener> perf_map_listener_;
  // Last, so it is destroyed first: its teardown may still report errors
  // and it holds the compiler's TargetMachine.
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LLVM_JIT_H_
