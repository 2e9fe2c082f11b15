#include "passes/pipelines.h"

#include <utility>

#include "absl/strings/str_cat.h"
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
#include "passes/pipeline_parser.h"
#include "passes/quantized_matmul.h"
#include "passes/recognize_softmax.h"
#include "passes/softmax_last_axis.h"
#include "passes/verify_pass.h"
#include "passes/widen_f16_matmul.h"
#include "support/status_macros.h"

namespace hgc {

void AddO0Pipeline(PassManager& pm) {
  // Nothing is rewritten; the module is only checked.
  pm.AddPass<VerifyPass>();
}

void AddO2Pipeline(PassManager& pm) {
  // Algebra first: removes identities and turns x/c into x*(1/c), so that
  // later passes see fewer ops and more constants.
  pm.AddPass<CanonicalizePass>();
  // Literal-only subgraphs (including constants canonicalize made) become
  // single constants.
  pm.AddPass<FoldConstantsPass>();
  // Softmaxes written out op by op (JAX, decompositions) as softmax ops,
  // before the attention passes look for them.
  pm.AddPass<RecognizeSoftmaxPass>();
  // Attention computed transposed (JAX's Vᵀ·Pᵀ, key-major scores K·Qᵀ
  // with softmax over axis -2) rewritten as P·V over Q·Kᵀ; the transposes
  // it leaves after P·V are merged by the canonicalize below.
  pm.AddPass<AttentionTransposesPass>();
  // Grouped-query attention whose K and V are repeated by a mul by ones
  // (or add of zeros) over a new dim (HF's repeat_kv without an expand op)
  // rebuilt with Q regrouped to [B, G, R, ..] and K and V broadcast by the
  // matmuls, so attention-fusion reads them once per kv head in place.
  pm.AddPass<AttentionRepeatKvPass>();
  // Attention scores regrouped between [B*H, S, S] and [B, H, S, S] (CLIP,
  // BLOOM, fairseq) rebuilt in one shape, so attention-fusion sees one
  // block; the relabels it leaves at a block's ends (a reshape of a
  // reshape, a reshape to the same shape) are merged by the canonicalize
  // below.
  pm.AddPass<AttentionReshapesPass>();
  // A scalar scale of K (torch's SDPA export scales Q and Kᵀ each by
  // sqrt(scale)) moved onto the scores, where the attention kernel applies
  // it, instead of a pass over K of its own.
  pm.AddPass<AttentionKScalePass>();
  // Folding can expose new identities (x * folded_one).
  pm.AddPass<CanonicalizePass>();
  // Before fusion: duplicates merged, so a shared value is seen as shared
  // and fusion never duplicates work...
  pm.AddPass<CsePass>();
  // ...and dead readers removed, so use counts are exact: a dead use would
  // stop a chain from fusing.
  pm.AddPass<DcePass>();
  // Attention blocks as one group each, before fusion would split them
  // into matmul and softmax groups.
  pm.AddPass<AttentionFusionPass>();
  // Matmuls of dequantized u8 / s8 tensors (the QDQ form) as s32 matmuls
  // with the zero points and scales applied to the result, before fusion
  // takes those as post-ops.
  pm.AddPass<QuantizedMatmulPass>();
  // The f16 matmuls left (outside attention) as f32 matmuls between casts,
  // before fusion takes the result's cast as a post-op.
  pm.AddPass<WidenF16MatmulPass>();
  // Softmaxes over another axis as last-axis ones between transposes.
  pm.AddPass<SoftmaxLastAxisPass>();
  // matmul + post-ops, elementwise chains, row ops with their neighbours.
  pm.AddPass<FusionPass>();
  // Small consecutive layers share one outer loop; needs the groups fusion
  // formed.
  pm.AddPass<MlpFusionPass>();
  // Constants copied into bodies leave their originals unused.
  pm.AddPass<DcePass>();
}

std::vector<std::string> NamedPipelines() { return {"O0", "O2"}; }

bool IsNamedPipeline(absl::string_view name) {
  return name == "O0" || name == "O2";
}

std::string DescribeNamedPipeline(absl::string_view name) {
  PassManager pm;
  if (name == "O0") AddO0Pipeline(pm);
  if (name == "O2") AddO2Pipeline(pm);
  return pm.PipelineString();
}

absl::Status AddPipeline(absl::string_view text, const PassRegistry& registry,
                         PassManager& pm) {
  HGC_ASSIGN_OR_RETURN(std::vector<PipelineEntry> entries, ParsePipeline(text));
  for (const PipelineEntry& entry : entries) {
    if (IsNamedPipeline(entry.name)) {
      if (!entry.options.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("pipeline ", entry.name, " takes no options"));
      }
      if (entry.name == "O0") AddO0Pipeline(pm);
      if (entry.name == "O2") AddO2Pipeline(pm);
      continue;
    }
    HGC_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass,
                         registry.Create(entry.name));
    for (const auto& [key, value] : entry.options) {
      HGC_RETURN_IF_ERROR(pass->SetOption(key, value));
    }
    pm.AddPass(std::move(pass));
  }
  return absl::OkStatus();
}

absl::Status RunPipeline(absl::string_view text, const PassRegistry& registry,
                         Module& module, PassManagerOptions options) {
  PassManager pm(std::move(options));
  HGC_RETURN_IF_ERROR(AddPipeline(text, registry, pm));
  HGC_RETURN_IF_ERROR(pm.ValidateOptions());
  return pm.Run(module);
}

}  // namespace hgc
