// The portable kernels for the elementwise ops: unary math, binary arithmetic
// with numpy broadcasting, comparisons, select, gelu, clamp and cast.
//
// Floating-point elements are loaded exactly into double, the op is
// evaluated in double, and the result is rounded once to the result dtype
// (see runtime/portable/evaluate.h for why). Integer arithmetic is exact in
// int64 and wraps to the operand type on store.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/portable/kernels.h"
#include "support/status_macros.h"

namespace hgc {
namespace portable {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;

// The family member a kernel was called for; Internal when the dispatch
// (KernelFor) sent it an op of another family.
template <typename FamilyKind>
absl::StatusOr<FamilyKind> Family(std::optional<FamilyKind> k,
                                  const KernelArgs& args) {
  if (k.has_value()) return *k;
  return absl::InternalError(
      absl::StrCat("no such kernel for '", args.kind_name(), "'"));
}

double UnaryFloat(UnaryKind k, double x) {
  switch (k) {
    case UnaryKind::kRelu:
      return std::isnan(x) ? x : (x > 0 ? x : 0.0);
#define HGC_MATH_OP_KIND(e, name, reference, ...) \
  case UnaryKind::e:                              \
    return reference(x);
#include "ir/op_kinds.def"
    case UnaryKind::kNeg:
      return -x;
    case UnaryKind::kAbs:
      return std::fabs(x);
    case UnaryKind::kGelu:
    case UnaryKind::kClamp:
      break;  // their own kernels: EvalGelu, EvalClamp
  }
  return kNaN;
}

// One switch for both evaluation types: double for float operands, int64
// for s32/s8/u8 operands (exact; the caller wraps on store). The cases where
// float and integer semantics differ say so.
template <typename T>
T ApplyBinary(BinaryKind k, T a, T b) {
  constexpr bool kIsFloat = std::is_floating_point_v<T>;
  switch (k) {
    case BinaryKind::kAdd:
      return a + b;
    case BinaryKind::kSub:
      return a - b;
    case BinaryKind::kMul:
      return a * b;
    // Float max/min propagate NaN (numpy's maximum/minimum).
    case BinaryKind::kMax:
      if constexpr (kIsFloat) {
        if (std::isnan(a) || std::isnan(b)) return kNaN;
      }
      return a > b ? a : b;
    case BinaryKind::kMin:
      if constexpr (kIsFloat) {
        if (std::isnan(a) || std::isnan(b)) return kNaN;
      }
      return a < b ? a : b;
    // Div and pow are float-only (registry); EvalBinary refuses them on
    // integers, so integer division by zero never happens here.
    case BinaryKind::kDiv:
      if constexpr (kIsFloat) return a / b;
      break;
    // C's pow rules (pow(x, 0) = 1 even for NaN x, pow(1, y) = 1, ...) are
    // powf's: double only makes the value before the final rounding exact.
    case BinaryKind::kPow:
      if constexpr (kIsFloat) return std::pow(a, b);
      break;
  }
  if constexpr (kIsFloat) return kNaN;
  return 0;
}

// The cpp_operator column of ir/op_kinds.def.
template <typename T>
bool Compare(CompareKind k, T a, T b) {
  switch (k) {
#define HGC_COMPARE_ROW(e, name, operands, cpp_operator, ...) \
  case CompareKind::e:                                         \
    return a cpp_operator b;
#include "ir/op_kinds.def"
  }
  return false;
}

// Copies one element of `size` bytes.
inline void CopyElement(uint8_t* dst, const uint8_t* src, int64_t size) {
  switch (size) {
    case 1:
      *dst = *src;
      break;
    case 2:
      std::memcpy(dst, src, 2);
      break;
    case 4:
      std::memcpy(dst, src, 4);
      break;
    default:
      std::memcpy(dst, src, size);
      break;
  }
}

}  // namespace

// Both forms avoid 1 + (something close to -1), which cancels to 0 in
// double for x below about -5.9 (erf) or -7.5 (tanh) although the value is
// a normal f32 (gelu(-10) = -7.6e-23): 1 + erf(t) = erfc(-t) and
// 1 + tanh(u) = 2 / (1 + exp(-2u)).
double Gelu(double x, bool tanh_form) {
  if (tanh_form) {
    const double k = std::sqrt(2.0 / kPi);
    const double u = k * (x + 0.044715 * x * x * x);
    return x / (1.0 + std::exp(-2.0 * u));
  }
  return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
}

absl::StatusOr<Tensor> EvalUnary(const KernelArgs& args) {
  HGC_ASSIGN_OR_RETURN(UnaryKind k, Family(AsUnary(args.kind), args));
  const Tensor& x = args.operand(0);
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  const int64_t n = out.num_elements();
  if (IsFloat(x.dtype())) {
    for (int64_t i = 0; i < n; ++i) {
      out.SetDouble(i, UnaryFloat(k, LoadDouble(x, i)));
    }
    return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = LoadInt(x, i);
    switch (k) {
      case UnaryKind::kRelu:
        v = v > 0 ? v : 0;
        break;
      case UnaryKind::kNeg:
        v = -v;
        break;  // wraps on store
      case UnaryKind::kAbs:
        v = v < 0 ? -v : v;
        break;  // s8 -128 -> -128
#define HGC_MATH_OP_KIND(e, ...) case UnaryKind::e:
#include "ir/op_kinds.def"
      case UnaryKind::kGelu:
      case UnaryKind::kClamp:  // float-only (registry) or their own kernels
        return absl::InternalError(
            absl::StrCat("'", args.kind_name(), "' on ", DTypeName(x.dtype())));
    }
    StoreWrapped(out, i, v);
  }
  return out;
}

absl::StatusOr<Tensor> EvalBinary(const KernelArgs& args) {
  HGC_ASSIGN_OR_RETURN(BinaryKind k, Family(AsBinary(args.kind), args));
  const Tensor& a = args.operand(0);
  const Tensor& b = args.operand(1);
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  const Shape& shape = out.shape();
  StridedWalker w(shape);
  w.AddOperand(BroadcastStrides(a.shape(), shape));
  w.AddOperand(BroadcastStrides(b.shape(), shape));
  const int64_t n = out.num_elements();
  if (IsFloat(a.dtype())) {
    for (int64_t i = 0; i < n; ++i, w.Next()) {
      out.SetDouble(i, ApplyBinary<double>(k, LoadDouble(a, w.offset(0)),
                                           LoadDouble(b, w.offset(1))));
    }
  } else {
    if (k == BinaryKind::kDiv || k == BinaryKind::kPow) {
      return absl::InternalError(
          absl::StrCat("'", args.kind_name(), "' on integers"));
    }
    for (int64_t i = 0; i < n; ++i, w.Next()) {
      StoreWrapped(out, i,
                   ApplyBinary<int64_t>(k, LoadInt(a, w.offset(0)),
                                        LoadInt(b, w.offset(1))));
    }
  }
  return out;
}

absl::StatusOr<Tensor> EvalCompare(const KernelArgs& args) {
  HGC_ASSIGN_OR_RETURN(CompareKind k, Family(AsCompare(args.kind), args));
  const Tensor& a = args.operand(0);
  const Tensor& b = args.operand(1);
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  const Shape& shape = out.shape();
  StridedWalker w(shape);
  w.AddOperand(BroadcastStrides(a.shape(), shape));
  w.AddOperand(BroadcastStrides(b.shape(), shape));
  uint8_t* o = out.mutable_data<uint8_t>();
  const int64_t n = out.num_elements();
  const bool is_float = IsFloat(a.dtype());
  for (int64_t i = 0; i < n; ++i, w.Next()) {
    bool r =
        is_float
            ? Compare(k, LoadDouble(a, w.offset(0)), LoadDouble(b, w.offset(1)))
            : Compare(k, LoadInt(a, w.offset(0)), LoadInt(b, w.offset(1)));
    o[i] = r ? 1 : 0;
  }
  return out;
}

absl::StatusOr<Tensor> EvalSelect(const KernelArgs& args) {
  const Tensor& cond = args.operand(0);
  const Tensor& a = args.operand(1);
  const Tensor& b = args.operand(2);
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  const Shape& shape = out.shape();
  StridedWalker w(shape);
  w.AddOperand(BroadcastStrides(cond.shape(), shape));
  w.AddOperand(BroadcastStrides(a.shape(), shape));
  w.AddOperand(BroadcastStrides(b.shape(), shape));
  const int64_t size = DTypeSize(out.dtype());
  const uint8_t* c = cond.data<uint8_t>();
  uint8_t* o = out.mutable_raw();
  const int64_t n = out.num_elements();
  for (int64_t i = 0; i < n; ++i, w.Next()) {
    // Any nonzero byte counts as true.
    const uint8_t* src = c[w.offset(0)] != 0 ? a.raw() + w.offset(1) * size
                                             : b.raw() + w.offset(2) * size;
    CopyElement(o + i * size, src, size);
  }
  return out;
}

absl::StatusOr<Tensor> EvalGelu(const KernelArgs& args) {
  const Attribute* approx = args.Find("approximate");
  const bool tanh_form = approx != nullptr && approx->as_string() == "tanh";
  const Tensor& x = args.operand(0);
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  const int64_t n = out.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    out.SetDouble(i, Gelu(LoadDouble(x, i), tanh_form));
  }
  return out;
}

absl::StatusOr<Tensor> EvalClamp(const KernelArgs& args) {
  double lo = args.GetFloat("min", -kInf);
  double hi = args.GetFloat("max", kInf);
  const Tensor& x = args.operand(0);
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  if (!IsFloat(x.dtype())) {
    // Integer tensors: the bounds become the integers inside [min, max];
    // the (saturating) store keeps them in the dtype's range.
    lo = std::ceil(lo);
    hi = std::floor(hi);
  }
  const int64_t n = out.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    double v = LoadDouble(x, i);
    // numpy.clip order: max bound applied last; NaN passes through.
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    out.SetDouble(i, v);
  }
  return out;
}

absl::StatusOr<Tensor> EvalCast(const KernelArgs& args) {
  const Tensor& x = args.operand(0);
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  const int64_t n = out.num_elements();
  // Every source value is exact in double, so this is one rounding (or
  // saturation) to the target dtype.
  for (int64_t i = 0; i < n; ++i) out.SetDouble(i, LoadDouble(x, i));
  return out;
}

}  // namespace portable
}  // namespace hgc
