// The error-bound rules per op (reference/op_bounds.h): how far a correct
// implementation may be from the reference's value of one op, given its
// operands' values and bounds. This file picks the rule for an op kind;
// the rules and the arithmetic they share are in the files that
// reference/op_bounds_internal.h lists.
#include "reference/op_bounds.h"

#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/portable/kernels.h"
#include "reference/op_bounds_internal.h"
#include "support/status_macros.h"

namespace hgc {
namespace reference {

using op_bounds_internal::BroadcastOpBound;
using op_bounds_internal::CastBound;
using op_bounds_internal::Has;
using op_bounds_internal::LayernormBound;
using op_bounds_internal::MathFunctionBound;
using op_bounds_internal::MatmulBound;
using op_bounds_internal::NewBound;
using op_bounds_internal::QuantizeBound;
using op_bounds_internal::ReduceBound;
using op_bounds_internal::RunF32;
using op_bounds_internal::SoftmaxBound;
using op_bounds_internal::StoreBound;

// `e` (an f32 tensor) with every element re-judged by StoreBound against
// `value`, or no tensor where all are 0.
Tensor FinishBound(Tensor e, const Tensor& value) {
  if (!Has(e)) return Tensor();
  bool any = false;
  for (int64_t i = 0; i < e.num_elements(); ++i) {
    StoreBound(e, value, i, e.GetDouble(i));
    any = any || e.data<float>()[i] != 0;
  }
  return any ? std::move(e) : Tensor();
}

namespace {

// Integer add, sub, mul, neg, abs, matmul and reduce_sum wrap (design.md).
// Where an element's interval [r - E, r + E] passes its dtype's range, a
// result within E of the exact one may have wrapped to the range's other
// end (a quantized value one step off, times 24 in u8, lands 232 away), so
// the element may be anything there: E = inf.
bool Wraps(OpKind kind, DType dtype) {
  if (IsFloat(dtype) || dtype == DType::kBool) return false;
  return kind == OpKind::kAdd || kind == OpKind::kSub || kind == OpKind::kMul ||
         kind == OpKind::kNeg || kind == OpKind::kAbs ||
         kind == OpKind::kMatmul || kind == OpKind::kReduceSum;
}

// `e` (which may be an operand's bound: neg and abs pass theirs on) with
// E = inf where the interval passes the range.
Tensor WidenWrapped(const Tensor& e, const Tensor& r) {
  const double lo = static_cast<double>(portable::IntMin(r.dtype()));
  const double hi = static_cast<double>(portable::IntMax(r.dtype()));
  Tensor out = e.Clone();
  float* bound = out.mutable_data<float>();
  for (int64_t i = 0; i < r.num_elements(); ++i) {
    const double v = r.GetDouble(i);
    if (bound[i] > 0 && (v - bound[i] < lo || v + bound[i] > hi)) {
      bound[i] = std::numeric_limits<float>::infinity();
    }
  }
  return out;
}

// reshape, transpose, concat and slice move elements exactly: each
// element's bound is its source's, moved by the op's own kernel. An exact
// operand of a concat with inexact ones contributes zeros.
absl::StatusOr<Tensor> DataMovementBound(const Op& op,
                                         absl::Span<const Tensor> xs,
                                         absl::Span<const Tensor> es,
                                         const Tensor& r,
                                         const InterpretOptions& options) {
  bool any = false;
  for (const Tensor& e : es) any = any || Has(e);
  if (!any) return Tensor();
  std::vector<Tensor> bounds;
  for (size_t i = 0; i < es.size(); ++i) {
    if (Has(es[i])) {
      bounds.push_back(es[i]);
      continue;
    }
    HGC_ASSIGN_OR_RETURN(Tensor zeros,
                         NewBound(xs[i].shape(), options.max_tensor_bytes));
    float* z = zeros.mutable_data<float>();
    for (int64_t k = 0; k < zeros.num_elements(); ++k) z[k] = 0;
    bounds.push_back(std::move(zeros));
  }
  return RunF32(op.kind(), bounds, op.attrs(), r.shape(), options);
}

// E of one op's result, before WidenWrapped.
absl::StatusOr<Tensor> UnwrappedOpBound(const Op& op,
                                        absl::Span<const Tensor> xs,
                                        absl::Span<const Tensor> es,
                                        const Tensor& r,
                                        const InterpretOptions& options) {
  const int64_t max_bytes = options.max_tensor_bytes;
  switch (OpClassOf(op.kind_id())) {
    case OpClass::kConstant:
      return Tensor();
    case OpClass::kUnary:
      switch (*AsUnary(op.kind_id())) {
        case UnaryKind::kRelu:
        case UnaryKind::kNeg:
        case UnaryKind::kAbs:
        case UnaryKind::kClamp:
          if (!Has(es[0])) return Tensor();
          return es[0];  // Same shape; these ops neither round nor amplify.
#define HGC_MATH_OP_KIND(e, ...) case UnaryKind::e:
#include "ir/op_kinds.def"
        case UnaryKind::kGelu:
          return MathFunctionBound(op, xs[0], es[0], r, max_bytes);
      }
      break;
    case OpClass::kBinary:
    case OpClass::kComparison:
    case OpClass::kSelect:
      return BroadcastOpBound(op, xs, es, r, max_bytes);
    case OpClass::kCast:
      return CastBound(xs[0], es[0], r, max_bytes);
    case OpClass::kQuant:
      return QuantizeBound(op, xs[0], es[0], r, max_bytes);
    case OpClass::kMatmul:
      return MatmulBound(op, xs, es, r, options);
    case OpClass::kReduction:
      return ReduceBound(op, xs[0], es[0], r, options);
    case OpClass::kNormalization:
      if (op.kind_id() == OpKind::kSoftmax) {
        return SoftmaxBound(op, xs[0], es[0], r, max_bytes);
      }
      return LayernormBound(op, xs, es, r, max_bytes);
    case OpClass::kShape:
      return DataMovementBound(op, xs, es, r, options);
    case OpClass::kFusion:  // the interpreter loop runs its body
    case OpClass::kUnknown:
      break;
  }
  return absl::UnimplementedError(
      absl::StrCat("no error-bound rule for op '", op.kind(), "'"));
}

}  // namespace

// E of one op's result from its operands' values and bounds (fusion is
// handled by the interpreter loop).
absl::StatusOr<Tensor> OpBound(const Op& op, absl::Span<const Tensor> xs,
                               absl::Span<const Tensor> es, const Tensor& r,
                               const InterpretOptions& options) {
  HGC_ASSIGN_OR_RETURN(Tensor e, UnwrappedOpBound(op, xs, es, r, options));
  if (!Has(e) || !Wraps(op.kind_id(), r.dtype())) return e;
  return WidenWrapped(e, r);
}

}  // namespace reference
}  // namespace hgc
