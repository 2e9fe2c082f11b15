// The target and the optimization pipeline for hgc's LLVM code.
//
// TargetSpec says what machine code may use: the host CPU and its features,
// lowered by an ISA cap (HGC_MAX_ISA) so that the AVX-512 paths of a bigger
// CPU can be produced and tested anywhere; or a named CPU (`--target-cpu`)
// so that `--emit=llvm` / `--emit=asm` text does not depend on the host.
// IrCompiler owns a TargetMachine for one spec, optimizes modules at O2
// with the new pass manager, and prints them as `.ll` text (`--emit=llvm`)
// or `.s` assembly (`--emit=asm`). The JIT (jit.h) is built from the host's
// spec, so without `--target-cpu` what --emit=asm shows is what runs.
#ifndef HGC_CODEGEN_LLVM_IR_COMPILER_H_
#define HGC_CODEGEN_LLVM_IR_COMPILER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "support/cpu_features.h"

namespace hgc {
namespace codegen {

// A code generation target: triple, CPU and explicit feature list.
struct TargetSpec {
  std::string triple;                 // "x86_64-pc-linux-gnu"
  std::string cpu;                    // LLVM CPU name, e.g. "sapphirerapids"
  std::vector<std::string> features;  // "+avx512f", "-avx512bf16", ...
  Isa isa = Isa::kNone;               // the ISA family the features amount to
  // What TargetMachines get: `features` less the entries `cpu` implies
  // anyway (same target, faster to build). HostTargetSpec fills it; when
  // unset, the full list is used.
  std::optional<std::vector<std::string>> llvm_features;

  // The features TargetMachines get (llvm_features, else features) joined
  // with commas.
  std::string FeatureString() const;

  // True when `feature` (LLVM's name, no sign: "avx512bf16") is enabled.
  bool HasFeature(absl::string_view feature) const;

  // One line for logs and dumps: "x86_64-pc-linux-gnu sapphirerapids
  // (avx512_core_bf16)".
  std::string ToString() const;
};

// Removes from `host` (LLVM feature name -> present) every feature above
// `cap` and returns the result as a sorted "+name" / "-name" list. The
// ladder follows support/cpu_features.h: avx512_core keeps AVX-512
// F/BW/VL/DQ/CD and everything below; _vnni adds avx512vnni; _bf16 adds
// avx512bf16; _fp16 adds avx512fp16 and the other Ice Lake / Sapphire Rapids
// AVX-512 extensions; _amx (no cap) adds AMX. Isa::kAvx2 and Isa::kNone
// remove AVX-512 altogether (AVX2 code). Features the host lacks are never
// added.
std::vector<std::string> CapFeatures(const llvm::StringMap<bool>& host,
                                     Isa cap);

// The host CPU, capped at `cap` (Isa::kAvx512CoreAmx: no cap). The spec's
// isa is min(cap, what the host has).
TargetSpec HostTargetSpec(Isa cap);

// The host CPU capped by `max_isa`, spelled as for HGC_MAX_ISA
// ("avx512_core", "avx512_core_bf16", ..., "all" / "auto" for no cap). An
// empty string means support's process-wide cap (MaxIsa(): HGC_MAX_ISA or
// SetMaxIsa). InvalidArgument for an unknown spelling.
absl::StatusOr<TargetSpec> HostTargetSpec(absl::string_view max_isa = "");

// A fixed x86-64 CPU instead of the host: `cpu` is an LLVM CPU name
// ("skylake-avx512", "sapphirerapids"), with the features LLVM gives that
// CPU, capped by `max_isa` as for HostTargetSpec. Nothing in the result
// depends on the machine hgc runs on (`--target-cpu`: golden tests of
// --emit=llvm / --emit=asm give the same text on every host). The spec's
// isa is min(cap, what the CPU's features amount to). InvalidArgument for a
// CPU name LLVM does not know or an unknown max_isa spelling.
absl::StatusOr<TargetSpec> NamedTargetSpec(absl::string_view cpu,
                                           absl::string_view max_isa = "");

// Options of an IrCompiler.
struct IrCompilerOptions {
  // Optimization level of the module pipeline and of codegen: 0 runs no
  // IR passes and fast instruction selection; 1-3 run the IR pipeline
  // (below), and codegen at O1 after hgc's pipeline, at O2 after LLVM's.
  int opt_level = 2;
  // The IR pipeline at opt_level 1-3: false runs RunEmittedCodePipeline
  // (llvm_util.h), which gives the emitters' IR code as fast as LLVM's O2
  // does for a quarter to a third less compile time per graph; true runs
  // LLVM's own O1-O3 module pipeline.
  bool llvm_default_pipeline = false;
  // The "prefer-vector-width" attribute stamped on functions that have
  // none. LLVM's tuning for Skylake-SP and later prefers 256-bit vectors and
  // would split the emitter's <16 x float> values into ymm halves; hgc's
  // kernels are written for zmm, as oneDNN's are. 0 leaves LLVM's choice.
  int prefer_vector_width = 512;
  // Run LLVM's loop and SLP vectorizers (in either pipeline). Off by default:
  // hgc's emitters write <16 x float> code themselves, and on such IR the
  // vectorizers find nothing to do in the vector bodies but re-vectorize and
  // interleave the scalar remainder loops, which doubles compile time (see
  // jit_bench) for loops that run < 16 iterations.
  bool auto_vectorize = false;
};

// A TargetMachine for one TargetSpec plus the IR pipeline and text emission.
// Not thread-safe (LLVM's TargetMachine is not): use one per thread.
class IrCompiler {
 public:
  // Creates the TargetMachine; FailedPrecondition when LLVM cannot target
  // the spec (no native target), Internal on other LLVM failures.
  static absl::StatusOr<std::unique_ptr<IrCompiler>> Create(
      TargetSpec spec, IrCompilerOptions options = {});

  // The target this compiler generates code for.
  const TargetSpec& spec() const { return spec_; }
  // The options it was created with.
  const IrCompilerOptions& options() const { return options_; }
  // The underlying TargetMachine (for cost queries in tests and passes).
  llvm::TargetMachine& target_machine() { return *tm_; }
  // The data layout modules for this target must carry.
  llvm::DataLayout data_layout() const { return tm_->createDataLayout(); }

  // Sets `module`'s triple and data layout to this target's. Call it before
  // emitting IR so layout-dependent decisions (sizes, alignment) are right;
  // Optimize() calls it too.
  void PrepareModule(llvm::Module& module) const;

  // Verifies `module`, prepares it, stamps the vector-width attributes and
  // runs the module pipeline at options().opt_level. Internal when the
  // module does not verify (before or after optimization).
  absl::Status Optimize(llvm::Module& module);

  // `module` as `.ll` text.
  static std::string EmitLlvmIr(const llvm::Module& module);

  // `module` compiled to assembly text (AT&T syntax, as llc prints it). The
  // module is cloned first, so it is left as it was.
  absl::StatusOr<std::string> EmitAssembly(const llvm::Module& module);

  // `module` compiled to an ELF relocatable object, for `.o` dumps.
  absl::StatusOr<std::string> EmitObject(const llvm::Module& module);

  // The same without the copy, for a module nothing reads afterwards:
  // codegen's IR-level passes rewrite it.
  absl::StatusOr<std::string> CompileToObject(llvm::Module& module);

 private:
  IrCompiler(TargetSpec spec, IrCompilerOptions options,
             std::unique_ptr<llvm::TargetMachine> tm);
  absl::StatusOr<std::string> EmitMachineCodeFor(const llvm::Module& module,
                                                 bool object);

  TargetSpec spec_;
  IrCompilerOptions options_;
  std::unique_ptr<llvm::TargetMachine> tm_;
};

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LLVM_IR_COMPILER_H_
