// BrgemmKernel: a generated, ready-to-call BRGEMM microkernel.
//
// Create() validates the descriptor, checks that the CPU (under the ISA cap)
// can run it, requests AMX permission when needed, picks the generator for
// the descriptor's ISA family and data type, and emits the code. Kernels are
// immutable after creation and safe to call from any number of threads at
// once (each call brings its own pointers). AMX kernels leave the calling
// thread's tiles configured so the next call of the same shape skips
// ldtilecfg (amx.h); ReleaseTiles() hands the state back.
#ifndef HGC_MICROKERNELS_BRGEMM_KERNEL_H_
#define HGC_MICROKERNELS_BRGEMM_KERNEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "microkernels/brgemm_abi.h"
#include "microkernels/brgemm_desc.h"
#include "microkernels/jit_generator.h"

namespace hgc {
namespace microkernels {

class BrgemmKernel {
 public:
  // InvalidArgument / Unimplemented from ValidateBrgemmDesc, and
  // InvalidArgument for B panels (b_panel_bytes) not as wide as the
  // kernel's tiles (BlockColumns);
  // FailedPrecondition("... not available on this CPU ...") when desc.isa is
  // above MaxIsa() or AMX permission is refused; Internal when Xbyak fails.
  // When HGC_DUMP_KERNELS names a directory, the new kernel's code and
  // disassembly are written there (kernel_dump.h); a failed dump is
  // reported on stderr and does not fail creation.
  static absl::StatusOr<std::unique_ptr<BrgemmKernel>> Create(
      const BrgemmDesc& desc);

  ~BrgemmKernel();

  const BrgemmDesc& desc() const { return desc_; }
  // The descriptor string; also the name used for dumps.
  const std::string& name() const;
  // The generated function and its bytes.
  BrgemmFn fn() const { return fn_; }
  const uint8_t* code() const;
  size_t code_size() const;

  // Pointer-list batch (desc.batch_kind == kPointerList): C (= or +=)
  // sum_{i < batch} a_ptrs[i] * b_ptrs[i]. B blocks packed per desc.
  // `bias` (N floats) is required exactly when desc.bias is set,
  // `row_divisors` (M floats) exactly when desc.divide_rows is, `scale`
  // (one float) when desc.scale is and `row_max` (M x 16 floats) when
  // desc.row_max is. Neither call passes a prefetch address: a kernel with
  // desc.prefetch_lines then prefetches from null, which cannot fault and
  // fetches nothing (generated steps fill BrgemmCallArgs::prefetch).
  void Execute(const void* const* a_ptrs, const void* const* b_ptrs,
               int64_t batch, void* c, const float* bias = nullptr,
               const float* row_divisors = nullptr,
               const float* scale = nullptr, float* row_max = nullptr) const;
  // Strided batch (desc.batch_kind == kStrided): A_i = a + i * stride_a,
  // B_i = b + i * stride_b (bytes).
  void ExecuteStrided(const void* a, const void* b, int64_t batch, void* c,
                      const float* bias = nullptr,
                      const float* row_divisors = nullptr,
                      const float* scale = nullptr,
                      float* row_max = nullptr) const;

 private:
  BrgemmKernel(const BrgemmDesc& desc, std::unique_ptr<JitGenerator> gen);
  // A post-op's argument is given exactly when the descriptor asks for it.
  void CheckPostOpArgs(const float* bias, const float* row_divisors,
                       const float* scale, const float* row_max) const;

  BrgemmDesc desc_;
  std::unique_ptr<JitGenerator> gen_;
  BrgemmFn fn_ = nullptr;
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_KERNEL_H_
