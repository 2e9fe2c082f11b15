// The portable kernels for quantize and dequantize, per tensor or per channel.
//
// Both compute in f32 with the scale rounded to f32, which is what a
// vectorized kernel does, so int8 results compare bit-exactly:
//   quantize:   q = saturate(nearbyint_f32(x / scale_f32) + zero_point)
//               (IEEE f32 division, not a multiply by the reciprocal; ties
//               to even; NaN gives zero_point, +-inf saturate)
//   dequantize: y = f32(x - zero_point) * scale_f32  (x - zero_point exact)
#include <cmath>
#include <vector>

#include "ir/ops/op_helpers.h"
#include "runtime/portable/kernels.h"
#include "support/status_macros.h"

namespace hgc {
namespace portable {
namespace {

// Scale and zero point for each channel (one entry when per tensor).
struct QuantParams {
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  int64_t channels = 1;  // size of the channel dim (1: per tensor)
  int64_t inner = 1;     // elements per step along the channel dim

  int64_t Channel(int64_t i) const {
    return channels == 1 ? 0 : (i / inner) % channels;
  }
  float scale(int64_t c) const {
    return scales.size() == 1 ? scales[0] : scales[c];
  }
  int64_t zero_point(int64_t c) const {
    return zero_points.size() == 1 ? zero_points[0] : zero_points[c];
  }
};

absl::StatusOr<QuantParams> GetParams(const KernelArgs& args,
                                      const Shape& shape) {
  QuantParams p;
  const Attribute* scale = args.Find("scale");
  const Attribute* zp = args.Find("zero_point");
  if (scale == nullptr) return absl::InternalError("missing scale");
  std::vector<double> scales = scale->is_list()
                                   ? scale->as_number_list()
                                   : std::vector<double>{scale->as_number()};
  std::vector<double> zps =
      zp == nullptr ? std::vector<double>{0.0}
                    : (zp->is_list() ? zp->as_number_list()
                                     : std::vector<double>{zp->as_number()});
  for (double s : scales) p.scales.push_back(static_cast<float>(s));
  for (double z : zps) p.zero_points.push_back(static_cast<int64_t>(z));
  if (scale->is_list() || (zp != nullptr && zp->is_list())) {
    HGC_ASSIGN_OR_RETURN(
        int64_t axis,
        NormalizeAxis(args.kind_name(), args.GetInt("axis", 0), shape.size()));
    p.channels = shape[axis];
    for (size_t d = axis + 1; d < shape.size(); ++d) p.inner *= shape[d];
    if (p.channels == 0) p.channels = 1;  // empty tensor: nothing to index
  }
  return p;
}

}  // namespace

absl::StatusOr<Tensor> EvalQuantize(const KernelArgs& args) {
  const Tensor& x = args.operand(0);
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  const int64_t n = out.num_elements();
  if (n == 0) return out;
  HGC_ASSIGN_OR_RETURN(QuantParams p, GetParams(args, x.shape()));
  const double lo = static_cast<double>(IntMin(out.dtype()));
  const double hi = static_cast<double>(IntMax(out.dtype()));
  const float* in = x.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = p.Channel(i);
    const float q = in[i] / p.scale(c);
    // Round half to even (the default rounding mode) in f32; NaN counts as
    // 0, as in `cast`.
    double v = std::isnan(q) ? 0.0 : static_cast<double>(std::nearbyint(q));
    v += static_cast<double>(p.zero_point(c));
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    StoreWrapped(out, i, static_cast<int64_t>(v));
  }
  return out;
}

absl::StatusOr<Tensor> EvalDequantize(const KernelArgs& args) {
  const Tensor& x = args.operand(0);
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  const int64_t n = out.num_elements();
  if (n == 0) return out;
  HGC_ASSIGN_OR_RETURN(QuantParams p, GetParams(args, x.shape()));
  float* o = out.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = p.Channel(i);
    const float centered = static_cast<float>(LoadInt(x, i) - p.zero_point(c));
    o[i] = centered * p.scale(c);
  }
  return out;
}

}  // namespace portable
}  // namespace hgc
