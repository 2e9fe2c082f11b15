// fusion: a call to a body graph of the same module (docs/compiler.md §1).
//
//   %f = fusion(%x, %w, %b) {body = @g_fused_0, kind = "matmul"} : f32[4, 8]
//
// Type inference cannot see the module, so the result type must be written
// (the printer always writes it) and is taken as given; the verifier checks
// the body's signature against the operands and the result at module level
// (ir/verifier.cc). Inference here checks what a single op can: `kind` is a
// known group kind.
#include "ir/ops/op_helpers.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// How codegen lowers the group (docs/compiler.md §1).
constexpr const char* kFusionKinds[] = {"matmul", "elementwise", "softmax",
                                        "layernorm", "reduce", "mlp",
                                        "attention"};

template <size_t N>
bool OneOf(const std::string& s, const char* const (&names)[N]) {
  for (const char* n : names) {
    if (s == n) return true;
  }
  return false;
}

absl::StatusOr<std::vector<TensorType>> InferFusion(const InferContext& ctx) {
  if (ctx.declared_results().size() != 1) {
    return OpError("fusion",
                   "the result type must be written, e.g. "
                   "': f32[4, 8]'");
  }
  const std::string& kind = ctx.Find("kind")->as_string();
  if (!OneOf(kind, kFusionKinds)) {
    return OpError("fusion",
                   absl::StrCat("unknown kind \"", kind,
                                "\" (expected \"matmul\", \"elementwise\", "
                                "\"softmax\", \"layernorm\", \"reduce\", "
                                "\"mlp\" or \"attention\")"));
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
  info.infer = InferFusion;
  r.Register(std::move(info));
}

}  // namespace hgc
