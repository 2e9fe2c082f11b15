// The last stage of Compile: the LLVM modules the steps are emitted into,
// their IR printed when asked (--emit=llvm / --emit=asm) and JIT-compiled
// on several threads, and the steps bound to their entry points.
#ifndef HGC_CODEGEN_JIT_STEPS_H_
#define HGC_CODEGEN_JIT_STEPS_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/compile.h"
#include "codegen/llvm/ir_compiler.h"
#include "codegen/llvm/jit.h"
#include "codegen/llvm/object_cache.h"
#include "codegen/lower_state.h"
#include "ir/graph.h"
#include "runtime/executable.h"

namespace hgc {
namespace codegen {

// The modules the steps are emitted into, one per compile thread, each in
// a context of its own so that they optimize and compile in parallel. Each
// op goes to the module with the least code so far.
class StepModules {
 public:
  StepModules(const std::string& prefix, int count);

  // Points `state` at the module the next op's steps go to.
  void Next(LowerState& state);

  // The modules that hold code.
  std::vector<ContextAndModule> Take();

 private:
  size_t InstructionCount(size_t i) const;

  std::vector<ContextAndModule> modules_;
  std::vector<size_t> sizes_;  // instructions, as of the last Next
  int current_ = -1;           // the module Next chose last
};

// Threads that optimize and generate code: options.compile_threads, or
// one per hardware thread up to 8; one when the text is printed.
int CompileThreads(const CompileOptions& options);

// A graph's objects in the object cache (docs/cache.md): compiling the
// same module, entry graph and options for the same target with the same
// build of hgc and LLVM gives the same LLVM modules, so a list of their
// object keys, stored under a key of all that, lets a later process skip
// emitting them.
struct CachedGraph {
  ObjectCache* cache = nullptr;  // null: none in use, or code is printed
  std::string key;               // the list's key, with a cache
  // Every object of the list, loaded, and its check (ProgramFingerprint
  // of the program the objects were made for); empty on a miss.
  std::vector<std::string> objects;
  std::string check;
  bool hit() const { return !objects.empty(); }
};

// Looks `entry` of `module` (as the passes left it), compiled with
// `options` on `compile_threads` threads for `spec`, up in the process's
// object cache (ObjectCache::FromEnvironment), loading the objects when
// `load` is set. A list naming an object the cache lacks is a miss.
CachedGraph FindCachedGraph(const Module& module, const Graph& entry,
                            const CompileOptions& options, int compile_threads,
                            const TargetSpec& spec, bool load);

// The error JitSteps returns when `cached` objects were made for another
// program than the one lowered now, or lack a step's function.
bool IsCachedGraphMismatch(const absl::Status& status);

// A name for what the step code assumes of `program`: each step's name,
// kind, buffers and number of kernels, the constant slots and the arena.
// A lowering that names or places anything otherwise gives another.
std::string ProgramFingerprint(const Program& program);

// Prints the optimized modules for --emit=llvm / --emit=asm (for
// `emit_spec`'s CPU when given; printing compiles on one thread, so there
// is one), then creates `jit` for `spec`, JIT-compiles the modules on up to
// `num_threads` threads and binds the entry points of `program`'s steps.
// On a hit of `cached`, adds its objects instead of `modules` (there are
// none); otherwise stores the list of the objects compiled under its key.
absl::Status JitSteps(std::vector<ContextAndModule> modules,
                      const CompileOptions& options, int num_threads,
                      const TargetSpec& spec,
                      std::optional<TargetSpec> emit_spec,
                      const CachedGraph& cached, std::unique_ptr<Jit>& jit,
                      Program& program);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_JIT_STEPS_H_
