// matmul: batched matrix product with numpy batch broadcasting.
#include "ir/ops/op_helpers.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// The accumulation/result dtype of a·b, or an error for unsupported pairs.
absl::StatusOr<DType> MatmulResultDType(DType a, DType b) {
  bool a_int8 = a == DType::kS8 || a == DType::kU8;
  bool b_int8 = b == DType::kS8 || b == DType::kU8;
  if (a_int8 && b_int8) return DType::kS32;
  if (a == b && IsFloat(a)) return a;
  return OpError("matmul",
                 absl::StrCat("unsupported operand dtypes ", DTypeName(a),
                              " and ", DTypeName(b),
                              " (expected equal float types, or u8/s8 pairs)"));
}

absl::StatusOr<std::vector<TensorType>> InferMatmul(const InferContext& ctx) {
  const TensorType& a = ctx.operand(0);
  const TensorType& b = ctx.operand(1);
  if (a.rank() < 2 || b.rank() < 2) {
    return OpError("matmul", absl::StrCat("operands must have rank >= 2, found ",
                                          a.ToString(), " and ", b.ToString()));
  }
  HGC_ASSIGN_OR_RETURN(DType dtype, MatmulResultDType(a.dtype, b.dtype));
  bool ta = ctx.GetBool("transpose_a", false);
  bool tb = ctx.GetBool("transpose_b", false);
  int64_t m = a.shape[a.rank() - (ta ? 1 : 2)];
  int64_t ka = a.shape[a.rank() - (ta ? 2 : 1)];
  int64_t kb = b.shape[b.rank() - (tb ? 1 : 2)];
  int64_t n = b.shape[b.rank() - (tb ? 2 : 1)];
  if (ka != kb) {
    return OpError("matmul",
                   absl::StrCat("contraction dimensions differ (K = ", ka,
                                " vs ", kb, ") for ", a.ToString(), " and ",
                                b.ToString()));
  }
  absl::Span<const int64_t> a_batch(a.shape.data(), a.rank() - 2);
  absl::Span<const int64_t> b_batch(b.shape.data(), b.rank() - 2);
  HGC_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes("matmul", a_batch, b_batch));
  shape.push_back(m);
  shape.push_back(n);
  return One(TensorType(dtype, std::move(shape)));
}

}  // namespace

void RegisterMatmulOps(OpRegistry& r) {
  OpInfo info;
  info.name = "matmul";
  info.min_operands = info.max_operands = 2;
  info.attrs = {{"transpose_a", AttrKind::kBool, Attribute::Bool(false)},
                {"transpose_b", AttrKind::kBool, Attribute::Bool(false)}};
  info.infer = InferMatmul;
  r.Register(std::move(info));
}

}  // namespace hgc
