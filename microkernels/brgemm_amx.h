// AMX BRGEMM generator: emits an AmxPlan (amx_plan.h) as tile code.
//
// tdpbf16ps for bf16 and tdpbusd / tdpbssd for u8s8 / s8s8 (AMX multiplies
// signed by signed directly, so no compensation is needed). tdpbf16ps
// reads bf16 denormals as zero and flushes denormal results in hardware
// (hgc's bf16 matmul semantics, runtime/portable/matmul.cc). The tile
// configurations are embedded after the code. A single-configuration kernel
// (every kernel without M or N tails, which is what GEMM loops call over and
// over) reads the thread's configuration back on entry and runs ldtilecfg
// only when it differs; a kernel with tails loads each block kind's
// configuration before its blocks. Kernels return with the tiles still
// configured (amx.h explains the caching; ReleaseTiles() ends it). Tail
// K chunks are staged through a zero-padded 64-byte-stride stack scratch
// with masked AVX-512 loads; M and N tails use smaller tile shapes. Long
// blocks over a wide C prefetch (prefetchw) the C block stored next.
// Running it needs AMX and the permission from RequestAmxPermission();
// BrgemmKernel::Create checks both.
#ifndef HGC_MICROKERNELS_BRGEMM_AMX_H_
#define HGC_MICROKERNELS_BRGEMM_AMX_H_

#include "microkernels/amx_plan.h"
#include "microkernels/jit_generator.h"

namespace hgc {
namespace microkernels {

class BrgemmAmx : public JitGenerator {
 public:
  // `plan` must come from BuildAmxPlan(desc).
  BrgemmAmx(const BrgemmDesc& desc, AmxPlan plan);

  const AmxPlan& plan() const { return plan_; }
  // The configuration the kernel's first block uses (for single-config
  // plans, the configuration the kernel leaves behind).
  const TileConfig& entry_config() const;

 protected:
  absl::Status Generate() override;

 private:
  void EmitBlock(const AmxBlockKind& kind, bool last_m_loop);
  void EmitChunk(const AmxBlockKind& kind, bool staged);
  void EmitStage(const AmxBlockKind& kind);

  const BrgemmDesc desc_;
  const AmxPlan plan_;
  Xbyak::Label configs_[2][2];
  int entry_kind_ = -1;  // mi * 2 + ni of the first block kind run
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_AMX_H_
