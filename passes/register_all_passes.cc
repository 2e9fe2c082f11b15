#include "passes/register_all_passes.h"

#include "passes/attention_fusion.h"
#include "passes/attention_k_scale.h"
#include "passes/attention_repeat_kv.h"
#include "passes/attention_reshapes.h"
#include "passes/attention_transposes.h"
#include "passes/canonicalize.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/fold_constants.h"
#include "passes/fusion.h"
#include "passes/mlp_fusion.h"
#include "passes/quantized_matmul.h"
#include "passes/recognize_softmax.h"
#include "passes/softmax_last_axis.h"
#include "passes/verify_pass.h"
#include "passes/widen_f16_matmul.h"

namespace hgc {

void RegisterAllPasses(PassRegistry& registry) {
  registry.Register<VerifyPass>();
  registry.Register<CanonicalizePass>();
  registry.Register<FoldConstantsPass>();
  registry.Register<RecognizeSoftmaxPass>();
  registry.Register<CsePass>();
  registry.Register<DcePass>();
  registry.Register<AttentionTransposesPass>();
  registry.Register<AttentionRepeatKvPass>();
  registry.Register<AttentionReshapesPass>();
  registry.Register<AttentionKScalePass>();
  registry.Register<AttentionFusionPass>();
  registry.Register<QuantizedMatmulPass>();
  registry.Register<WidenF16MatmulPass>();
  registry.Register<SoftmaxLastAxisPass>();
  registry.Register<FusionPass>();
  registry.Register<MlpFusionPass>();
}

const PassRegistry& GlobalPassRegistry() {
  static const PassRegistry* registry = [] {
    auto* r = new PassRegistry;
    RegisterAllPasses(*r);
    return r;
  }();
  return *registry;
}

}  // namespace hgc
