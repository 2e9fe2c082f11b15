// quantize and dequantize, per tensor or per channel.
#include <cmath>
#include <limits>

#include "ir/ops/op_helpers.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// Whether `v` rounds (to nearest even) to a finite f32: below FLT_MAX plus
// half its ulp (2^103); the tie itself rounds to inf, FLT_MAX being odd.
// Checked in double, since converting a larger double to float is
// undefined behaviour in C++.
bool RoundsToFiniteF32(double v) {
  const double limit = static_cast<double>(std::numeric_limits<float>::max()) +
                       std::ldexp(1.0, 103);
  return std::isfinite(v) && std::fabs(v) < limit;
}

bool FitsZeroPoint(double zp, DType dtype) {
  if (zp != std::floor(zp)) return false;
  switch (dtype) {
    case DType::kS8: return zp >= -128 && zp <= 127;
    case DType::kU8: return zp >= 0 && zp <= 255;
    default: return zp >= -2147483648.0 && zp <= 2147483647.0;
  }
}

// Checks scale / zero_point / axis against `x` for an op whose integer side
// has dtype `int_type`.
absl::Status CheckQuantParams(absl::string_view op, const InferContext& ctx,
                              DType int_type) {
  const TensorType& x = ctx.operand(0);
  const Attribute& scale = *ctx.Find("scale");
  const Attribute* zero_point = ctx.Find("zero_point");
  const Attribute* axis = ctx.Find("axis");
  bool per_channel = scale.is_list() || (zero_point && zero_point->is_list());
  int64_t channels = 1;
  if (per_channel) {
    if (axis == nullptr) {
      return OpError(op, "per-channel scale or zero_point needs 'axis'");
    }
    HGC_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(op, axis->as_int(), x.rank()));
    channels = x.shape[a];
  } else if (axis != nullptr) {
    HGC_RETURN_IF_ERROR(NormalizeAxis(op, axis->as_int(), x.rank()).status());
  }
  auto check_list = [&](const Attribute& attr,
                        absl::string_view name) -> absl::Status {
    if (!attr.is_list()) return absl::OkStatus();
    if (static_cast<int64_t>(attr.as_list().size()) != channels) {
      return OpError(op, absl::StrCat(name, " has ", attr.as_list().size(),
                                      " entries for ", channels, " channels"));
    }
    return absl::OkStatus();
  };
  HGC_RETURN_IF_ERROR(check_list(scale, "scale"));
  std::vector<double> scales =
      scale.is_list() ? scale.as_number_list()
                      : std::vector<double>{scale.as_number()};
  for (double s : scales) {
    // The kernels and the reference compute x / scale in f32, so the
    // scale must survive rounding to f32: 1e-46 would become 0 and 1e39 inf.
    if (!(s > 0) || !RoundsToFiniteF32(s) || static_cast<float>(s) == 0) {
      return OpError(op, absl::StrCat("scale must be positive and finite "
                                      "as an f32, found ",
                                      s));
    }
  }
  if (zero_point != nullptr) {
    HGC_RETURN_IF_ERROR(check_list(*zero_point, "zero_point"));
    std::vector<double> zps =
        zero_point->is_list() ? zero_point->as_number_list()
                              : std::vector<double>{zero_point->as_number()};
    for (double zp : zps) {
      if (!FitsZeroPoint(zp, int_type)) {
        return OpError(op, absl::StrCat("zero_point ", zp,
                                        " is not an integer that fits ",
                                        DTypeName(int_type)));
      }
    }
  }
  return absl::OkStatus();
}

std::vector<AttrSpec> QuantAttrs(bool with_to) {
  std::vector<AttrSpec> attrs = {
      {"scale", AttrKind::kNumberOrList, std::nullopt, /*required=*/true},
      {"zero_point", AttrKind::kNumberOrList, Attribute::Int(0)},
      {"axis", AttrKind::kInt, std::nullopt}};
  if (with_to) {
    attrs.push_back({"to", AttrKind::kDType, std::nullopt, /*required=*/true});
  }
  return attrs;
}

OpInfo QuantizeInfo() {
  OpInfo info;
  info.name = "quantize";
  info.min_operands = info.max_operands = 1;
  info.attrs = QuantAttrs(/*with_to=*/true);
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    const TensorType& x = ctx.operand(0);
    if (x.dtype != DType::kF32) {
      return OpError("quantize", absl::StrCat("input must be f32, found ",
                                              x.ToString()));
    }
    DType to = ctx.Find("to")->as_dtype();
    if (to != DType::kU8 && to != DType::kS8) {
      return OpError("quantize", absl::StrCat("'to' must be u8 or s8, found ",
                                              DTypeName(to)));
    }
    HGC_RETURN_IF_ERROR(CheckQuantParams("quantize", ctx, to));
    return One(TensorType(to, x.shape));
  };
  return info;
}

OpInfo DequantizeInfo() {
  OpInfo info;
  info.name = "dequantize";
  info.min_operands = info.max_operands = 1;
  info.attrs = QuantAttrs(/*with_to=*/false);
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    const TensorType& x = ctx.operand(0);
    if (x.dtype != DType::kU8 && x.dtype != DType::kS8 &&
        x.dtype != DType::kS32) {
      return OpError("dequantize", absl::StrCat("input must be u8, s8 or s32, "
                                                "found ", x.ToString()));
    }
    HGC_RETURN_IF_ERROR(CheckQuantParams("dequantize", ctx, x.dtype));
    return One(TensorType(DType::kF32, x.shape));
  };
  return info;
}

}  // namespace

void RegisterQuantOps(OpRegistry& r) {
  r.Register(QuantizeInfo());
  r.Register(DequantizeInfo());
}

}  // namespace hgc
