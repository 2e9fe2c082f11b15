// Elementwise ops: arithmetic, math functions, comparisons, select, gelu,
// clamp and cast. Binary ops broadcast with numpy's rules.
#include <cmath>
#include <limits>

#include "ir/ops/op_helpers.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

enum class Operands { kNumeric, kFloat, kAny };

absl::Status CheckDType(absl::string_view op, DType dtype, Operands allowed) {
  if (allowed == Operands::kFloat && !IsFloat(dtype)) {
    return OpError(op, absl::StrCat("takes floating-point operands (f32, bf16, "
                                    "f16), found ", DTypeName(dtype)));
  }
  if (allowed == Operands::kNumeric && dtype == DType::kBool) {
    return OpError(op, "does not take bool operands");
  }
  return absl::OkStatus();
}

void RegisterUnary(OpRegistry& r, const std::string& name, Operands allowed,
                   std::vector<AttrSpec> attrs = {}) {
  OpInfo info;
  info.name = name;
  info.min_operands = info.max_operands = 1;
  info.attrs = std::move(attrs);
  info.elementwise = true;
  info.infer = [name, allowed](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    HGC_RETURN_IF_ERROR(CheckDType(name, ctx.operand(0).dtype, allowed));
    return One(ctx.operand(0));
  };
  r.Register(std::move(info));
}

void RegisterBinary(OpRegistry& r, const std::string& name, Operands allowed,
                    bool result_bool) {
  OpInfo info;
  info.name = name;
  info.min_operands = info.max_operands = 2;
  info.elementwise = true;
  info.infer = [name, allowed, result_bool](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    HGC_RETURN_IF_ERROR(RequireSameDType(name, ctx));
    HGC_RETURN_IF_ERROR(CheckDType(name, ctx.operand(0).dtype, allowed));
    HGC_ASSIGN_OR_RETURN(Shape shape,
                         BroadcastShapes(name, ctx.operand(0).shape,
                                         ctx.operand(1).shape));
    return One(TensorType(result_bool ? DType::kBool : ctx.operand(0).dtype,
                          std::move(shape)));
  };
  r.Register(std::move(info));
}

OpInfo SelectInfo() {
  OpInfo info;
  info.name = "select";
  info.min_operands = info.max_operands = 3;
  info.elementwise = true;
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    if (ctx.operand(0).dtype != DType::kBool) {
      return OpError("select", absl::StrCat("condition must be bool, found ",
                                            ctx.operand(0).ToString()));
    }
    HGC_RETURN_IF_ERROR(RequireSameDType("select", ctx, 1));
    HGC_ASSIGN_OR_RETURN(Shape shape,
                         BroadcastShapes("select", ctx.operand(0).shape,
                                         ctx.operand(1).shape));
    HGC_ASSIGN_OR_RETURN(shape,
                         BroadcastShapes("select", shape, ctx.operand(2).shape));
    return One(TensorType(ctx.operand(1).dtype, std::move(shape)));
  };
  return info;
}

OpInfo GeluInfo() {
  OpInfo info;
  info.name = "gelu";
  info.min_operands = info.max_operands = 1;
  info.elementwise = true;
  info.attrs = {{"approximate", AttrKind::kString, Attribute::String("none")}};
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    HGC_RETURN_IF_ERROR(CheckDType("gelu", ctx.operand(0).dtype,
                                   Operands::kFloat));
    const Attribute* approx = ctx.Find("approximate");
    if (approx && approx->as_string() != "none" &&
        approx->as_string() != "tanh") {
      return OpError("gelu", absl::StrCat("approximate must be \"none\" or "
                                          "\"tanh\", found ",
                                          approx->ToString()));
    }
    return One(ctx.operand(0));
  };
  return info;
}

OpInfo ClampInfo() {
  OpInfo info;
  info.name = "clamp";
  info.min_operands = info.max_operands = 1;
  info.elementwise = true;
  // Absent min/max mean -inf/+inf, which may also be written; NaN may not.
  info.attrs = {{"min", AttrKind::kFloat, std::nullopt, /*required=*/false,
                 /*non_finite=*/true},
                {"max", AttrKind::kFloat, std::nullopt, /*required=*/false,
                 /*non_finite=*/true}};
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    HGC_RETURN_IF_ERROR(CheckDType("clamp", ctx.operand(0).dtype,
                                   Operands::kNumeric));
    double lo = ctx.GetFloat("min", -std::numeric_limits<double>::infinity());
    double hi = ctx.GetFloat("max", std::numeric_limits<double>::infinity());
    if (std::isnan(lo) || std::isnan(hi)) {
      return OpError("clamp", "min and max must not be NaN");
    }
    if (lo > hi) {
      return OpError("clamp", absl::StrCat("min (", lo, ") is greater than max (",
                                           hi, ")"));
    }
    return One(ctx.operand(0));
  };
  return info;
}

OpInfo CastInfo() {
  OpInfo info;
  info.name = "cast";
  info.min_operands = info.max_operands = 1;
  info.elementwise = true;
  info.attrs = {{"to", AttrKind::kDType, std::nullopt, /*required=*/true}};
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    return One(TensorType(ctx.Find("to")->as_dtype(), ctx.operand(0).shape));
  };
  return info;
}

}  // namespace

void RegisterElementwiseOps(OpRegistry& r) {
  // Binary arithmetic and comparisons (ir/op_kinds.def): broadcast, the
  // dtypes of their `operands` column.
#define HGC_BINARY_ROW(e, name, operands, ...) \
  RegisterBinary(r, name, Operands::operands, /*result_bool=*/false);
#define HGC_COMPARE_ROW(e, name, operands, ...) \
  RegisterBinary(r, name, Operands::operands, /*result_bool=*/true);
#include "ir/op_kinds.def"
  for (const char* name : {"relu", "neg", "abs"}) {
    RegisterUnary(r, name, Operands::kNumeric);
  }
  // The math functions (ir/op_kinds.def): floats only, no attributes.
#define HGC_MATH_OP_KIND(e, name, ...) \
  RegisterUnary(r, name, Operands::kFloat);
#include "ir/op_kinds.def"
  r.Register(SelectInfo());
  r.Register(GeluInfo());
  r.Register(ClampInfo());
  r.Register(CastInfo());
}

}  // namespace hgc
