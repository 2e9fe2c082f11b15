#include "codegen/llvm/ir_compiler.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "codegen/llvm/llvm_util.h"
#include "llvm/IR/Function.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

// A feature that only ISA families at or above `min_isa` may use.
struct GatedFeature {
  const char* name;
  Isa min_isa;
};

// The cap ladder in LLVM feature names. Anything not listed is below
// AVX-512 (SSE, AVX2, FMA, F16C, BMI, ...) and always kept (a cap of
// `none` keeps them too: it only turns the microkernels off). The Ice Lake
// era extensions sit with _fp16 because the machines hgc's lower families
// stand for (Skylake-SP, Cascade Lake, Cooper Lake) lack them: a capped
// target must not emit an instruction the emulated machine would fault on.
constexpr GatedFeature kGatedFeatures[] = {
    {"avx512f", Isa::kAvx512Core},
    {"avx512bw", Isa::kAvx512Core},
    {"avx512vl", Isa::kAvx512Core},
    {"avx512dq", Isa::kAvx512Core},
    {"avx512cd", Isa::kAvx512Core},
    {"avx512vnni", Isa::kAvx512CoreVnni},
    {"avx512bf16", Isa::kAvx512CoreBf16},
    {"avx512fp16", Isa::kAvx512CoreFp16},
    {"avx512ifma", Isa::kAvx512CoreFp16},
    {"avx512vbmi", Isa::kAvx512CoreFp16},
    {"avx512vbmi2", Isa::kAvx512CoreFp16},
    {"avx512bitalg", Isa::kAvx512CoreFp16},
    {"avx512vpopcntdq", Isa::kAvx512CoreFp16},
    {"avx512vp2intersect", Isa::kAvx512CoreFp16},
    {"avxvnni", Isa::kAvx512CoreFp16},
    {"gfni", Isa::kAvx512CoreFp16},
    {"vaes", Isa::kAvx512CoreFp16},
    {"vpclmulqdq", Isa::kAvx512CoreFp16},
    {"amx-tile", Isa::kAvx512CoreAmx},
    {"amx-int8", Isa::kAvx512CoreAmx},
    {"amx-bf16", Isa::kAvx512CoreAmx},
    // Xeon Phi only; no hgc family includes them.
    {"avx512er", Isa::kAvx512CoreAmx},
    {"avx512pf", Isa::kAvx512CoreAmx},
};

// The lowest family allowed to use `feature`, or kNone when ungated.
Isa MinIsaOf(llvm::StringRef feature) {
  for (const GatedFeature& g : kGatedFeatures) {
    if (feature == g.name) return g.min_isa;
  }
  return Isa::kNone;
}

// The highest family whose features `features` all has (the ladder of
// support/cpu_features.h; OS support for AMX is assumed).
Isa IsaOfFeatures(const llvm::StringMap<bool>& features) {
  auto has = [&](const char* name) { return features.lookup(name); };
  if (!has("avx2") || !has("fma") || !has("f16c")) return Isa::kNone;
  if (!has("avx512f") || !has("avx512bw") || !has("avx512vl") ||
      !has("avx512dq")) {
    return Isa::kAvx2;
  }
  if (!has("avx512vnni")) return Isa::kAvx512Core;
  if (!has("avx512bf16")) return Isa::kAvx512CoreVnni;
  if (!has("avx512fp16")) return Isa::kAvx512CoreBf16;
  if (!has("amx-tile") || !has("amx-bf16") || !has("amx-int8")) {
    return Isa::kAvx512CoreFp16;
  }
  return Isa::kAvx512CoreAmx;
}

// O1 codegen after hgc's own pipeline: the emitters' loops run as fast as
// at O2 (MHA, MLP, layernorm and softmax graphs, alternating rounds) and
// compile in less time. LLVM's pipelines keep its default O2 codegen.
llvm::CodeGenOpt::Level CodeGenLevel(const IrCompilerOptions& options) {
  if (options.opt_level <= 0) return llvm::CodeGenOpt::None;
  return options.llvm_default_pipeline ? llvm::CodeGenOpt::Default
                                       : llvm::CodeGenOpt::Less;
}

}  // namespace

std::string TargetSpec::FeatureString() const {
  return absl::StrJoin(llvm_features ? *llvm_features : features, ",");
}

bool TargetSpec::HasFeature(absl::string_view feature) const {
  const std::string plus = absl::StrCat("+", feature);
  return std::find(features.begin(), features.end(), plus) != features.end();
}

std::string TargetSpec::ToString() const {
  return absl::StrCat(triple, " ", cpu, " (", IsaName(isa), ")");
}

std::vector<std::string> CapFeatures(const llvm::StringMap<bool>& host,
                                     Isa cap) {
  std::vector<std::string> out;
  out.reserve(host.size());
  for (const auto& entry : host) {
    const bool enabled =
        entry.getValue() &&
        static_cast<int>(MinIsaOf(entry.getKey())) <= static_cast<int>(cap);
    // Disabled features are spelled out too: the CPU name alone would turn
    // them back on (e.g. "sapphirerapids" implies avx512fp16).
    out.push_back(absl::StrCat(enabled ? "+" : "-", entry.getKey().str()));
  }
  // StringMap iterates in hash order; sorting keeps dumps reproducible.
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) {
              return a.substr(1) < b.substr(1);
            });
  return out;
}

namespace {

TargetSpec ComputeHostTargetSpec(Isa cap) {
  TargetSpec spec;
  spec.triple = HostTriple();
  spec.cpu = HostCpuName();
  spec.features = CapFeatures(HostCpuFeatures(), cap);
  spec.llvm_features =
      FeaturesNotImpliedByCpu(spec.triple, spec.cpu, spec.features);
  spec.isa = std::min(cap, DetectCpuFeatures().HighestIsa());
  return spec;
}

}  // namespace

TargetSpec HostTargetSpec(Isa cap) {
  // The host does not change: each cap's spec (LLVM's host features and a
  // subtarget for the implied ones, about 1 ms) is worked out once.
  ABSL_CONST_INIT static absl::Mutex mu(absl::kConstInit);
  static auto* const specs = new std::map<Isa, TargetSpec>();
  absl::MutexLock lock(&mu);
  auto it = specs->find(cap);
  if (it == specs->end()) {
    it = specs->emplace(cap, ComputeHostTargetSpec(cap)).first;
  }
  return it->second;
}

absl::StatusOr<TargetSpec> HostTargetSpec(absl::string_view max_isa) {
  if (max_isa.empty()) return HostTargetSpec(MaxIsa());
  HGC_ASSIGN_OR_RETURN(Isa cap, ParseIsa(max_isa));
  return HostTargetSpec(cap);
}

absl::StatusOr<TargetSpec> NamedTargetSpec(absl::string_view cpu,
                                           absl::string_view max_isa) {
  Isa cap = MaxIsa();
  if (!max_isa.empty()) {
    HGC_ASSIGN_OR_RETURN(cap, ParseIsa(max_isa));
  }
  std::optional<llvm::StringMap<bool>> features =
      NamedCpuFeatures(std::string(cpu));
  if (!features.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown x86-64 CPU '", cpu,
                     "' (LLVM names such as skylake-avx512, icelake-server, "
                     "sapphirerapids, znver3)"));
  }
  TargetSpec spec;
  spec.triple = HostTriple();
  spec.cpu = std::string(cpu);
  spec.features = CapFeatures(*features, cap);
  spec.llvm_features =
      FeaturesNotImpliedByCpu(spec.triple, spec.cpu, spec.features);
  spec.isa = std::min(cap, IsaOfFeatures(*features));
  return spec;
}

absl::StatusOr<std::unique_ptr<IrCompiler>> IrCompiler::Create(
    TargetSpec spec, IrCompilerOptions options) {
  HGC_ASSIGN_OR_RETURN(
      std::unique_ptr<llvm::TargetMachine> tm,
      CreateTargetMachine(spec.triple, spec.cpu, spec.FeatureString(),
                          CodeGenLevel(options)));
  return std::unique_ptr<IrCompiler>(
      new IrCompiler(std::move(spec), options, std::move(tm)));
}

IrCompiler::IrCompiler(TargetSpec spec, IrCompilerOptions options,
                       std::unique_ptr<llvm::TargetMachine> tm)
    : spec_(std::move(spec)), options_(options), tm_(std::move(tm)) {}

void IrCompiler::PrepareModule(llvm::Module& module) const {
  module.setTargetTriple(spec_.triple);
  module.setDataLayout(tm_->createDataLayout());
}

absl::Status IrCompiler::Optimize(llvm::Module& module) {
  // Verifying first turns an emitter bug into a Status instead of a crash
  // deep inside an LLVM pass.
  HGC_RETURN_IF_ERROR(VerifyModule(module));
  PrepareModule(module);
  if (options_.prefer_vector_width > 0) {
    const std::string width = absl::StrCat(options_.prefer_vector_width);
    for (llvm::Function& f : module) {
      if (f.isDeclaration() || f.hasFnAttribute("prefer-vector-width")) {
        continue;
      }
      f.addFnAttr("prefer-vector-width", width);
    }
  }
  if (options_.opt_level <= 0) return absl::OkStatus();
  if (!options_.llvm_default_pipeline) {
    return RunEmittedCodePipeline(module, *tm_, options_.auto_vectorize);
  }
  return RunDefaultPipeline(module, *tm_, options_.opt_level,
                            options_.auto_vectorize);
}

std::string IrCompiler::EmitLlvmIr(const llvm::Module& module) {
  return PrintToString(module);
}

absl::StatusOr<std::string> IrCompiler::EmitMachineCodeFor(
    const llvm::Module& module, bool object) {
  // Codegen's IR-level passes (CodeGenPrepare, ...) rewrite the module;
  // work on a copy so --emit=asm does not change what gets JIT-compiled.
  std::unique_ptr<llvm::Module> clone = llvm::CloneModule(module);
  PrepareModule(*clone);
  return EmitMachineCode(*clone, *tm_, object);
}

absl::StatusOr<std::string> IrCompiler::EmitAssembly(
    const llvm::Module& module) {
  return EmitMachineCodeFor(module, /*object=*/false);
}

absl::StatusOr<std::string> IrCompiler::EmitObject(const llvm::Module& module) {
  return EmitMachineCodeFor(module, /*object=*/true);
}

absl::StatusOr<std::string> IrCompiler::CompileToObject(llvm::Module& module) {
  PrepareModule(module);
  return EmitMachineCode(module, *tm_, /*object=*/true);
}

}  // namespace codegen
}  // namespace hgc
