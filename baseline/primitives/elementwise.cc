// Unary ops -> dnnl::eltwise_forward; binary arithmetic and comparisons ->
// dnnl::binary.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "baseline/primitives/common.h"
#include "ir/dtype.h"
#include "support/status_macros.h"

namespace hgc {
namespace primitive_internal {
namespace {

using dnnl::algorithm;
using dnnl::memory;

struct BinaryAlgInfo {
  algorithm alg;
  // The algorithm computing the same with the operands swapped, or
  // undef when there is none (sub, div).
  algorithm swapped;
};

// The onednn and onednn_swapped columns of ir/op_kinds.def.
BinaryAlgInfo ArithmeticAlg(BinaryKind kind) {
  switch (kind) {
#define HGC_BINARY_ROW(e, name, operands, onednn, onednn_swapped) \
  case BinaryKind::e:                                             \
    return {algorithm::onednn, algorithm::onednn_swapped};
#include "ir/op_kinds.def"
  }
  return {algorithm::undef, algorithm::undef};
}

BinaryAlgInfo CompareAlg(CompareKind kind) {
  switch (kind) {
#define HGC_COMPARE_ROW(e, name, operands, cpp_operator, fcmp, icmp_signed, \
                        icmp_unsigned, onednn, onednn_swapped)             \
  case CompareKind::e:                                                      \
    return {algorithm::onednn, algorithm::onednn_swapped};
#include "ir/op_kinds.def"
  }
  return {algorithm::undef, algorithm::undef};
}

std::optional<BinaryAlgInfo> BinaryFor(OpKind kind) {
  if (std::optional<BinaryKind> b = AsBinary(kind)) return ArithmeticAlg(*b);
  if (std::optional<CompareKind> c = AsCompare(kind)) return CompareAlg(*c);
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Built> BuildEltwise(const Op& op, BuildContext& ctx) {
  HGC_RETURN_IF_ERROR(CheckDnnlTypes(op));
  const Value* x = op.operand(0);
  std::optional<EltwiseParams> params = EltwiseFor(op);
  if (!params.has_value()) {
    return absl::UnimplementedError("no oneDNN eltwise algorithm");
  }
  // Integer relu/neg/abs/clamp wrap or saturate in hgc's own way; oneDNN
  // computes eltwise in f32.
  if (!IsFloat(x->type().dtype)) {
    return absl::UnimplementedError(absl::StrCat(
        "integer ", op.kind(), " (oneDNN eltwise computes in f32)"));
  }
  memory::desc md = PlainDesc(x->type().shape, x->type().dtype);
  return OnePrimitive<dnnl::eltwise_forward::primitive_desc,
                      dnnl::eltwise_forward>(
      op, ctx, op.kind(),
      [&] {
        return dnnl::eltwise_forward::primitive_desc(
            dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                        params->alg, md, params->alpha,
                                        params->beta),
            ctx.engine());
      },
      [&](auto& args) {
        args[DNNL_ARG_SRC] = ctx.Bind(md, ctx.SlotOf(x));
        args[DNNL_ARG_DST] = ctx.Bind(md, ctx.DefineResult(op.result()));
      });
}

absl::StatusOr<Built> BuildBinary(const Op& op, BuildContext& ctx) {
  HGC_RETURN_IF_ERROR(CheckDnnlTypes(op));
  std::optional<BinaryAlgInfo> info = BinaryFor(op.kind_id());
  if (!info.has_value() || info->alg == algorithm::undef) {
    return absl::UnimplementedError("no oneDNN binary algorithm");
  }
  const Value* a = op.operand(0);
  const Value* b = op.operand(1);
  const Value* out = op.result();
  // Integer arithmetic wraps in hgc (oneDNN saturates, in f32); bool and
  // integer comparisons are left to the reference kernels too.
  if (!IsFloat(a->type().dtype)) {
    return absl::UnimplementedError(
        absl::StrCat(DTypeName(a->type().dtype), " operands"));
  }
  const int rank = std::max<int>(1, static_cast<int>(out->type().rank()));
  memory::dims out_dims = PaddedDims(out->type().shape, rank);
  // oneDNN broadcasts src1 only: src0 must have the result's shape.
  algorithm alg = info->alg;
  if (PaddedDims(a->type().shape, rank) != out_dims) {
    if (info->swapped == algorithm::undef ||
        PaddedDims(b->type().shape, rank) != out_dims) {
      return absl::UnimplementedError(
          "oneDNN binary broadcasts the second operand only");
    }
    std::swap(a, b);
    alg = info->swapped;
  }
  memory::desc src0 = PlainDesc(a->type().shape, a->type().dtype, rank);
  memory::desc src1 = PlainDesc(b->type().shape, b->type().dtype, rank);
  memory::desc dst = PlainDesc(out->type().shape, out->type().dtype, rank);
  return OnePrimitive<dnnl::binary::primitive_desc, dnnl::binary>(
      op, ctx, op.kind(),
      [&] {
        return dnnl::binary::primitive_desc(
            dnnl::binary::desc(alg, src0, src1, dst), ctx.engine());
      },
      [&](auto& args) {
        args[DNNL_ARG_SRC_0] = ctx.Bind(src0, ctx.SlotOf(a));
        args[DNNL_ARG_SRC_1] = ctx.Bind(src1, ctx.SlotOf(b));
        args[DNNL_ARG_DST] = ctx.Bind(dst, ctx.DefineResult(out));
      });
}

}  // namespace primitive_internal
}  // namespace hgc
