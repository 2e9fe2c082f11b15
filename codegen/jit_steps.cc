#include "codegen/jit_steps.h"

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "codegen/llvm/ir_compiler.h"
#include "codegen/runtime_helpers.h"
#include "ir/printer.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "support/cpu_features.h"
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

namespace {

std::vector<AbsoluteSymbol> RuntimeHelpers() {
  std::vector<AbsoluteSymbol> helpers;
  for (const RuntimeHelperSymbol& h : kRuntimeHelperSymbols) {
    helpers.push_back({h.name, h.address});
  }
  return helpers;
}

}  // namespace

int CompileThreads(const CompileOptions& options) {
  if (options.llvm_ir != nullptr || options.assembly != nullptr) return 1;
  if (options.compile_threads > 0) return options.compile_threads;
  return static_cast<int>(
      std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 8));
}

CachedGraph FindCachedGraph(const Module& module, const Graph& entry,
                            const CompileOptions& options, int compile_threads,
                            const TargetSpec& spec, bool load) {
  CachedGraph cached;
  // Printing or dumping the code needs the modules.
  if (options.llvm_ir != nullptr || options.assembly != nullptr ||
      !options.dump_dir.empty()) {
    return cached;
  }
  cached.cache = ObjectCache::FromEnvironment();
  if (cached.cache == nullptr) return cached;
  // Value names as printed: they name the step functions.
  cached.key = GraphObjectsKey(
      absl::StrCat(PrintModule(module), "\n@", entry.name(), " threads ",
                   options.num_threads, " ",
                   static_cast<int>(options.threading), " compile threads ",
                   compile_threads, " isa ", options.max_isa, " ",
                   IsaName(MaxIsa()), " emit ", options.emit_target_cpu),
      spec, IrCompilerOptions());
  if (!load) return cached;
  std::optional<ObjectCache::ObjectList> list =
      cached.cache->LoadObjectList(cached.key);
  if (!list.has_value()) return cached;
  cached.check = list->check;
  for (const std::string& key : list->objects) {
    std::optional<std::string> object = cached.cache->Load(key);
    if (!object.has_value()) {
      cached.objects.clear();
      return cached;
    }
    cached.objects.push_back(*std::move(object));
  }
  return cached;
}

bool IsCachedGraphMismatch(const absl::Status& status) {
  return absl::IsAborted(status);
}

std::string ProgramFingerprint(const Program& program) {
  std::string text =
      absl::StrCat(program.arena_bytes, " ", program.init_arena_bytes);
  for (const Tensor& slot : program.constants) {
    absl::StrAppend(&text, " ", slot.type().ToString());
  }
  for (const std::vector<Step>* steps : {&program.init_steps, &program.steps}) {
    for (const Step& step : *steps) {
      absl::StrAppend(&text, "\n", step.name, " ",
                      step.host     ? "host"
                      : step.shared ? "shared"
                                    : "code",
                      " ", step.on_caller, " ", step.kernels.size());
      for (const BufferRef& b : step.buffers) {
        absl::StrAppend(&text, " ", static_cast<int>(b.kind), ":", b.index, ":",
                        b.offset);
      }
    }
  }
  return absl::StrCat(absl::Hex(llvm::xxHash64(text), absl::kZeroPad16));
}

namespace {

// Adds `cached`'s objects to a new `jit` and binds `program`'s steps to
// them; Aborted (IsCachedGraphMismatch) when they were made for another
// program or lack a step.
absl::Status JitCachedObjects(const CachedGraph& cached, const TargetSpec& spec,
                              std::unique_ptr<Jit>& jit, Program& program) {
  if (ProgramFingerprint(program) != cached.check) {
    return absl::AbortedError("the cached objects are another program's");
  }
  HGC_ASSIGN_OR_RETURN(jit, Jit::Create(spec));
  HGC_RETURN_IF_ERROR(jit->DefineAbsoluteSymbols(RuntimeHelpers()));
  HGC_RETURN_IF_ERROR(jit->AddObjects(cached.objects));
  for (Step& step : program.steps) {
    if (step.host || step.shared) continue;
    absl::StatusOr<StepFn> fn = jit->LookupFunction<StepFn>(step.name);
    if (!fn.ok()) {
      return absl::AbortedError(absl::StrCat("the cached objects lack step @",
                                             step.name, ": ",
                                             fn.status().message()));
    }
    step.fn = *fn;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status JitSteps(std::vector<ContextAndModule> modules,
                      const CompileOptions& options, int num_threads,
                      const TargetSpec& spec,
                      std::optional<TargetSpec> emit_spec,
                      const CachedGraph& cached, std::unique_ptr<Jit>& jit,
                      Program& program) {
  if (cached.hit()) return JitCachedObjects(cached, spec, jit, program);
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
  HGC_RETURN_IF_ERROR(jit->DefineAbsoluteSymbols(RuntimeHelpers()));
  HGC_RETURN_IF_ERROR(jit->AddModules(std::move(modules), num_threads));
  for (Step& step : program.steps) {
    if (step.host || step.shared) continue;
    HGC_ASSIGN_OR_RETURN(step.fn, jit->LookupFunction<StepFn>(step.name));
  }
  // Only once every step is bound: a list is a promise that its objects
  // define them all. A failed store costs the next process the emission.
  std::vector<std::string> object_keys = jit->object_keys();
  if (cached.cache != nullptr && !object_keys.empty()) {
    cached.cache
        ->StoreObjectList(cached.key, {ProgramFingerprint(program),
                                       std::move(object_keys)})
        .IgnoreError();
  }
  return absl::OkStatus();
}

}  // namespace codegen
}  // namespace hgc
