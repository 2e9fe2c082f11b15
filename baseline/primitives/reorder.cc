// transpose, cast, quantize, dequantize -> dnnl::reorder (with output
// scales and zero points for the quantization ops), where the reorder's
// numbers are the reference's.
#include <cmath>
#include <string>
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

absl::StatusOr<Built> Reorder(const Op& op, BuildContext& ctx,
                              const memory::desc& src, const memory::desc& dst,
                              const dnnl::primitive_attr& attr) {
  return OnePrimitive<dnnl::reorder::primitive_desc, dnnl::reorder>(
      op, ctx, op.kind(),
      [&] {
        return dnnl::reorder::primitive_desc(ctx.engine(), src, ctx.engine(),
                                             dst, attr);
      },
      [&](auto& args) {
        args[DNNL_ARG_FROM] = ctx.Bind(src, ctx.SlotOf(op.operand(0)));
        args[DNNL_ARG_TO] = ctx.Bind(dst, ctx.DefineResult(op.result()));
      });
}

// The output-scales mask for `p`, in dims padded to `rank`.
int ScaleMask(const QuantParams& p, const Value* x, int rank) {
  if (p.axis < 0 || p.scales.size() == 1) return 0;
  return 1 << (rank - x->type().rank() + p.axis);
}

}  // namespace

absl::StatusOr<QuantParams> ReadQuantParams(const Op& op) {
  QuantParams p;
  const Attribute* scale = op.FindAttr("scale");
  const Attribute* zp = op.FindAttr("zero_point");
  const Attribute* axis = op.FindAttr("axis");
  if (scale == nullptr) return absl::InvalidArgumentError("missing scale");
  if (scale->is_list()) {
    for (double s : scale->as_number_list()) {
      p.scales.push_back(static_cast<float>(s));
    }
  } else {
    p.scales.push_back(static_cast<float>(scale->as_number()));
  }
  if (zp == nullptr) {
    p.zero_points.push_back(0);
  } else if (zp->is_list()) {
    for (double z : zp->as_number_list()) {
      p.zero_points.push_back(static_cast<int64_t>(z));
    }
  } else {
    p.zero_points.push_back(static_cast<int64_t>(zp->as_number()));
  }
  const bool per_channel = scale->is_list() || (zp != nullptr && zp->is_list());
  if (per_channel) {
    if (axis == nullptr) return absl::InvalidArgumentError("missing axis");
    HGC_ASSIGN_OR_RETURN(
        int64_t a,
        NormalizeAxis(op.kind(), axis->as_int(), op.operand(0)->type().rank()));
    p.axis = static_cast<int>(a);
  }
  return p;
}

// oneDNN 2.6 reorders take one common zero point (mask 0).
absl::StatusOr<int32_t> CommonZeroPoint(const QuantParams& p) {
  for (int64_t z : p.zero_points) {
    if (z != p.zero_points[0]) {
      return absl::UnimplementedError(
          "per-channel zero points (oneDNN reorder takes a common one)");
    }
  }
  return static_cast<int32_t>(p.zero_points[0]);
}

absl::StatusOr<Built> BuildTranspose(const Op& op, BuildContext& ctx) {
  HGC_RETURN_IF_ERROR(CheckDnnlTypes(op));
  const Value* x = op.operand(0);
  const int64_t r = x->type().rank();
  if (r == 0) return absl::UnimplementedError("scalar");
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                       TransposePerm(op.FindAttr("perm"), r));
  // The source viewed in the result's dim order: dim i of the result is
  // dim perm[i] of x, with x's stride.
  memory::dims in_dims = PaddedDims(x->type().shape, static_cast<int>(r));
  memory::dims in_strides = RowMajor(in_dims);
  memory::dims dims(r), strides(r);
  for (int64_t i = 0; i < r; ++i) {
    dims[i] = in_dims[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  const memory::data_type dt = *DnnlType(x->type().dtype);
  memory::desc src(dims, dt, strides);
  memory::desc dst(dims, dt, RowMajor(dims));
  return Reorder(op, ctx, src, dst, dnnl::primitive_attr());
}

// Casts whose reorder matches the reference: between f32/bf16/f16
// (round to nearest even), integer -> anything but bool (exact or rounded
// to nearest even, saturating), bool -> anything but bool (0/1), and
// float -> s8/u8 (round half to even, saturating; NaN excepted, see
// primitive_executor.h). float -> s32 saturates differently at the top of
// the range in oneDNN, and -> bool means "!= 0": reference kernels.
absl::StatusOr<Built> BuildCast(const Op& op, BuildContext& ctx) {
  HGC_RETURN_IF_ERROR(CheckDnnlTypes(op));
  const DType from = op.operand(0)->type().dtype;
  const DType to = op.result()->type().dtype;
  if (to == DType::kBool && from != DType::kBool) {
    return absl::UnimplementedError("cast to bool");
  }
  if (IsFloat(from) && to == DType::kS32) {
    return absl::UnimplementedError(
        "float -> s32 (oneDNN saturates at 2147483520)");
  }
  const Shape& shape = op.operand(0)->type().shape;
  return Reorder(op, ctx, PlainDesc(shape, from), PlainDesc(shape, to),
                 dnnl::primitive_attr());
}

// q = saturate(round_half_even(x / scale) + zero_point). The reorder
// computes x * (1 / scale) + zero_point, as a framework's quantize on
// oneDNN does: exact when the scale is a power of two, otherwise one ulp
// away at most before rounding, which moves a value that close to a
// rounding tie by one step (what --check allows for 8-bit values). A
// scale whose reciprocal is not a normal float runs on the reference
// kernel.
absl::StatusOr<Built> BuildQuantize(const Op& op, BuildContext& ctx) {
  HGC_RETURN_IF_ERROR(CheckDnnlTypes(op));
  HGC_ASSIGN_OR_RETURN(QuantParams p, ReadQuantParams(op));
  std::vector<float> inverse;
  for (float s : p.scales) {
    if (!std::isnormal(1.f / s)) {
      return absl::UnimplementedError(
          absl::StrCat("1 / scale ", s, " is not a normal float"));
    }
    inverse.push_back(1.f / s);
  }
  HGC_ASSIGN_OR_RETURN(int32_t zp, CommonZeroPoint(p));
  const Value* x = op.operand(0);
  const int rank = std::max<int>(1, static_cast<int>(x->type().rank()));
  dnnl::primitive_attr attr;
  try {
    attr.set_output_scales(ScaleMask(p, x, rank), inverse);
    if (zp != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {zp});
  } catch (const dnnl::error& e) {
    return absl::UnimplementedError(absl::StrCat("oneDNN: ", e.what()));
  }
  return Reorder(op, ctx, PlainDesc(x->type().shape, x->type().dtype, rank),
                 PlainDesc(x->type().shape, op.result()->type().dtype, rank),
                 attr);
}

// y = f32(x - zero_point) * scale: a reorder with a source zero point and
// output scales computes exactly that (x - zero_point is exact in f32 for
// s8/u8; for s32 beyond 2^24 both sides round once more, within f32
// tolerance).
absl::StatusOr<Built> BuildDequantize(const Op& op, BuildContext& ctx) {
  HGC_RETURN_IF_ERROR(CheckDnnlTypes(op));
  HGC_ASSIGN_OR_RETURN(QuantParams p, ReadQuantParams(op));
  HGC_ASSIGN_OR_RETURN(int32_t zp, CommonZeroPoint(p));
  const Value* x = op.operand(0);
  const int rank = std::max<int>(1, static_cast<int>(x->type().rank()));
  dnnl::primitive_attr attr;
  try {
    attr.set_output_scales(ScaleMask(p, x, rank), p.scales);
    if (zp != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {zp});
  } catch (const dnnl::error& e) {
    return absl::UnimplementedError(absl::StrCat("oneDNN: ", e.what()));
  }
  return Reorder(op, ctx, PlainDesc(x->type().shape, x->type().dtype, rank),
                 PlainDesc(x->type().shape, DType::kF32, rank), attr);
}

}  // namespace primitive_internal
}  // namespace hgc
