// LLVM glue for codegen/llvm: llvm::Error -> absl::Status at the boundary,
// one-time native target initialization, IR type and constant helpers, and
// the thin shims over calls whose spelling changes between LLVM releases.
//
// hgc builds against LLVM 14 (typed pointers, llvm::Optional,
// CGFT_AssemblyFile, the MC/TargetRegistry.h header, OptimizationLevel at
// namespace scope). Everything release-specific outside the ORC API lives in
// llvm_util.cc; the ORC-specific part lives in jit.cc. Porting to a newer
// LLVM should touch only those two files.
#ifndef HGC_CODEGEN_LLVM_LLVM_UTIL_H_
#define HGC_CODEGEN_LLVM_LLVM_UTIL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

namespace hgc {
namespace codegen {

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

// Converts `err` to a Status (OK for llvm::Error::success()), consuming it.
// A failure becomes `code` with "<context>: <llvm message>".
absl::Status ToStatus(llvm::Error err, absl::string_view context = "",
                      absl::StatusCode code = absl::StatusCode::kInternal);

// Converts an llvm::Expected<T> to absl::StatusOr<T>, consuming its error.
template <typename T>
absl::StatusOr<T> ToStatusOr(llvm::Expected<T> value,
                             absl::string_view context = "") {
  if (!value) return ToStatus(value.takeError(), context);
  return std::move(*value);
}

// Runs LLVM's IR verifier over `module`; Internal with the verifier's report
// when the module is malformed (a codegen bug, never a user error).
absl::Status VerifyModule(const llvm::Module& module);

// ---------------------------------------------------------------------------
// Target initialization
// ---------------------------------------------------------------------------

// Registers the native (x86) target, its MC layer, asm printer and asm
// parser with LLVM, once per process, and turns off LLVM's loop strength
// reduction for the process (-disable-lsr: a third of hgc's codegen time,
// no run-time gain measured). Thread-safe and cheap after the first call;
// every entry point that creates a TargetMachine or a JIT calls it.
absl::Status InitializeNativeTarget();

// ---------------------------------------------------------------------------
// Types and constants. "Shape" means scalar or fixed vector: every helper
// below accepts either, so the same emitter code serves vector bodies and
// scalar tails.
// ---------------------------------------------------------------------------

// <width x elem>, or `elem` itself when width == 1.
llvm::Type* VectorOf(llvm::Type* elem, int width);

// A pointer to `pointee` in address space 0. LLVM 14 pointers are typed;
// this is the one place that knows.
llvm::PointerType* PointerTo(llvm::Type* pointee);

// Lanes of a fixed vector type, 1 for a scalar type.
int VectorWidth(llvm::Type* type);

// The element type of a vector type, or `type` itself for a scalar.
llvm::Type* ElementType(llvm::Type* type);

// A type with the shape of `like` (scalar, or vector of the same width) and
// the element type `elem`.
llvm::Type* WithElementType(llvm::Type* like, llvm::Type* elem);

// The integer type of `bits` bits shaped like `like`.
llvm::Type* IntTypeLike(llvm::Type* like, unsigned bits);

// f32 constant `v` shaped like `like` (splat for vectors).
llvm::Constant* F32Const(llvm::Type* like, double v);

// Integer constant `v` (two's complement, truncated to the element width)
// shaped like `like`, which must have an integer element type.
llvm::Constant* IntConst(llvm::Type* like, int64_t v);

// The text LLVM prints for a module, a value or a type (for dumps, errors
// and tests).
std::string PrintToString(const llvm::Module& module);
std::string PrintToString(const llvm::Value& value);
std::string PrintToString(const llvm::Type& type);

// ---------------------------------------------------------------------------
// Release-specific shims (LLVM 14)
// ---------------------------------------------------------------------------

// The host's target triple, as LLVM spells it ("x86_64-pc-linux-gnu").
std::string HostTriple();

// The host CPU as LLVM names it ("sapphirerapids", "skylake-avx512").
std::string HostCpuName();

// Every feature LLVM knows for the host, true when present (from CPUID).
// Empty when LLVM cannot detect features on this host.
llvm::StringMap<bool> HostCpuFeatures();

// Every feature LLVM gives the x86-64 CPU named `cpu` ("skylake-avx512",
// "znver3"), true for each (the map lists only the CPU's features); nullopt
// when LLVM knows no 64-bit x86 CPU of that name.
std::optional<llvm::StringMap<bool>> NamedCpuFeatures(const std::string& cpu);

// The entries of `features` ("+name" / "-name") that change what `cpu`
// already implies on `triple`. TargetMachine creation re-walks LLVM's
// feature-implication table for every entry, so passing the full host list
// (~90 entries) makes each TargetMachine and subtarget ~2x slower to build.
std::vector<std::string> FeaturesNotImpliedByCpu(
    const std::string& triple, const std::string& cpu,
    const std::vector<std::string>& features);

// Creates a TargetMachine for `triple` / `cpu` / `features` (the "+a,-b"
// string), position-independent, small code model, generating code at
// `level` (CodeGenOpt::None selects fast instruction selection).
absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(
    const std::string& triple, const std::string& cpu,
    const std::string& features, llvm::CodeGenOpt::Level level);

// Runs the new-pass-manager default module pipeline at `opt_level` (1, 2 or
// 3; 0 runs nothing) over `module`, with `tm` supplying the target's cost
// model (AVX-512 widths and costs for the inliner and the vectorizers).
// `auto_vectorize` enables the loop and SLP vectorizers (and the loop
// interleaving that comes with them).
absl::Status RunDefaultPipeline(llvm::Module& module, llvm::TargetMachine& tm,
                                int opt_level, bool auto_vectorize);

// Runs hgc's own short function pipeline over `module`: what the IR its
// emitters write (explicit <16 x float> vectors, simple counted loops, no
// calls to inline) needs from the default O2 pipeline, in a fraction of
// its time: SROA, CSE, instcombine and CFG cleanup; loop rotation,
// invariant hoisting, induction variable simplification and unrolling,
// then CFG cleanup (instruction selection folds what unrolling leaves).
// `auto_vectorize` adds the loop and SLP vectorizers and an instcombine
// after them.
absl::Status RunEmittedCodePipeline(llvm::Module& module,
                                    llvm::TargetMachine& tm,
                                    bool auto_vectorize);

// Runs the codegen pipeline of `tm` over `module` and returns assembly text
// (`object` false) or an ELF relocatable object (`object` true). Codegen
// rewrites IR in place, so callers that keep using `module` pass a clone.
absl::StatusOr<std::string> EmitMachineCode(llvm::Module& module,
                                            llvm::TargetMachine& tm,
                                            bool object);

// vcvtneps2bf16 on `x` (<16 x float> or <8 x float>): returns <N x i16>
// with the bf16 bits, or nullptr for other shapes. The instruction rounds
// to nearest even, quiets NaNs, and flushes denormal inputs and outputs to
// zero. The caller checks that the target has AVX512_BF16.
llvm::Value* EmitCvtNePs2Bf16(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LLVM_LLVM_UTIL_H_
