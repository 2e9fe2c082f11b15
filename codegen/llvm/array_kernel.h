// JIT-compiled "apply an elemental body over arrays" functions, for testing
// and benchmarking the elemental emitters without the loop emitter:
//
//   void fn(const void* const* inputs, void* output, int64_t n)
//   for i in [0, n): output[i] = body(inputs[0][i], inputs[1][i], ...)
//
// The loop runs `width` lanes at a time (<width x T> loads and stores) and
// finishes with a scalar tail that calls the same body on scalar values, so
// one kernel exercises both shapes the emitters accept.
#ifndef HGC_CODEGEN_LLVM_ARRAY_KERNEL_H_
#define HGC_CODEGEN_LLVM_ARRAY_KERNEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codegen/llvm/jit.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace hgc {
namespace codegen {

// Element types of the arrays (storage types: bool is kI8 0/1, bf16 and f16
// are kI16 bit patterns).
enum class Elem { kF32, kI32, kI16, kI8 };

// Computes one output element (or one vector of them) from the inputs'
// elements, all of the same shape. May return i1 for a kI8 output (stored
// zero-extended, as bool).
using ElementBody = std::function<llvm::Value*(
    llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& inputs)>;

// The LLVM type of `elem` in `context`.
llvm::Type* ElemType(llvm::LLVMContext& context, Elem elem);

// Builds the module described above in `context`, its function named
// `name`. `body` runs twice: on <width x T> values, then on scalars.
std::unique_ptr<llvm::Module> BuildArrayModule(llvm::LLVMContext& context,
                                               const std::string& name,
                                               const std::vector<Elem>& inputs,
                                               Elem output,
                                               const ElementBody& body,
                                               int width);

// One compiled array function and the JIT that owns its code.
class ArrayKernel {
 public:
  using Fn = void (*)(const void* const* inputs, void* output, int64_t n);

  // Builds, optimizes and JIT-compiles the function for the host
  // capped at `max_isa` (see HostTargetSpec).
  static absl::StatusOr<ArrayKernel> Create(const std::vector<Elem>& inputs,
                                            Elem output,
                                            const ElementBody& body,
                                            int width = 16,
                                            absl::string_view max_isa = "all");

  // Runs the function over n elements.
  void Run(const std::vector<const void*>& inputs, void* output,
           int64_t n) const {
    fn_(inputs.data(), output, n);
  }

  // The target the kernel was compiled for.
  const TargetSpec& spec() const { return jit_->spec(); }

 private:
  ArrayKernel(std::unique_ptr<Jit> jit, Fn fn)
      : jit_(std::move(jit)), fn_(fn) {}

  std::unique_ptr<Jit> jit_;
  Fn fn_;
};

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LLVM_ARRAY_KERNEL_H_
