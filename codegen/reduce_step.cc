#include "codegen/reduce_step.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ir/ops/op_helpers.h"
#include "support/float16.h"

namespace hgc {
namespace codegen {
namespace {

void Accumulate(ReduceKind kind, double v, double& a) {
  if (kind != ReduceKind::kMax) {
    a += v;
  } else if (std::isnan(v) || v > a) {
    a = v;  // NaN propagates: once NaN, `v > a` never replaces it.
  }
}

// Input elements as exact doubles.
double ToDouble(float x) { return x; }
struct Bf16Bits {
  uint16_t bits;
};
double ToDouble(Bf16Bits x) { return Bf16ToFloat(x.bits); }
struct HalfBits {
  uint16_t bits;
};
double ToDouble(HalfBits x) { return HalfToFloat(x.bits); }

// Walks dims[d..] of `in`, accumulating into `acc`.
template <typename Elem>
void Walk(const ReducePlan& plan, size_t d, const Elem*& in, double* acc) {
  const int64_t n = plan.dims[d];
  const int64_t stride = plan.out_strides[d];
  if (d + 1 == plan.dims.size()) {
    for (int64_t i = 0; i < n; ++i) {
      Accumulate(plan.kind, ToDouble(*in++), acc[i * stride]);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) Walk(plan, d + 1, in, acc + i * stride);
}

// Stores output element o: rounded once to the dtype (bf16 / f16 through
// f32 rounded to odd, as the reference's StoreDouble).
void Store(DType dtype, double v, void* out, int64_t o) {
  switch (dtype) {
    case DType::kBF16:
      static_cast<uint16_t*>(out)[o] = FloatToBf16(RoundToOddF32(v));
      break;
    case DType::kF16:
      static_cast<uint16_t*>(out)[o] = FloatToHalf(RoundToOddF32(v));
      break;
    default:
      static_cast<float*>(out)[o] = static_cast<float>(v);
      break;
  }
}

bool IsFloatType(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kBF16 || dtype == DType::kF16;
}

absl::StatusOr<ReduceKind> KindOf(const Op& op) {
  if (op.kind_id() == OpKind::kReduceSum) return ReduceKind::kSum;
  if (op.kind_id() == OpKind::kReduceMax) return ReduceKind::kMax;
  if (op.kind_id() == OpKind::kReduceMean) return ReduceKind::kMean;
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

void RunReduce(const ReducePlan& plan, const void* in, void* out, double* acc) {
  const double init = plan.kind == ReduceKind::kMax
                          ? -std::numeric_limits<double>::infinity()
                          : 0.0;
  for (int64_t o = 0; o < plan.out_elements; ++o) acc[o] = init;
  if (plan.in_elements > 0) {
    switch (plan.dtype) {
      case DType::kBF16: {
        const auto* x = static_cast<const Bf16Bits*>(in);
        Walk(plan, 0, x, acc);
        break;
      }
      case DType::kF16: {
        const auto* x = static_cast<const HalfBits*>(in);
        Walk(plan, 0, x, acc);
        break;
      }
      default: {
        const auto* x = static_cast<const float*>(in);
        Walk(plan, 0, x, acc);
        break;
      }
    }
  }
  for (int64_t o = 0; o < plan.out_elements; ++o) {
    // A mean over zero elements is 0 / 0 = NaN, as in the reference.
    const double v = plan.kind == ReduceKind::kMean
                         ? acc[o] / static_cast<double>(plan.count)
                         : acc[o];
    Store(plan.dtype, v, out, o);
  }
}

int64_t ReduceScratchBytes(const Op& op) {
  absl::StatusOr<int64_t> n = CheckedNumElements(op.result()->type().shape);
  return n.ok() ? *n * static_cast<int64_t>(sizeof(double)) : 0;
}

absl::StatusOr<Step> ReduceStep(const Op& op, BufferRef in, BufferRef out,
                                BufferRef scratch) {
  const DType dtype = op.operand(0)->type().dtype;
  if (op.num_operands() != 1 || !IsFloatType(dtype) ||
      op.result()->type().dtype != dtype) {
    return absl::UnimplementedError("reduction of a value that is not a float");
  }
  absl::StatusOr<ReduceKind> kind = KindOf(op);
  if (!kind.ok()) return kind.status();
  const Shape& shape = op.operand(0)->type().shape;
  absl::StatusOr<std::vector<bool>> reduced =
      ReducedAxes(op.kind(), op.FindAttr("axes"), shape.size());
  if (!reduced.ok()) return reduced.status();
  Step step;
  step.name = absl::StrCat(op.kind(), ".", op.result()->name());
  step.buffers = {in, out, scratch};
  step.host =
      [plan = PlanReduce(*kind, shape, *reduced, dtype)](void* const* bufs) {
        RunReduce(plan, bufs[0], bufs[1], static_cast<double*>(bufs[2]));
        return absl::OkStatus();  // a planned reduction cannot fail
      };
  return step;
}

}  // namespace codegen
}  // namespace hgc
