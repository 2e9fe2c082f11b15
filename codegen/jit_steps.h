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
#include "codegen/lower_state.h"
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

// Prints the optimized modules for --emit=llvm / --emit=asm (for
// `emit_spec`'s CPU when given; printing compiles on one thread, so there
// is one), then creates `jit` for `spec`, JIT-compiles the modules on up to
// `num_threads` threads and binds the entry points of `program`'s steps.
absl::Status JitSteps(std::vector<ContextAndModule> modules,
                      const CompileOptions& options, int num_threads,
                      const TargetSpec& spec,
                      std::optional<TargetSpec> emit_spec,
                      std::unique_ptr<Jit>& jit, Program& program);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_JIT_STEPS_H_
