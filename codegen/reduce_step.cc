#include "codegen/reduce_step.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "ir/ops/op_helpers.h"
#include "support/float16.h"

namespace hgc {
namespace codegen {
namespace {

// Floats accumulate in double; integers sum modulo 2^64 (wrapped to the
// dtype when stored) and take their max exactly, as the reference does.
// `kMax`: a compile-time kind, so that the walk's inner loop is a plain
// sum or max the compiler vectorizes.
template <bool kMax>
void Accumulate(double v, double& a) {
  if constexpr (!kMax) {
    a += v;
  } else if (std::isnan(v) || v > a) {
    a = v;  // NaN propagates: once NaN, `v > a` never replaces it.
  }
}
template <bool kMax>
void Accumulate(int64_t v, uint64_t& a) {
  if constexpr (!kMax) {
    a += static_cast<uint64_t>(v);
  } else if (v > static_cast<int64_t>(a)) {
    a = static_cast<uint64_t>(v);
  }
}

// Input elements as exact doubles (floats) or int64 (integers).
double Value(float x) { return x; }
struct Bf16Bits {
  uint16_t bits;
};
double Value(Bf16Bits x) { return Bf16ToFloat(x.bits); }
struct HalfBits {
  uint16_t bits;
};
double Value(HalfBits x) { return HalfToFloat(x.bits); }
int64_t Value(int32_t x) { return x; }
int64_t Value(int8_t x) { return x; }
int64_t Value(uint8_t x) { return x; }

// Walks dims[d..] of `in`, accumulating into `acc`.
template <bool kMax, typename Elem, typename Acc>
void WalkDims(const ReducePlan& plan, size_t d, const Elem*& in, Acc* acc) {
  const int64_t n = plan.dims[d];
  const int64_t stride = plan.out_strides[d];
  if (d + 1 == plan.dims.size()) {
    if (stride == 1) {  // a row of outputs: the vectorizable loop
      for (int64_t i = 0; i < n; ++i) Accumulate<kMax>(Value(in[i]), acc[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        Accumulate<kMax>(Value(in[i]), acc[i * stride]);
      }
    }
    in += n;
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    WalkDims<kMax>(plan, d + 1, in, acc + i * stride);
  }
}

template <typename Elem, typename Acc>
void Walk(const ReducePlan& plan, const Elem* in, Acc* acc) {
  if (plan.kind == ReduceKind::kReduceMax) {
    WalkDims<true>(plan, 0, in, acc);
  } else {
    WalkDims<false>(plan, 0, in, acc);
  }
}

// The float reduction: accumulated in double, each output rounded once
// (bf16 / f16 through f32 rounded to odd, as Tensor::SetDouble).
template <typename Elem>
void RunFloat(const ReducePlan& plan, const void* in, void* out, double* acc) {
  const double init = plan.kind == ReduceKind::kReduceMax
                          ? -std::numeric_limits<double>::infinity()
                          : 0.0;
  for (int64_t o = 0; o < plan.out_elements; ++o) acc[o] = init;
  const auto* x = static_cast<const Elem*>(in);
  if (plan.in_elements > 0) Walk(plan, x, acc);
  for (int64_t o = 0; o < plan.out_elements; ++o) {
    // A mean over zero elements is 0 / 0 = NaN, as in the reference.
    const double v = plan.kind == ReduceKind::kReduceMean
                         ? acc[o] / static_cast<double>(plan.count)
                         : acc[o];
    switch (plan.dtype) {
      case DType::kBF16:
        static_cast<uint16_t*>(out)[o] = DoubleToBf16(v);
        break;
      case DType::kF16:
        static_cast<uint16_t*>(out)[o] = DoubleToHalf(v);
        break;
      default:
        static_cast<float*>(out)[o] = static_cast<float>(v);
        break;
    }
  }
}

// The integer reduction (sum or max), wrapped to Elem as it is stored.
template <typename Elem>
void RunInt(const ReducePlan& plan, const void* in, void* out, uint64_t* acc) {
  const uint64_t init = plan.kind == ReduceKind::kReduceMax
                            ? static_cast<uint64_t>(static_cast<int64_t>(
                                  std::numeric_limits<Elem>::min()))
                            : 0;
  for (int64_t o = 0; o < plan.out_elements; ++o) acc[o] = init;
  const auto* x = static_cast<const Elem*>(in);
  if (plan.in_elements > 0) Walk(plan, x, acc);
  using Unsigned = std::make_unsigned_t<Elem>;
  for (int64_t o = 0; o < plan.out_elements; ++o) {
    static_cast<Elem*>(out)[o] =
        static_cast<Elem>(static_cast<Unsigned>(acc[o]));
  }
}

// The dtypes (and kinds) the step takes: reduce_mean is float only.
bool Reducible(DType dtype, ReduceKind kind) {
  switch (dtype) {
    case DType::kF32:
    case DType::kBF16:
    case DType::kF16:
      return true;
    case DType::kS32:
    case DType::kS8:
    case DType::kU8:
      return kind != ReduceKind::kReduceMean;
    default:
      return false;
  }
}

absl::StatusOr<ReduceKind> KindOf(const Op& op) {
  if (std::optional<ReduceKind> kind = AsReduce(op.kind_id())) return *kind;
  return absl::UnimplementedError(absl::StrCat("'", op.kind(), "'"));
}

}  // namespace

ReducePlan PlanReduce(ReduceKind kind, const Shape& shape,
                      const std::vector<bool>& reduced, DType dtype) {
  ReducePlan plan;
  plan.kind = kind;
  plan.dtype = dtype;
  plan.dims.assign(shape.begin(), shape.end());
  plan.out_strides.assign(shape.size(), 0);
  plan.in_elements = 1;
  plan.out_elements = 1;
  plan.count = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    plan.in_elements *= shape[d];
    if (reduced[d]) {
      plan.count *= shape[d];
    } else {
      plan.out_strides[d] = plan.out_elements;
      plan.out_elements *= shape[d];
    }
  }
  if (plan.dims.empty()) {  // a scalar reduces to itself
    plan.dims = {1};
    plan.out_strides = {0};
  }
  return plan;
}

void RunReduce(const ReducePlan& plan, const void* in, void* out, void* acc) {
  auto* float_acc = static_cast<double*>(acc);
  auto* int_acc = static_cast<uint64_t*>(acc);
  switch (plan.dtype) {
    case DType::kBF16:
      return RunFloat<Bf16Bits>(plan, in, out, float_acc);
    case DType::kF16:
      return RunFloat<HalfBits>(plan, in, out, float_acc);
    case DType::kS32:
      return RunInt<int32_t>(plan, in, out, int_acc);
    case DType::kS8:
      return RunInt<int8_t>(plan, in, out, int_acc);
    case DType::kU8:
      return RunInt<uint8_t>(plan, in, out, int_acc);
    default:
      return RunFloat<float>(plan, in, out, float_acc);
  }
}

int64_t ReduceScratchBytes(const Op& op) {
  absl::StatusOr<int64_t> n = CheckedNumElements(op.result()->type().shape);
  return n.ok() ? *n * static_cast<int64_t>(sizeof(double)) : 0;
}

absl::StatusOr<Step> ReduceStep(const Op& op, BufferRef in, BufferRef out,
                                BufferRef scratch) {
  absl::StatusOr<ReduceKind> kind = KindOf(op);
  if (!kind.ok()) return kind.status();
  const DType dtype = op.operand(0)->type().dtype;
  if (op.num_operands() != 1 || !Reducible(dtype, *kind) ||
      op.result()->type().dtype != dtype) {
    return absl::UnimplementedError(
        absl::StrCat("reduction of a ", DTypeName(dtype), " value"));
  }
  const Shape& shape = op.operand(0)->type().shape;
  absl::StatusOr<std::vector<bool>> reduced =
      ReducedAxes(op.kind(), op.FindAttr("axes"), shape.size());
  if (!reduced.ok()) return reduced.status();
  Step step;
  step.name = absl::StrCat(op.kind(), ".", op.result()->name());
  step.buffers = {in, out, scratch};
  step.host =
      [plan = PlanReduce(*kind, shape, *reduced, dtype)](void* const* bufs) {
        RunReduce(plan, bufs[0], bufs[1], bufs[2]);
        return absl::OkStatus();  // a planned reduction cannot fail
      };
  return step;
}

}  // namespace codegen
}  // namespace hgc
