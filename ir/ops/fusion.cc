// fusion: a call to a body graph of the same module (docs/compiler.md §1).
//
//   %f = fusion(%x, %w, %b) {body = @g_fused_0, kind = "matmul"} : f32[4, 8]
//
// Type inference cannot see the module, so the result type must be written
// (the printer always writes it) and is taken as given; the verifier checks
// the body's signature against the operands and the result at module level
// (ir/verifier.cc). Inference here checks what a single op can: `kind` is a
// known group kind (ir/fusion_kinds.def). An attention group may carry its
// match as match_* int lists (docs/ops.md).
#include "ir/op_kind.h"
#include "ir/ops/op_helpers.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// The kinds a group may have, as the error message lists them.
std::string ExpectedKinds() {
  std::string list;
  absl::Span<const FusionKind> kinds = AllFusionKinds();
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) absl::StrAppend(&list, i + 1 == kinds.size() ? " or " : ", ");
    absl::StrAppend(&list, "\"", FusionKindName(kinds[i]), "\"");
  }
  return list;
}

absl::StatusOr<std::vector<TensorType>> InferFusion(const InferContext& ctx) {
  if (ctx.declared_results().size() != 1) {
    return OpError("fusion",
                   "the result type must be written, e.g. "
                   "': f32[4, 8]'");
  }
  const std::string& kind = ctx.Find("kind")->as_string();
  if (!FusionKindFromName(kind).has_value()) {
    return OpError("fusion", absl::StrCat("unknown kind \"", kind,
                                          "\" (expected ", ExpectedKinds(),
                                          ")"));
  }
  return One(ctx.declared_results()[0]);
}

}  // namespace

void RegisterFusionOps(OpRegistry& r) {
  OpInfo info;
  info.name = "fusion";
  info.min_operands = 0;
  info.max_operands = 1 << 20;
  info.attrs = {
      {"body", AttrKind::kSymbol, std::nullopt, /*required=*/true},
      {"kind", AttrKind::kString, std::nullopt, /*required=*/true},
  };
  // An attention group's match, written by attention-fusion and read by
  // codegen (analysis/attention_attrs.h checks the values).
  for (const char* name :
       {"match_dims", "match_q", "match_k", "match_v", "match_out", "match_ops",
        "match_q_ops", "match_q_quant", "match_k_quant", "match_v_quant",
        "match_score_ops", "match_prob_ops", "match_out_ops"}) {
    info.attrs.push_back(
        {name, AttrKind::kIntList, std::nullopt, /*required=*/false});
  }
  info.infer = InferFusion;
  r.Register(std::move(info));
}

}  // namespace hgc
