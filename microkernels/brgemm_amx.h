// AMX BRGEMM generator: emits an AmxPlan (amx_plan.h) as tile code.
//
// tdpbf16ps for bf16 and tdpbusd / tdpbssd for u8s8 / s8s8 (AMX multiplies
// signed by signed directly, so no compensation is needed). The kernel loads
// its tile configurations (embedded after the code) with ldtilecfg and
// releases the tiles before returning, so callers need no AMX state. Tail
// K chunks are staged through a zero-padded 64-byte-stride stack scratch
// with masked AVX-512 loads; M and N tails use smaller tile shapes.
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

 protected:
  absl::Status Generate() override;

 private:
  void EmitBlock(const AmxBlockKind& kind);
  void EmitChunk(const AmxBlockKind& kind, bool staged);
  void EmitStage(const AmxBlockKind& kind);

  const BrgemmDesc desc_;
  const AmxPlan plan_;
  Xbyak::Label configs_[2][2];
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_AMX_H_
