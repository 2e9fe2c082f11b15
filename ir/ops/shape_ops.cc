// reshape, transpose and constant.
#include <cmath>
#include <limits>

#include "ir/ops/op_helpers.h"
#include "support/status_macros.h"

namespace hgc {

absl::StatusOr<std::vector<int64_t>> TransposePerm(const Attribute* perm,
                                                   int64_t rank) {
  std::vector<int64_t> out;
  if (perm == nullptr) {
    for (int64_t d = rank - 1; d >= 0; --d) out.push_back(d);
    return out;
  }
  std::vector<int64_t> given = perm->as_int_list();
  if (static_cast<int64_t>(given.size()) != rank) {
    return OpError("transpose", absl::StrCat("perm has ", given.size(),
                                             " entries for rank ", rank));
  }
  std::vector<bool> seen(rank, false);
  for (int64_t p : given) {
    HGC_ASSIGN_OR_RETURN(int64_t d, NormalizeAxis("transpose", p, rank));
    if (seen[d]) {
      return OpError("transpose", absl::StrCat("perm ", perm->ToString(),
                                               " is not a permutation"));
    }
    seen[d] = true;
    out.push_back(d);
  }
  return out;
}

absl::StatusOr<Shape> ReshapeTarget(absl::Span<const int64_t> input,
                                    const std::vector<int64_t>& shape) {
  HGC_ASSIGN_OR_RETURN(int64_t count, CheckedNumElements(input));
  int64_t inferred_at = -1;
  Shape out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred_at >= 0) return OpError("reshape", "more than one -1 in shape");
      inferred_at = static_cast<int64_t>(i);
      out.push_back(1);
    } else if (shape[i] < 0) {
      return OpError("reshape", absl::StrCat("invalid dimension ", shape[i]));
    } else {
      out.push_back(shape[i]);
    }
  }
  absl::StatusOr<int64_t> known = CheckedNumElements(out);
  if (!known.ok()) return OpError("reshape", known.status().message());
  if (inferred_at >= 0) {
    if (*known == 0 || count % *known != 0) {
      return OpError("reshape", absl::StrCat("cannot infer -1: ", count,
                                             " elements into ",
                                             ShapeToString(shape)));
    }
    out[inferred_at] = count / *known;
  } else if (*known != count) {
    return OpError("reshape",
                   absl::StrCat("cannot reshape ", ShapeToString(input), " (",
                                count, " elements) into ", ShapeToString(shape),
                                " (", *known, " elements)"));
  }
  return out;
}

namespace {

OpInfo ReshapeInfo() {
  OpInfo info;
  info.name = "reshape";
  info.min_operands = info.max_operands = 1;
  info.attrs = {{"shape", AttrKind::kIntList, std::nullopt, /*required=*/true}};
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    HGC_ASSIGN_OR_RETURN(Shape shape,
                         ReshapeTarget(ctx.operand(0).shape,
                                       ctx.Find("shape")->as_int_list()));
    return One(TensorType(ctx.operand(0).dtype, std::move(shape)));
  };
  return info;
}

OpInfo TransposeInfo() {
  OpInfo info;
  info.name = "transpose";
  info.min_operands = info.max_operands = 1;
  // Absent `perm` reverses the dimensions, as numpy does.
  info.attrs = {{"perm", AttrKind::kIntList, std::nullopt}};
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    const TensorType& x = ctx.operand(0);
    HGC_ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                         TransposePerm(ctx.Find("perm"), x.rank()));
    Shape shape;
    for (int64_t p : perm) shape.push_back(x.shape[p]);
    return One(TensorType(x.dtype, std::move(shape)));
  };
  return info;
}

// Whether `v` can be stored exactly in integer or bool type `dtype`.
bool FitsInteger(double v, DType dtype) {
  if (v != std::floor(v)) return false;
  switch (dtype) {
    case DType::kS32: return v >= -2147483648.0 && v <= 2147483647.0;
    case DType::kS8: return v >= -128 && v <= 127;
    case DType::kU8: return v >= 0 && v <= 255;
    case DType::kBool: return v == 0 || v == 1;
    default: return true;
  }
}

absl::Status CheckConstantElement(const Attribute& a, DType dtype) {
  if (a.is_bool()) {
    if (dtype != DType::kBool) {
      return OpError("constant", absl::StrCat("true/false needs a bool type, "
                                              "not ", DTypeName(dtype)));
    }
    return absl::OkStatus();
  }
  if (!a.is_number()) {
    return OpError("constant", absl::StrCat("value must be a number, found ",
                                            a.ToString()));
  }
  if (!IsFloat(dtype)) {
    if (a.is_float() && a.as_number() != std::floor(a.as_number())) {
      return OpError("constant", absl::StrCat("value ", a.ToString(),
                                              " is not integral for ",
                                              DTypeName(dtype)));
    }
    if (!FitsInteger(a.as_number(), dtype)) {
      return OpError("constant", absl::StrCat("value ", a.ToString(),
                                              " is out of range for ",
                                              DTypeName(dtype)));
    }
  }
  return absl::OkStatus();
}

OpInfo ConstantInfo() {
  OpInfo info;
  info.name = "constant";
  info.min_operands = info.max_operands = 0;
  // Float data may be non-finite: a mask of -inf is a constant like any.
  info.attrs = {{"value", AttrKind::kLiteral, std::nullopt,
                 /*required=*/true, /*non_finite=*/true}};
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    if (ctx.declared_results().size() != 1) {
      return OpError("constant", "the result type must be written, e.g. "
                                 "': f32[]'");
    }
    const TensorType& type = ctx.declared_results()[0];
    const Attribute& value = *ctx.Find("value");
    HGC_ASSIGN_OR_RETURN(int64_t count, CheckedNumElements(type.shape));
    if (value.is_list()) {
      if (static_cast<int64_t>(value.as_list().size()) != count) {
        return OpError("constant",
                       absl::StrCat("value has ", value.as_list().size(),
                                    " elements but ", type.ToString(), " has ",
                                    count));
      }
      for (const Attribute& a : value.as_list()) {
        HGC_RETURN_IF_ERROR(CheckConstantElement(a, type.dtype));
      }
    } else {
      HGC_RETURN_IF_ERROR(CheckConstantElement(value, type.dtype));
    }
    return One(type);
  };
  return info;
}

}  // namespace

void RegisterShapeOps(OpRegistry& r) {
  r.Register(ReshapeInfo());
  r.Register(TransposeInfo());
  r.Register(ConstantInfo());
}

}  // namespace hgc
