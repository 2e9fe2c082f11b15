#include "codegen/jit_steps.h"

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "codegen/llvm/ir_compiler.h"
#include "codegen/runtime_helpers.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {

StepModules::StepModules(const std::string& prefix, int count)
    : modules_(std::max(count, 1)), sizes_(modules_.size(), 0) {
  for (size_t i = 0; i < modules_.size(); ++i) {
    modules_[i].context = std::make_unique<llvm::LLVMContext>();
    modules_[i].module = std::make_unique<llvm::Module>(
        absl::StrCat(prefix, modules_.size() > 1 ? absl::StrCat(".", i) : ""),
        *modules_[i].context);
  }
}

void StepModules::Next(LowerState& state) {
  if (current_ >= 0) sizes_[current_] = InstructionCount(current_);
  current_ = static_cast<int>(std::min_element(sizes_.begin(), sizes_.end()) -
                              sizes_.begin());
  state.context = modules_[current_].context.get();
  state.module = modules_[current_].module.get();
}

std::vector<ContextAndModule> StepModules::Take() {
  std::vector<ContextAndModule> result;
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (InstructionCount(i) > 0) result.push_back(std::move(modules_[i]));
  }
  modules_.clear();
  return result;
}

size_t StepModules::InstructionCount(size_t i) const {
  size_t count = 0;
  for (const llvm::Function& f : *modules_[i].module) {
    count += f.getInstructionCount();
  }
  return count;
}

int CompileThreads(const CompileOptions& options) {
  if (options.llvm_ir != nullptr || options.assembly != nullptr) return 1;
  if (options.compile_threads > 0) return options.compile_threads;
  return static_cast<int>(
      std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 8));
}

absl::Status JitSteps(std::vector<ContextAndModule> modules,
                      const CompileOptions& options, int num_threads,
                      const TargetSpec& spec,
                      std::optional<TargetSpec> emit_spec,
                      std::unique_ptr<Jit>& jit, Program& program) {
  if (modules.empty()) {
    if (options.llvm_ir != nullptr) {
      *options.llvm_ir = "; no LLVM step functions\n";
    }
    return absl::OkStatus();
  }
  if (options.llvm_ir != nullptr || options.assembly != nullptr) {
    HGC_ASSIGN_OR_RETURN(
        auto compiler,
        IrCompiler::Create(emit_spec ? *std::move(emit_spec) : spec));
    if (options.llvm_ir) options.llvm_ir->clear();
    if (options.assembly) options.assembly->clear();
    for (const ContextAndModule& m : modules) {
      std::unique_ptr<llvm::Module> clone = llvm::CloneModule(*m.module);
      HGC_RETURN_IF_ERROR(compiler->Optimize(*clone));
      if (options.llvm_ir) {
        *options.llvm_ir += IrCompiler::EmitLlvmIr(*clone);
      }
      if (options.assembly) {
        HGC_ASSIGN_OR_RETURN(std::string text, compiler->EmitAssembly(*clone));
        *options.assembly += text;
      }
    }
  }
  JitOptions jit_options;
  jit_options.dump_dir = options.dump_dir;
  HGC_ASSIGN_OR_RETURN(jit, Jit::Create(spec, std::move(jit_options)));
  std::vector<AbsoluteSymbol> helpers;
  for (const RuntimeHelperSymbol& h : kRuntimeHelperSymbols) {
    helpers.push_back({h.name, h.address});
  }
  HGC_RETURN_IF_ERROR(jit->DefineAbsoluteSymbols(helpers));
  HGC_RETURN_IF_ERROR(jit->AddModules(std::move(modules), num_threads));
  for (Step& step : program.steps) {
    if (step.host || step.shared) continue;
    HGC_ASSIGN_OR_RETURN(step.fn, jit->LookupFunction<StepFn>(step.name));
  }
  return absl::OkStatus();
}

}  // namespace codegen
}  // namespace hgc
