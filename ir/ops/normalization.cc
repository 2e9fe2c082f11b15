// softmax, layernorm and the reductions.
#include <set>

#include "ir/ops/op_helpers.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

absl::Status RequireFloat(absl::string_view op, const TensorType& t) {
  if (!IsFloat(t.dtype)) {
    return OpError(op, absl::StrCat("takes a floating-point operand, found ",
                                    t.ToString()));
  }
  return absl::OkStatus();
}

OpInfo SoftmaxInfo() {
  OpInfo info;
  info.name = "softmax";
  info.min_operands = info.max_operands = 1;
  info.attrs = {{"axis", AttrKind::kInt, Attribute::Int(-1)}};
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    const TensorType& x = ctx.operand(0);
    HGC_RETURN_IF_ERROR(RequireFloat("softmax", x));
    HGC_RETURN_IF_ERROR(
        NormalizeAxis("softmax", ctx.GetInt("axis", -1), x.rank()).status());
    return One(x);
  };
  return info;
}

OpInfo LayernormInfo() {
  OpInfo info;
  info.name = "layernorm";
  info.min_operands = info.max_operands = 3;
  info.attrs = {{"axis", AttrKind::kInt, Attribute::Int(-1)},
                {"epsilon", AttrKind::kFloat, Attribute::Float(1e-5)}};
  info.infer = [](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    const TensorType& x = ctx.operand(0);
    HGC_RETURN_IF_ERROR(RequireFloat("layernorm", x));
    HGC_ASSIGN_OR_RETURN(
        int64_t axis,
        NormalizeAxis("layernorm", ctx.GetInt("axis", -1), x.rank()));
    if (ctx.GetFloat("epsilon", 1e-5) < 0) {
      return OpError("layernorm", "epsilon must not be negative");
    }
    TensorType expected(x.dtype, Shape(x.shape.begin() + axis, x.shape.end()));
    for (int i : {1, 2}) {
      if (ctx.operand(i) != expected) {
        return OpError("layernorm",
                       absl::StrCat(i == 1 ? "gamma" : "beta", " must be ",
                                    expected.ToString(), ", found ",
                                    ctx.operand(i).ToString()));
      }
    }
    return One(x);
  };
  return info;
}

OpInfo ReduceInfo(const std::string& name) {
  OpInfo info;
  info.name = name;
  info.min_operands = info.max_operands = 1;
  // Absent `axes` reduces over every dimension; `axes = []` reduces none.
  info.attrs = {{"axes", AttrKind::kIntList, std::nullopt},
                {"keep_dims", AttrKind::kBool, Attribute::Bool(false)}};
  info.infer = [name](const InferContext& ctx)
      -> absl::StatusOr<std::vector<TensorType>> {
    const TensorType& x = ctx.operand(0);
    if (name == "reduce_mean") {
      HGC_RETURN_IF_ERROR(RequireFloat(name, x));
    } else if (x.dtype == DType::kBool) {
      return OpError(name, "does not take bool operands");
    }
    HGC_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                         ReducedAxes(name, ctx.Find("axes"), x.rank()));
    bool keep = ctx.GetBool("keep_dims", false);
    Shape shape;
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (!reduced[d]) {
        shape.push_back(x.shape[d]);
      } else if (keep) {
        shape.push_back(1);
      }
    }
    return One(TensorType(x.dtype, std::move(shape)));
  };
  return info;
}

}  // namespace

absl::StatusOr<std::vector<bool>> ReducedAxes(absl::string_view op,
                                              const Attribute* axes,
                                              int64_t rank) {
  std::vector<bool> reduced(rank, axes == nullptr);
  if (axes == nullptr) return reduced;
  for (int64_t axis : axes->as_int_list()) {
    HGC_ASSIGN_OR_RETURN(int64_t a, NormalizeAxis(op, axis, rank));
    if (reduced[a]) {
      return OpError(op, absl::StrCat("axis ", axis, " appears twice"));
    }
    reduced[a] = true;
  }
  return reduced;
}

void RegisterNormalizationOps(OpRegistry& r) {
  r.Register(SoftmaxInfo());
  r.Register(LayernormInfo());
  for (const char* name : {"reduce_sum", "reduce_max", "reduce_mean"}) {
    r.Register(ReduceInfo(name));
  }
}

}  // namespace hgc
