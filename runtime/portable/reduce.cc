// The portable kernels for reduce_sum / reduce_max / reduce_mean, softmax and
// layernorm. Floating-point statistics accumulate in double and each output
// element is rounded once to the result dtype; integer sums wrap in the
// operand type like `add`.
#include <cmath>
#include <limits>
#include <vector>

#include "ir/ops/op_helpers.h"
#include "runtime/portable/kernels.h"
#include "support/status_macros.h"

namespace hgc {
namespace portable {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

absl::StatusOr<Tensor> EvalReduce(const KernelArgs& args) {
  const Tensor& x = args.operand(0);
  const int64_t rank = x.shape().size();
  HGC_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                       ReducedAxes(args.kind_name(), args.Find("axes"), rank));
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  const int64_t out_n = out.num_elements();
  if (out_n == 0) return out;

  // Walk x in row-major order; each element lands in the output element
  // whose kept coordinates match (stride 0 along reduced dims).
  Shape kept_shape;
  Shape reduced_dims;
  for (int64_t d = 0; d < rank; ++d) {
    kept_shape.push_back(reduced[d] ? 1 : x.shape()[d]);
    if (reduced[d]) reduced_dims.push_back(x.shape()[d]);
  }
  Shape out_strides = RowMajorStrides(kept_shape);
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) out_strides[d] = 0;
  }
  // Non-empty output: every kept dim >= 1, so this cannot overflow.
  HGC_ASSIGN_OR_RETURN(int64_t count, CheckedNumElements(reduced_dims));
  StridedWalker w(x.shape());
  w.AddOperand(out_strides);
  const int64_t in_n = x.num_elements();

  if (IsFloat(x.dtype())) {
    const bool is_max = args.kind == OpKind::kReduceMax;
    HGC_ASSIGN_OR_RETURN(std::unique_ptr<double[]> acc,
                         AllocScratch<double>(out_n, args.max_bytes));
    for (int64_t o = 0; o < out_n; ++o) acc[o] = is_max ? -kInf : 0.0;
    for (int64_t i = 0; i < in_n; ++i, w.Next()) {
      double v = LoadDouble(x, i);
      double& a = acc[w.offset(0)];
      if (!is_max) {
        a += v;
      } else if (std::isnan(v)) {
        a = v;  // NaN propagates; once NaN, `v > a` never replaces it.
      } else if (v > a) {
        a = v;
      }
    }
    const bool is_mean = args.kind == OpKind::kReduceMean;
    for (int64_t o = 0; o < out_n; ++o) {
      // Mean over zero elements is 0/0 = NaN.
      double v = is_mean ? acc[o] / static_cast<double>(count) : acc[o];
      out.SetDouble(o, v);
    }
    return out;
  }

  // Integers: sum modulo 2^64 (then wrapped to the dtype), max exact.
  const bool is_max = args.kind == OpKind::kReduceMax;
  HGC_ASSIGN_OR_RETURN(std::unique_ptr<uint64_t[]> acc,
                       AllocScratch<uint64_t>(out_n, args.max_bytes));
  const uint64_t init =
      is_max ? static_cast<uint64_t>(IntMin(x.dtype())) : uint64_t{0};
  for (int64_t o = 0; o < out_n; ++o) acc[o] = init;
  for (int64_t i = 0; i < in_n; ++i, w.Next()) {
    int64_t v = LoadInt(x, i);
    uint64_t& a = acc[w.offset(0)];
    if (!is_max) {
      a += static_cast<uint64_t>(v);
    } else if (v > static_cast<int64_t>(a)) {
      a = static_cast<uint64_t>(v);
    }
  }
  for (int64_t o = 0; o < out_n; ++o) {
    StoreWrapped(out, o, static_cast<int64_t>(acc[o]));
  }
  return out;
}

absl::StatusOr<Tensor> EvalSoftmax(const KernelArgs& args) {
  const Tensor& x = args.operand(0);
  HGC_ASSIGN_OR_RETURN(
      int64_t axis,
      NormalizeAxis("softmax", args.GetInt("axis", -1), x.shape().size()));
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  if (out.num_elements() == 0) return out;
  const Split s = SplitAt(x.shape(), axis);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t in = 0; in < s.inner; ++in) {
      const int64_t base = o * s.mid * s.inner + in;
      // Max ignores NaN here; a NaN input still makes exp/sum NaN below.
      double m = -kInf;
      for (int64_t j = 0; j < s.mid; ++j) {
        double v = LoadDouble(x, base + j * s.inner);
        if (v > m) m = v;
      }
      // All -inf: -inf - (-inf) = NaN, so the whole row is NaN.
      double sum = 0.0;
      for (int64_t j = 0; j < s.mid; ++j) {
        sum += std::exp(LoadDouble(x, base + j * s.inner) - m);
      }
      for (int64_t j = 0; j < s.mid; ++j) {
        const int64_t i = base + j * s.inner;
        out.SetDouble(i, std::exp(LoadDouble(x, i) - m) / sum);
      }
    }
  }
  return out;
}

absl::StatusOr<Tensor> EvalLayernorm(const KernelArgs& args) {
  const Tensor& x = args.operand(0);
  const Tensor& gamma = args.operand(1);
  const Tensor& beta = args.operand(2);
  HGC_ASSIGN_OR_RETURN(
      int64_t axis,
      NormalizeAxis("layernorm", args.GetInt("axis", -1), x.shape().size()));
  const double eps = args.GetFloat("epsilon", 1e-5);
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  if (out.num_elements() == 0) return out;
  // Normalized groups: dims axis..end (gamma and beta have that shape).
  const Split s = SplitAt(x.shape(), axis);
  const int64_t group = s.mid * s.inner;
  const int64_t groups = s.outer;
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t base = g * group;
    double sum = 0.0;
    for (int64_t j = 0; j < group; ++j) sum += LoadDouble(x, base + j);
    const double mean = sum / static_cast<double>(group);
    double sq = 0.0;  // two-pass (biased) variance
    for (int64_t j = 0; j < group; ++j) {
      double c = LoadDouble(x, base + j) - mean;
      sq += c * c;
    }
    const double stddev = std::sqrt(sq / static_cast<double>(group) + eps);
    for (int64_t j = 0; j < group; ++j) {
      double y = (LoadDouble(x, base + j) - mean) / stddev *
                     LoadDouble(gamma, j) +
                 LoadDouble(beta, j);
      out.SetDouble(base + j, y);
    }
  }
  return out;
}

}  // namespace portable
}  // namespace hgc
