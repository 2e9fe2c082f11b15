// softmax -> dnnl::softmax_v2_forward; layernorm ->
// dnnl::layer_normalization_forward; reduce_* -> dnnl::reduction.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "baseline/primitives/common.h"
#include "ir/dtype.h"
#include "ir/ops/op_helpers.h"
#include "support/status_macros.h"

namespace hgc {
namespace primitive_internal {
namespace {

using dnnl::memory;

int64_t IntAttr(const Op& op, absl::string_view name, int64_t default_value) {
  const Attribute* a = op.FindAttr(name);
  return a != nullptr && a->is_int() ? a->as_int() : default_value;
}

absl::Status RequireFloat(const Op& op) {
  for (const Value* v : op.operands()) {
    if (!IsFloat(v->type().dtype)) {
      return absl::UnimplementedError(
          absl::StrCat(DTypeName(v->type().dtype), " operand"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Built> BuildSoftmax(const Op& op, BuildContext& ctx) {
  HGC_RETURN_IF_ERROR(CheckDnnlTypes(op));
  HGC_RETURN_IF_ERROR(RequireFloat(op));
  const Value* x = op.operand(0);
  if (x->type().rank() == 0) return absl::UnimplementedError("scalar");
  HGC_ASSIGN_OR_RETURN(
      int64_t axis,
      NormalizeAxis("softmax", IntAttr(op, "axis", -1), x->type().rank()));
  memory::desc md = PlainDesc(x->type().shape, x->type().dtype);
  return OnePrimitive<dnnl::softmax_v2_forward::primitive_desc,
                      dnnl::softmax_v2_forward>(
      op, ctx, "softmax",
      [&] {
        return dnnl::softmax_v2_forward::primitive_desc(
            dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_inference,
                                           dnnl::algorithm::softmax_accurate,
                                           md, md, static_cast<int>(axis)),
            ctx.engine());
      },
      [&](auto& args) {
        args[DNNL_ARG_SRC] = ctx.Bind(md, ctx.SlotOf(x));
        args[DNNL_ARG_DST] = ctx.Bind(md, ctx.DefineResult(op.result()));
      });
}

// oneDNN normalizes over the last dimension: x is viewed as [outer, inner]
// with inner = prod(shape[axis:]), and gamma/beta (shape[axis:]) as
// [inner]. oneDNN 2.6 takes f32 scale and shift only: bf16/f16 gamma and
// beta are converted by a reorder (once, when they are constant).
absl::StatusOr<Built> BuildLayernorm(const Op& op, BuildContext& ctx) {
  HGC_RETURN_IF_ERROR(CheckDnnlTypes(op));
  HGC_RETURN_IF_ERROR(RequireFloat(op));
  const Value* x = op.operand(0);
  const Shape& shape = x->type().shape;
  if (x->type().rank() == 0) return absl::UnimplementedError("scalar");
  HGC_ASSIGN_OR_RETURN(
      int64_t axis,
      NormalizeAxis("layernorm", IntAttr(op, "axis", -1), x->type().rank()));
  const Attribute* eps_attr = op.FindAttr("epsilon");
  const float epsilon =
      eps_attr != nullptr ? static_cast<float>(eps_attr->as_number()) : 1e-5f;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < x->type().rank(); ++i) {
    (i < axis ? outer : inner) *= shape[i];
  }
  const memory::data_type dt = *DnnlType(x->type().dtype);
  memory::desc md({outer, inner}, dt, memory::format_tag::ab);
  memory::desc param_f32({inner}, memory::data_type::f32,
                         memory::format_tag::a);
  memory::desc param_user({inner}, dt, memory::format_tag::a);

  HGC_ASSIGN_OR_RETURN(
      dnnl::layer_normalization_forward::primitive_desc pd, TryDnnl([&] {
        return dnnl::layer_normalization_forward::primitive_desc(
            dnnl::layer_normalization_forward::desc(
                dnnl::prop_kind::forward_inference, md, epsilon,
                dnnl::normalization_flags::use_scale |
                    dnnl::normalization_flags::use_shift),
            ctx.engine());
      }));
  auto step = std::make_unique<PrimitiveStep>();
  try {
    PrimitiveStep::Call call;
    call.primitive = dnnl::layer_normalization_forward(pd);
    call.args[DNNL_ARG_SRC] = ctx.Bind(md, ctx.SlotOf(x));
    const int params[2] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT};
    for (int i = 0; i < 2; ++i) {
      const Value* p = op.operand(1 + i);
      const int slot = ctx.SlotOf(p);
      if (dt == memory::data_type::f32) {
        call.args[params[i]] = ctx.Bind(param_f32, slot);
        continue;
      }
      memory user = ctx.Bind(param_user, slot);
      memory converted(param_f32, ctx.engine());
      PrimitiveStep::Call convert;
      convert.primitive = dnnl::reorder(user, converted);
      convert.args = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, converted}};
      (ctx.IsConstSlot(slot) ? step->prepare_calls : step->calls)
          .push_back(std::move(convert));
      call.args[params[i]] = converted;
    }
    call.args[DNNL_ARG_DST] = ctx.Bind(md, ctx.DefineResult(op.result()));
    step->calls.push_back(std::move(call));
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat(OpLabel(op), ": oneDNN: ", e.what()));
  }
  step->info = PrimitiveInfo("layernorm", ImplName(pd), op);
  Built built;
  built.step = std::move(step);
  return built;
}

// The result is stored like the keep_dims form (dropping size-1 dims does
// not move bytes), so dst is described with the reduced dims set to 1. A
// reduction over nothing (or only size-1 dims) is a copy: a reorder.
absl::StatusOr<Built> BuildReduce(const Op& op, BuildContext& ctx) {
  HGC_RETURN_IF_ERROR(CheckDnnlTypes(op));
  // Integer reduce_sum wraps in hgc; oneDNN accumulates in f32.
  HGC_RETURN_IF_ERROR(RequireFloat(op));
  const Value* x = op.operand(0);
  const int rank = std::max<int>(1, static_cast<int>(x->type().rank()));
  HGC_ASSIGN_OR_RETURN(
      std::vector<bool> reduced,
      ReducedAxes(op.kind(), op.FindAttr("axes"), x->type().rank()));
  memory::dims src_dims = PaddedDims(x->type().shape, rank);
  memory::dims dst_dims = src_dims;
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (reduced[i]) dst_dims[rank - reduced.size() + i] = 1;
  }
  const memory::data_type dt = *DnnlType(x->type().dtype);
  memory::desc src(src_dims, dt, RowMajor(src_dims));
  memory::desc dst(dst_dims, *DnnlType(op.result()->type().dtype),
                   RowMajor(dst_dims));
  auto bind = [&](auto& args, int from, int to) {
    args[from] = ctx.Bind(src, ctx.SlotOf(x));
    args[to] = ctx.Bind(dst, ctx.DefineResult(op.result()));
  };
  if (src_dims == dst_dims) {
    return OnePrimitive<dnnl::reorder::primitive_desc, dnnl::reorder>(
        op, ctx, op.kind(),
        [&] {
          return dnnl::reorder::primitive_desc(ctx.engine(), src, ctx.engine(),
                                               dst);
        },
        [&](auto& args) { bind(args, DNNL_ARG_FROM, DNNL_ARG_TO); });
  }
  dnnl::algorithm alg =
      op.kind_id() == OpKind::kReduceSum   ? dnnl::algorithm::reduction_sum
      : op.kind_id() == OpKind::kReduceMax ? dnnl::algorithm::reduction_max
                                           : dnnl::algorithm::reduction_mean;
  return OnePrimitive<dnnl::reduction::primitive_desc, dnnl::reduction>(
      op, ctx, op.kind(),
      [&] {
        return dnnl::reduction::primitive_desc(
            dnnl::reduction::desc(alg, src, dst, 0.f, 0.f), ctx.engine());
      },
      [&](auto& args) { bind(args, DNNL_ARG_SRC, DNNL_ARG_DST); });
}

}  // namespace primitive_internal
}  // namespace hgc
