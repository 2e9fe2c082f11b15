#include "codegen/llvm/llvm_util.h"

#include <mutex>

#include "absl/functional/function_ref.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/X86TargetParser.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetOptions.h"

namespace hgc {
namespace codegen {

absl::Status ToStatus(llvm::Error err, absl::string_view context,
                      absl::StatusCode code) {
  if (!err) return absl::OkStatus();
  // toString consumes the error (an unconsumed llvm::Error aborts in
  // assertion-enabled LLVM builds).
  std::string message = llvm::toString(std::move(err));
  if (context.empty()) return absl::Status(code, message);
  return absl::Status(code, absl::StrCat(context, ": ", message));
}

absl::Status VerifyModule(const llvm::Module& module) {
  std::string report;
  llvm::raw_string_ostream os(report);
  if (llvm::verifyModule(module, &os)) {
    os.flush();
    return absl::InternalError(absl::StrCat(
        "LLVM module '", module.getName().str(), "' is malformed: ", report));
  }
  return absl::OkStatus();
}

namespace {

// LLVM 14's loop strength reduction took a third of codegen time on the
// attention nests (12 of 31 ms in llc) and changed no measured run time:
// hgc's loops index with plain i64 arithmetic the isel folds into
// addressing modes anyway. LLVM has no per-TargetMachine switch for it,
// only the process-wide -disable-lsr option.
void DisableLoopStrengthReduction() {
  llvm::StringMap<llvm::cl::Option*>& options =
      llvm::cl::getRegisteredOptions();
  auto it = options.find("disable-lsr");
  if (it != options.end()) {
    static_cast<llvm::cl::opt<bool>*>(it->second)->setValue(true);
  }
}

// Registers the analyses a PassBuilder on `tm` with `tuning` needs, has
// `build` fill the module pass manager and runs it over `module`.
absl::Status RunModulePasses(llvm::Module& module, llvm::TargetMachine& tm,
                             const llvm::PipelineTuningOptions& tuning,
                             absl::FunctionRef<absl::Status(
                                 llvm::PassBuilder&, llvm::ModulePassManager&)>
                                 build) {
  // The analysis managers must be destroyed in reverse order of the proxies
  // that cross-reference them: declare them in the order LLVM's own tools do.
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&tm, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (absl::Status s = build(builder, mpm); !s.ok()) return s;
  mpm.run(module, mam);
  return absl::OkStatus();
}

}  // namespace

absl::Status InitializeNativeTarget() {
  // LLVM's target registry is a global; registering from two threads at
  // once races, so the first caller does it for everyone.
  static const absl::Status* status = [] {
    DisableLoopStrengthReduction();
    bool failed = llvm::InitializeNativeTarget() ||
                  llvm::InitializeNativeTargetAsmPrinter() ||
                  llvm::InitializeNativeTargetAsmParser();
    return new absl::Status(failed
                                ? absl::FailedPreconditionError(
                                      "LLVM has no native target for this host")
                                : absl::OkStatus());
  }();
  return *status;
}

llvm::Type* VectorOf(llvm::Type* elem, int width) {
  if (width == 1) return elem;
  return llvm::FixedVectorType::get(elem, width);
}

llvm::PointerType* PointerTo(llvm::Type* pointee) {
  return llvm::PointerType::get(pointee, 0);
}

int VectorWidth(llvm::Type* type) {
  if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(type)) {
    return static_cast<int>(v->getNumElements());
  }
  return 1;
}

llvm::Type* ElementType(llvm::Type* type) { return type->getScalarType(); }

llvm::Type* WithElementType(llvm::Type* like, llvm::Type* elem) {
  return VectorOf(elem, VectorWidth(like));
}

llvm::Type* IntTypeLike(llvm::Type* like, unsigned bits) {
  return WithElementType(like,
                         llvm::IntegerType::get(like->getContext(), bits));
}

llvm::Constant* F32Const(llvm::Type* like, double v) {
  // ConstantFP::get splats over vector types and rounds `v` to the element
  // type (float) with round-to-nearest-even.
  return llvm::ConstantFP::get(
      WithElementType(like, llvm::Type::getFloatTy(like->getContext())), v);
}

llvm::Constant* IntConst(llvm::Type* like, int64_t v) {
  return llvm::ConstantInt::get(like, static_cast<uint64_t>(v),
                                /*isSigned=*/true);
}

std::string PrintToString(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  os.flush();
  return text;
}

std::string PrintToString(const llvm::Value& value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  value.print(os);
  os.flush();
  return text;
}

std::string PrintToString(const llvm::Type& type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  os.flush();
  return text;
}

// ---------------------------------------------------------------------------
// LLVM 14 shims.
// ---------------------------------------------------------------------------

std::string HostTriple() { return llvm::sys::getProcessTriple(); }

std::string HostCpuName() { return llvm::sys::getHostCPUName().str(); }

llvm::StringMap<bool> HostCpuFeatures() {
  // LLVM 14 fills a map and returns false when detection is unsupported;
  // LLVM 19 returns the map instead.
  llvm::StringMap<bool> features;
  if (!llvm::sys::getHostCPUFeatures(features)) features.clear();
  return features;
}

std::optional<llvm::StringMap<bool>> NamedCpuFeatures(const std::string& cpu) {
  // parseArchX86 first: getFeaturesForCPU asserts on an unknown name.
  if (llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) == llvm::X86::CK_None) {
    return std::nullopt;
  }
  llvm::SmallVector<llvm::StringRef, 64> names;
  llvm::X86::getFeaturesForCPU(cpu, names);
  llvm::StringMap<bool> features;
  for (llvm::StringRef name : names) features[name] = true;
  return features;
}

std::vector<std::string> FeaturesNotImpliedByCpu(
    const std::string& triple, const std::string& cpu,
    const std::vector<std::string>& features) {
  std::string error;
  const llvm::Target* target = nullptr;
  if (InitializeNativeTarget().ok()) {
    target = llvm::TargetRegistry::lookupTarget(triple, error);
  }
  if (target == nullptr) return features;
  std::unique_ptr<llvm::MCSubtargetInfo> cpu_info(
      target->createMCSubtargetInfo(triple, cpu, ""));
  if (cpu_info == nullptr) return features;
  std::vector<std::string> out;
  for (const std::string& f : features) {
    if (f.size() < 2) continue;
    // checkFeatures("-x") also demands that everything x implies be off,
    // so ask about "+x" and compare with the sign we want.
    const bool cpu_has = cpu_info->checkFeatures("+" + f.substr(1));
    if (cpu_has != (f[0] == '+')) out.push_back(f);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(
    const std::string& triple, const std::string& cpu,
    const std::string& features, llvm::CodeGenOpt::Level level) {
  if (absl::Status s = InitializeNativeTarget(); !s.ok()) return s;
  std::string error;
  const llvm::Target* target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("no LLVM target for '", triple, "': ", error));
  }
  llvm::TargetOptions options;
  // PIC: JIT'd code may reference absolute symbols (microkernels, runtime
  // helpers) anywhere in the address space; PIC routes them through the GOT
  // instead of 32-bit displacements that RuntimeDyld could not resolve.
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, options, llvm::Reloc::PIC_, llvm::CodeModel::Small,
      level));
  if (tm == nullptr) {
    return absl::InternalError(absl::StrCat(
        "cannot create an LLVM TargetMachine for ", triple, " ", cpu));
  }
  return tm;
}

absl::Status RunDefaultPipeline(llvm::Module& module, llvm::TargetMachine& tm,
                                int opt_level, bool auto_vectorize) {
  if (opt_level <= 0) return absl::OkStatus();
  llvm::OptimizationLevel level = opt_level == 1 ? llvm::OptimizationLevel::O1
                                  : opt_level == 2
                                      ? llvm::OptimizationLevel::O2
                                      : llvm::OptimizationLevel::O3;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = auto_vectorize;
  tuning.LoopInterleaving = auto_vectorize;
  tuning.SLPVectorization = auto_vectorize;
  return RunModulePasses(
      module, tm, tuning,
      [&](llvm::PassBuilder& builder, llvm::ModulePassManager& mpm) {
        mpm = builder.buildPerModuleDefaultPipeline(level);
        return absl::OkStatus();
      });
}

absl::Status RunEmittedCodePipeline(llvm::Module& module,
                                    llvm::TargetMachine& tm,
                                    bool auto_vectorize) {
  // Per function: scalar cleanup, then the loop passes that matter for
  // the emitters' loops (rotation, invariant hoisting, induction variable
  // simplification, which folds the masks of vectors that are whole, and
  // the unrolling of short constant-trip loops such as the prefetch
  // sequences), then CFG cleanup. No inliner: the module's functions call
  // only kernels and runtime helpers. One instcombine is enough: a second
  // and a third (after indvars, after unrolling) gave the same run time
  // for a tenth more compile time, instruction selection folding what
  // unrolling leaves.
  std::string pipeline =
      "function(sroa,early-cse,instcombine,simplifycfg,loop(loop-rotate),"
      "loop-mssa(licm),loop(indvars),loop-unroll<O2>,";
  if (auto_vectorize) pipeline += "loop-vectorize,slp-vectorizer,instcombine,";
  pipeline += "simplifycfg)";
  return RunModulePasses(
      module, tm, llvm::PipelineTuningOptions(),
      [&](llvm::PassBuilder& builder, llvm::ModulePassManager& mpm) {
        if (llvm::Error error = builder.parsePassPipeline(mpm, pipeline)) {
          return absl::InternalError(
              absl::StrCat("LLVM pass pipeline '", pipeline,
                           "': ", llvm::toString(std::move(error))));
        }
        return absl::OkStatus();
      });
}

absl::StatusOr<std::string> EmitMachineCode(llvm::Module& module,
                                            llvm::TargetMachine& tm,
                                            bool object) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  // Codegen still runs on the legacy pass manager in LLVM 14.
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(
          pm, os, nullptr,
          object ? llvm::CGFT_ObjectFile : llvm::CGFT_AssemblyFile)) {
    return absl::InternalError("the LLVM target cannot emit this file type");
  }
  pm.run(module);
  return std::string(buffer.begin(), buffer.end());
}

llvm::Value* EmitCvtNePs2Bf16(llvm::IRBuilder<>& b, llvm::Value* x) {
  // LLVM 14 types the result <N x i16>; LLVM 17 changed it to <N x bfloat>.
  if (!ElementType(x->getType())->isFloatTy()) return nullptr;
  switch (VectorWidth(x->getType())) {
    case 16:
      return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512bf16_cvtneps2bf16_512,
                               {}, {x});
    case 8:
      return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512bf16_cvtneps2bf16_256,
                               {}, {x});
    default:
      return nullptr;
  }
}

}  // namespace codegen
}  // namespace hgc
