// The only ORC-aware file in hgc (LLVM 14 API: JITEvaluatedSymbol,
// JITTargetAddress, LLJIT::lookup returning a symbol; LLVM 15+ return
// ExecutorAddr).
#include "codegen/llvm/jit.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "codegen/llvm/llvm_util.h"
#include "llvm/ADT/Triple.h"
#include "llvm/ExecutionEngine/JITEventListener.h"
#include "llvm/ExecutionEngine/JITSymbol.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/IRCompileLayer.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/ExecutionEngine/RuntimeDyld.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Object/SymbolSize.h"
#include "llvm/Support/MemoryBuffer.h"
#include "support/perf_map.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

// libc functions LLVM itself may emit calls to: loop idiom recognition
// turns copy and fill loops into memcpy/memmove/memset, and f16 conversions
// fall back to compiler-rt/libgcc helpers on targets without F16C; `pow`
// is libm's powf, one call per lane of llvm.pow, which LLVM rewrites to
// exp2f, exp10f or ldexpf for a base of 2 or 10. Nothing
// else from the process is visible, so a stray reference (say, to `expf`
// from a scalar llvm.exp) fails loudly at lookup instead of silently
// calling libm.
bool IsAllowedProcessSymbol(llvm::StringRef name) {
  static constexpr const char* kAllowed[] = {
      "memcpy",        "memmove",        "memset",        "__truncsfhf2",
      "__extendhfsf2", "__gnu_f2h_ieee", "__gnu_h2f_ieee", "powf",
      "exp2f",         "exp10f",         "ldexpf"};
  for (const char* allowed : kAllowed) {
    if (name == allowed) return true;
  }
  return false;
}

// Compiles with the IrCompiler's TargetMachine, so the JIT runs exactly the
// code --emit=asm prints and builds no TargetMachine of its own (each costs
// ~1 ms with its subtarget). TargetMachine is single-threaded: compiles take
// the same lock as IrCompiler::Optimize.
class LockedCompiler : public llvm::orc::SimpleCompiler {
 public:
  LockedCompiler(absl::Mutex* mu, llvm::TargetMachine* tm)
      : SimpleCompiler(*tm), mu_(mu) {}

  llvm::Expected<CompileResult> operator()(llvm::Module& module) override {
    absl::MutexLock lock(mu_);
    return SimpleCompiler::operator()(module);
  }

 private:
  absl::Mutex* mu_;
};

}  // namespace

// Names every function of each object the linking layer loads in a perf
// map, at the address it was loaded to (the object RuntimeDyld prepares
// for debuggers has its sections at their load addresses).
class Jit::PerfMapListener : public llvm::JITEventListener {
 public:
  explicit PerfMapListener(PerfMap* map) : map_(map) {}

  void notifyObjectLoaded(
      ObjectKey, const llvm::object::ObjectFile& object,
      const llvm::RuntimeDyld::LoadedObjectInfo& info) override {
    llvm::object::OwningBinary<llvm::object::ObjectFile> loaded =
        info.getObjectForDebug(object);
    if (loaded.getBinary() == nullptr) return;
    for (const auto& [symbol, size] :
         llvm::object::computeSymbolSizes(*loaded.getBinary())) {
      llvm::Expected<llvm::object::SymbolRef::Type> type = symbol.getType();
      llvm::Expected<llvm::StringRef> name = symbol.getName();
      llvm::Expected<uint64_t> address = symbol.getAddress();
      const bool function =
          type && *type == llvm::object::SymbolRef::ST_Function;
      if (function && name && address && size > 0) {
        map_->Record(reinterpret_cast<const void*>(*address), size,
                     absl::string_view(name->data(), name->size()));
      }
      if (!type) llvm::consumeError(type.takeError());
      if (!name) llvm::consumeError(name.takeError());
      if (!address) llvm::consumeError(address.takeError());
    }
  }

 private:
  PerfMap* map_;
};

absl::StatusOr<std::unique_ptr<Jit>> Jit::Create(TargetSpec spec,
                                                 JitOptions options) {
  HGC_RETURN_IF_ERROR(InitializeNativeTarget());
  std::unique_ptr<Jit> jit(new Jit(std::move(spec), std::move(options)));
  const TargetSpec& s = jit->spec_;
  HGC_ASSIGN_OR_RETURN(std::unique_ptr<IrCompiler> compiler,
                       IrCompiler::Create(s, jit->options_.compiler));
  llvm::TargetMachine* tm = &compiler->target_machine();
  jit->data_layout_ = compiler->data_layout();
  {
    absl::MutexLock lock(&jit->compiler_mu_);
    jit->compiler_ = std::move(compiler);
  }

  // LLJIT insists on a JITTargetMachineBuilder; with the data layout and
  // the compile function given it never builds a TargetMachine from it.
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(s.triple)};
  jtmb.setCPU(s.cpu);
  jtmb.addFeatures(s.llvm_features ? *s.llvm_features : s.features);
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeModel(llvm::CodeModel::Small);
  absl::Mutex* mu = &jit->compiler_mu_;
  llvm::orc::LLJITBuilder builder;
  PerfMap* perf_map = jit->options_.perf_map != nullptr
                          ? jit->options_.perf_map
                          : PerfMap::FromEnvironment();
  if (perf_map != nullptr) {
    // LLJIT's own choice of linker on x86-64 ELF, plus the listener.
    jit->perf_map_listener_ = std::make_unique<PerfMapListener>(perf_map);
    PerfMapListener* listener = jit->perf_map_listener_.get();
    builder.setObjectLinkingLayerCreator(
        [listener](llvm::orc::ExecutionSession& session, const llvm::Triple&)
            -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
          auto layer = std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
              session,
              [] { return std::make_unique<llvm::SectionMemoryManager>(); });
          layer->registerJITEventListener(*listener);
          return layer;
        });
  }
  HGC_ASSIGN_OR_RETURN(
      jit->jit_,
      ToStatusOr(builder.setJITTargetMachineBuilder(std::move(jtmb))
                     .setDataLayout(jit->data_layout_)
                     .setCompileFunctionCreator(
                         [mu, tm](llvm::orc::JITTargetMachineBuilder)
                             -> llvm::Expected<std::unique_ptr<
                                 llvm::orc::IRCompileLayer::IRCompiler>> {
                           return std::make_unique<LockedCompiler>(mu, tm);
                         })
                     .create(),
                 "creating the LLVM JIT"));

  // ORC reports why a module failed to materialize (say, an unresolved
  // external) through the session's reporter, which by default prints to
  // stderr, while the lookup itself only says "failed to materialize".
  // Keep the reason for Lookup's Status instead.
  Jit* self = jit.get();
  jit->jit_->getExecutionSession().setErrorReporter([self](llvm::Error err) {
    std::string message = llvm::toString(std::move(err));
    absl::MutexLock lock(&self->errors_mu_);
    if (!self->session_errors_.empty()) self->session_errors_ += "; ";
    self->session_errors_ += message;
  });

  HGC_ASSIGN_OR_RETURN(
      auto generator,
      ToStatusOr(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                     jit->data_layout_.getGlobalPrefix(),
                     [](const llvm::orc::SymbolStringPtr& name) {
                       return IsAllowedProcessSymbol(*name);
                     }),
                 "exposing libc to the JIT"));
  jit->jit_->getMainJITDylib().addGenerator(std::move(generator));
  return jit;
}

Jit::Jit(TargetSpec spec, JitOptions options)
    : spec_(std::move(spec)), options_(std::move(options)), data_layout_("") {
  if (options_.dump_dir.empty()) {
    object_cache_ = options_.object_cache != nullptr
                        ? options_.object_cache
                        : ObjectCache::FromEnvironment();
  }
}

// LLJIT's destructor ends the session and frees the code memory.
Jit::~Jit() = default;

absl::Status Jit::AddModule(std::unique_ptr<llvm::LLVMContext> context,
                            std::unique_ptr<llvm::Module> module) {
  if (context == nullptr || module == nullptr) {
    return absl::InvalidArgumentError("Jit::AddModule: null module");
  }
  if (&module->getContext() != context.get()) {
    return absl::InvalidArgumentError(
        "Jit::AddModule: the module was not built in the given context");
  }
  // Own both at once: the ThreadSafeModule destroys the module before its
  // context on every path, whatever order the caller's temporaries die in.
  llvm::orc::ThreadSafeModule tsm(std::move(module), std::move(context));
  llvm::Module& m = *tsm.getModuleUnlocked();
  {
    absl::MutexLock lock(&compiler_mu_);
    HGC_RETURN_IF_ERROR(compiler_->Optimize(m));
    if (!options_.dump_dir.empty()) HGC_RETURN_IF_ERROR(Dump(*compiler_, m));
  }
  const std::string name = m.getName().str();
  return ToStatus(jit_->addIRModule(std::move(tsm)),
                  absl::StrCat("adding module '", name, "' to the JIT"));
}

std::optional<std::string> Jit::LoadCachedObject(llvm::Module& module,
                                                 std::string& key) {
  // The key needs bitcode, which only a module that verifies has; one
  // that does not goes on to Optimize, which says why.
  if (object_cache_ == nullptr || llvm::verifyModule(module)) {
    return std::nullopt;
  }
  key = ObjectCacheKey(module, spec_, options_.compiler);
  std::optional<std::string> object = object_cache_->Load(key);
  if (object.has_value()) ++objects_from_cache_;
  return object;
}

absl::StatusOr<std::string> Jit::CompileModule(IrCompiler& compiler,
                                               llvm::Module& module,
                                               const std::string& key) {
  HGC_RETURN_IF_ERROR(compiler.Optimize(module));
  if (!options_.dump_dir.empty()) HGC_RETURN_IF_ERROR(Dump(compiler, module));
  HGC_ASSIGN_OR_RETURN(std::string object, compiler.CompileToObject(module));
  ++objects_compiled_;
  // A failed store costs the next process a compile, nothing more.
  if (!key.empty()) object_cache_->Store(key, object).IgnoreError();
  return object;
}

absl::Status Jit::AddModules(std::vector<ContextAndModule> modules,
                             int num_threads) {
  if (modules.empty()) return absl::OkStatus();
  for (const ContextAndModule& m : modules) {
    if (m.context == nullptr || m.module == nullptr) {
      return absl::InvalidArgumentError("Jit::AddModules: null module");
    }
    if (&m.module->getContext() != m.context.get()) {
      return absl::InvalidArgumentError(
          "Jit::AddModules: a module was not built in the given context");
    }
  }
  std::vector<absl::StatusOr<std::string>> objects(
      modules.size(), absl::InternalError("not compiled"));
  // The cache first, on this thread: threads (and the TargetMachine each
  // builds) are only worth starting for the modules it does not have.
  std::vector<std::string> keys(modules.size());
  std::vector<size_t> to_compile;
  for (size_t i = 0; i < modules.size(); ++i) {
    std::optional<std::string> cached =
        LoadCachedObject(*modules[i].module, keys[i]);
    if (cached.has_value()) {
      objects[i] = *std::move(cached);
    } else {
      to_compile.push_back(i);
    }
  }
  // Workers take the next module until none is left, so a worker that
  // could not build its TargetMachine leaves its share to the others.
  std::atomic<size_t> next{0};
  auto work = [&](IrCompiler& compiler) {
    for (size_t n = next++; n < to_compile.size(); n = next++) {
      const size_t i = to_compile[n];
      objects[i] = CompileModule(compiler, *modules[i].module, keys[i]);
    }
  };
  const int helpers =
      std::clamp<int>(num_threads, 1,
                      std::max<int>(1, static_cast<int>(to_compile.size()))) -
      1;
  std::vector<std::thread> threads;
  threads.reserve(helpers);
  for (int t = 0; t < helpers; ++t) {
    // A thread the system refuses (pids or memory limits) leaves its share
    // to the others; no exception leaves this function.
    try {
      threads.emplace_back([&] {
        absl::StatusOr<std::unique_ptr<IrCompiler>> compiler =
            IrCompiler::Create(spec_, options_.compiler);
        if (compiler.ok()) work(**compiler);
      });
    } catch (const std::system_error&) {
      break;
    }
  }
  if (!to_compile.empty()) {
    absl::MutexLock lock(&compiler_mu_);
    work(*compiler_);
  }
  for (std::thread& t : threads) t.join();

  // Nothing is added unless every module compiled.
  for (const absl::StatusOr<std::string>& object : objects) {
    HGC_RETURN_IF_ERROR(object.status());
  }
  for (size_t i = 0; i < modules.size(); ++i) {
    const std::string name = modules[i].module->getName().str();
    HGC_RETURN_IF_ERROR(
        ToStatus(jit_->addObjectFile(
                     llvm::MemoryBuffer::getMemBufferCopy(*objects[i], name)),
                 absl::StrCat("adding module '", name, "' to the JIT")));
  }
  const bool all_keyed =
      std::none_of(keys.begin(), keys.end(),
                   [](const std::string& key) { return key.empty(); });
  absl::MutexLock lock(&keys_mu_);
  object_keys_ = all_keyed ? std::move(keys) : std::vector<std::string>();
  return absl::OkStatus();
}

absl::Status Jit::AddObjects(const std::vector<std::string>& objects) {
  for (size_t i = 0; i < objects.size(); ++i) {
    const std::string name = absl::StrCat("cached.", i);
    HGC_RETURN_IF_ERROR(
        ToStatus(jit_->addObjectFile(
                     llvm::MemoryBuffer::getMemBufferCopy(objects[i], name)),
                 absl::StrCat("adding object '", name, "' to the JIT")));
    ++objects_from_cache_;
  }
  return absl::OkStatus();
}

absl::Status Jit::DefineAbsoluteSymbols(
    const std::vector<AbsoluteSymbol>& symbols) {
  llvm::orc::SymbolMap map;
  for (const AbsoluteSymbol& symbol : symbols) {
    map[jit_->mangleAndIntern(symbol.name)] = llvm::JITEvaluatedSymbol(
        llvm::pointerToJITTargetAddress(symbol.address),
        llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Absolute);
  }
  return ToStatus(jit_->getMainJITDylib().define(
                      llvm::orc::absoluteSymbols(std::move(map))),
                  "defining absolute symbols");
}

absl::StatusOr<void*> Jit::Lookup(absl::string_view name) {
  const llvm::StringRef ref(name.data(), name.size());
  llvm::Expected<llvm::JITEvaluatedSymbol> symbol = jit_->lookup(ref);
  if (symbol) {
    return llvm::jitTargetAddressToPointer<void*>(symbol->getAddress());
  }
  // "Symbols not found" naming `name` itself means nothing defines it; any
  // other failure (including a missing external while compiling the module
  // that defines `name`) is a codegen bug.
  absl::StatusCode code = absl::StatusCode::kInternal;
  std::string message;
  llvm::handleAllErrors(
      symbol.takeError(),
      [&](const llvm::orc::SymbolsNotFound& e) {
        for (const llvm::orc::SymbolStringPtr& s : e.getSymbols()) {
          if (*s == ref) code = absl::StatusCode::kNotFound;
        }
        message = e.message();
      },
      [&](const llvm::ErrorInfoBase& e) { message = e.message(); });
  {
    absl::MutexLock lock(&errors_mu_);
    if (!session_errors_.empty()) {
      absl::StrAppend(&message, " (", session_errors_, ")");
      session_errors_.clear();
    }
  }
  return absl::Status(
      code, absl::StrCat("JIT lookup of '", name, "' failed: ", message));
}

absl::Status Jit::Dump(IrCompiler& compiler, const llvm::Module& module) {
  const std::string base =
      absl::StrCat(options_.dump_dir, "/", module.getName().str());
  HGC_ASSIGN_OR_RETURN(std::string assembly, compiler.EmitAssembly(module));
  const std::pair<std::string, std::string> files[] = {
      {base + ".ll", IrCompiler::EmitLlvmIr(module)}, {base + ".s", assembly}};
  for (const auto& [path, text] : files) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.good()) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot write kernel dump '", path, "'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace codegen
}  // namespace hgc
