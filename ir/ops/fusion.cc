// fusion: a call to a body graph of the same module (docs/compiler.md §1).
//
//   %f = fusion(%x, %w, %b) {body = @g_fused_0, kind = "matmul"} : f32[4, 8]
//
// Type inference cannot see the module, so the result type must be written
// (the printer always writes it) and is taken as given; the verifier checks
// the body's signature against the operands and the result at module level
// (ir/verifier.cc). Inference here checks what a single op can: `kind` is a
// known group kind, `b_layout` a known packed layout, `packed_operands`
// distinct operand indices.
#include <set>

#include "ir/ops/op_helpers.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// How codegen lowers the group (docs/compiler.md §1).
constexpr const char* kFusionKinds[] = {"matmul", "elementwise", "softmax",
                                        "layernorm", "reduce", "mlp",
                                        "attention"};
// Packed weight layouts prepack-weights records (passes/prepack_weights.h).
constexpr const char* kPackedLayouts[] = {"plain", "vnni2", "vnni4"};

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
  if (const Attribute* layout = ctx.Find("b_layout")) {
    if (!OneOf(layout->as_string(), kPackedLayouts)) {
      return OpError("fusion",
                     absl::StrCat("unknown b_layout ", layout->ToString(),
                                  " (expected \"plain\", \"vnni2\" "
                                  "or \"vnni4\")"));
    }
  }
  if (const Attribute* packed = ctx.Find("packed_operands")) {
    std::set<int64_t> seen;
    for (int64_t i : packed->as_int_list()) {
      if (i < 0 || i >= ctx.num_operands() || !seen.insert(i).second) {
        return OpError("fusion",
                       absl::StrCat("packed_operands ", packed->ToString(),
                                    " must name distinct operands in [0, ",
                                    ctx.num_operands(), ")"));
      }
    }
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
      // Set by prepack-weights: the packed layout of the weights named by
      // packed_operands (fusion operand indices), packed once by codegen.
      {"b_layout", AttrKind::kString, std::nullopt},
      {"packed_operands", AttrKind::kIntList, std::nullopt},
  };
  info.infer = InferFusion;
  r.Register(std::move(info));
}

}  // namespace hgc
