#include "codegen/llvm/elemental_emitter.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "codegen/llvm/llvm_util.h"
#include "codegen/llvm/vector_math.h"
#include "llvm/IR/Intrinsics.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

bool IsUnsigned(DType dtype) {
  return dtype == DType::kU8 || dtype == DType::kBool;
}

// Floats compute in f32 whatever their storage dtype (see the header).
absl::Status CheckOperand(absl::string_view kind, DType dtype, llvm::Value* v) {
  llvm::LLVMContext& ctx = v->getContext();
  llvm::Type* want =
      IsFloat(dtype) ? llvm::Type::getFloatTy(ctx) : ComputeType(ctx, dtype);
  if (ElementType(v->getType()) == want) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(kind, ": ", DTypeName(dtype), " operand has LLVM type ",
                   PrintToString(*v->getType()), ", expected elements of ",
                   PrintToString(*want)));
}

// The number attribute `name`, if present; InvalidArgument if not a number.
absl::StatusOr<std::optional<double>> NumberAttr(absl::string_view kind,
                                                 const AttrMap& attrs,
                                                 absl::string_view name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return std::optional<double>();
  if (!it->second.is_number()) {
    return absl::InvalidArgumentError(absl::StrCat(kind, ": attribute '", name,
                                                   "' must be a number, found ",
                                                   it->second.ToString()));
  }
  return std::optional<double>(it->second.as_number());
}

// numpy.clip on floats: x < min -> min, then x > max -> max; NaN passes.
// Comparing against the f32-rounded bounds is exact: for a float x,
// x < lo <=> x < round(lo) unless x == round(lo), where both give x.
llvm::Value* ClampFloat(llvm::IRBuilder<>& b, llvm::Value* x,
                        std::optional<double> lo, std::optional<double> hi) {
  if (lo) {
    llvm::Value* c = F32Const(x->getType(), *lo);
    x = b.CreateSelect(b.CreateFCmpOLT(x, c), c, x);
  }
  if (hi) {
    llvm::Value* c = F32Const(x->getType(), *hi);
    x = b.CreateSelect(b.CreateFCmpOGT(x, c), c, x);
  }
  return x;
}

// Integer clamp: the bounds become the integers inside [min, max], kept in
// the dtype's range (the reference clamps in double, then saturates).
llvm::Value* ClampInt(llvm::IRBuilder<>& b, llvm::Value* x, DType dtype,
                      std::optional<double> lo, std::optional<double> hi) {
  const double tmin = dtype == DType::kS32  ? -2147483648.0
                      : dtype == DType::kS8 ? -128.0
                                            : 0.0;
  const double tmax = dtype == DType::kS32  ? 2147483647.0
                      : dtype == DType::kS8 ? 127.0
                                            : 255.0;
  auto bound = [&](double v) {
    return IntConst(x->getType(),
                    static_cast<int64_t>(std::fmin(std::fmax(v, tmin), tmax)));
  };
  const bool u = IsUnsigned(dtype);
  if (lo) {
    x = b.CreateBinaryIntrinsic(
        u ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, x,
        bound(std::ceil(*lo)));
  }
  if (hi) {
    x = b.CreateBinaryIntrinsic(
        u ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, x,
        bound(std::floor(*hi)));
  }
  return x;
}

absl::StatusOr<llvm::Value*> EmitGelu(llvm::IRBuilder<>& b, llvm::Value* x,
                                      const AttrMap& attrs) {
  auto it = attrs.find("approximate");
  if (it == attrs.end()) return EmitGeluErf(b, x);
  if (it->second.is_string() && it->second.as_string() == "none") {
    return EmitGeluErf(b, x);
  }
  if (it->second.is_string() && it->second.as_string() == "tanh") {
    return EmitGeluTanh(b, x);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("gelu: approximate must be \"none\" or \"tanh\", found ",
                   it->second.ToString()));
}

absl::StatusOr<llvm::Value*> EmitUnaryFloat(llvm::IRBuilder<>& b,
                                            UnaryKind kind, llvm::Value* x,
                                            const AttrMap& attrs) {
  switch (kind) {
    case UnaryKind::kRelu: {
      // ugt keeps NaN; relu(-0) is +0 as in the reference (x > 0 ? x : 0).
      llvm::Value* zero = F32Const(x->getType(), 0.0);
      return b.CreateSelect(b.CreateFCmpUGT(x, zero), x, zero);
    }
#define HGC_MATH_OP_KIND(e, name, reference, emitter, ...) \
  case UnaryKind::e:                                       \
    return emitter(b, x);
#include "ir/op_kinds.def"
    case UnaryKind::kNeg:
      return b.CreateFNeg(x);
    case UnaryKind::kAbs:
      return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    case UnaryKind::kGelu:
      return EmitGelu(b, x, attrs);
    case UnaryKind::kClamp: {
      HGC_ASSIGN_OR_RETURN(std::optional<double> lo,
                           NumberAttr("clamp", attrs, "min"));
      HGC_ASSIGN_OR_RETURN(std::optional<double> hi,
                           NumberAttr("clamp", attrs, "max"));
      return ClampFloat(b, x, lo, hi);
    }
  }
  return absl::InternalError("unreachable");
}

absl::StatusOr<llvm::Value*> EmitUnaryInt(llvm::IRBuilder<>& b, UnaryKind kind,
                                          DType dtype, llvm::Value* x,
                                          const AttrMap& attrs) {
  const bool u = IsUnsigned(dtype);
  switch (kind) {
    case UnaryKind::kRelu:
      if (u) return x;
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x,
                                     IntConst(x->getType(), 0));
    case UnaryKind::kNeg:
      return b.CreateNeg(x);  // wraps, as the reference
    case UnaryKind::kAbs:
      if (u) return x;
      // is_int_min_poison = false: abs(INT_MIN) wraps to INT_MIN.
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b.getFalse());
    case UnaryKind::kClamp: {
      HGC_ASSIGN_OR_RETURN(std::optional<double> lo,
                           NumberAttr("clamp", attrs, "min"));
      HGC_ASSIGN_OR_RETURN(std::optional<double> hi,
                           NumberAttr("clamp", attrs, "max"));
      return ClampInt(b, x, dtype, lo, hi);
    }
#define HGC_MATH_OP_KIND(e, ...) case UnaryKind::e:
#include "ir/op_kinds.def"
    case UnaryKind::kGelu:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(OpKindName(ToOpKind(kind)),
                   " takes floating-point operands, found ", DTypeName(dtype)));
}

// The scalar quantization attribute `name` (default `fallback`).
absl::StatusOr<double> ScalarQuantAttr(absl::string_view kind,
                                       const AttrMap& attrs,
                                       absl::string_view name,
                                       double fallback) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return fallback;
  if (it->second.is_list()) {
    return absl::UnimplementedError(absl::StrCat(
        kind, ": per-channel '", name,
        "' needs per-lane vectors; call EmitQuantize/EmitDequantize"));
  }
  HGC_ASSIGN_OR_RETURN(std::optional<double> v, NumberAttr(kind, attrs, name));
  return *v;
}

}  // namespace

llvm::Value* RoundToDType(llvm::IRBuilder<>& b, llvm::Value* x, DType dtype,
                          const CastOptions& options) {
  switch (dtype) {
    case DType::kBF16:
      return EmitBf16ToF32(b, EmitF32ToBf16(b, x, options));
    case DType::kF16:
      return EmitF16ToF32(b, EmitF32ToF16(b, x));
    default:
      return x;
  }
}

bool IsElementalOp(OpKind kind) {
  switch (OpClassOf(kind)) {
    case OpClass::kUnary:
    case OpClass::kBinary:
    case OpClass::kComparison:
    case OpClass::kSelect:
    case OpClass::kCast:
    case OpClass::kQuant:
      return true;
    case OpClass::kMatmul:
    case OpClass::kNormalization:
    case OpClass::kReduction:
    case OpClass::kShape:
    case OpClass::kConstant:
    case OpClass::kFusion:
    case OpClass::kUnknown:
      return false;
  }
  return false;
}

absl::StatusOr<llvm::Value*> EmitUnary(llvm::IRBuilder<>& b, UnaryKind kind,
                                       DType dtype, llvm::Value* x,
                                       const AttrMap& attrs) {
  const absl::string_view name = OpKindName(ToOpKind(kind));
  if (dtype == DType::kBool) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " does not take bool operands"));
  }
  HGC_RETURN_IF_ERROR(CheckOperand(name, dtype, x));
  if (IsFloat(dtype)) return EmitUnaryFloat(b, kind, x, attrs);
  return EmitUnaryInt(b, kind, dtype, x, attrs);
}

namespace {

// max / min on floats: a > b ? a : b (ties give b, as the reference), then
// NaN if either is NaN: llvm.maximum would order -0 < +0 and differ on ties.
llvm::Value* FloatMaxMin(llvm::IRBuilder<>& b, bool is_max, llvm::Value* lhs,
                         llvm::Value* rhs) {
  llvm::Value* pick =
      is_max ? b.CreateFCmpOGT(lhs, rhs) : b.CreateFCmpOLT(lhs, rhs);
  llvm::Value* r = b.CreateSelect(pick, lhs, rhs);
  return b.CreateSelect(b.CreateFCmpUNO(lhs, rhs), b.CreateFAdd(lhs, rhs), r);
}

absl::Status CheckBinaryOperands(absl::string_view name, DType dtype,
                                 llvm::Value* lhs, llvm::Value* rhs) {
  HGC_RETURN_IF_ERROR(CheckOperand(name, dtype, lhs));
  HGC_RETURN_IF_ERROR(CheckOperand(name, dtype, rhs));
  if (lhs->getType() != rhs->getType()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": operands have different shapes"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<llvm::Value*> EmitBinary(llvm::IRBuilder<>& b, BinaryKind kind,
                                        DType dtype, llvm::Value* lhs,
                                        llvm::Value* rhs) {
  const absl::string_view name = OpKindName(ToOpKind(kind));
  HGC_RETURN_IF_ERROR(CheckBinaryOperands(name, dtype, lhs, rhs));
  if (IsFloat(dtype)) {
    switch (kind) {
      case BinaryKind::kAdd:
        return b.CreateFAdd(lhs, rhs);
      case BinaryKind::kSub:
        return b.CreateFSub(lhs, rhs);
      case BinaryKind::kMul:
        return b.CreateFMul(lhs, rhs);
      case BinaryKind::kDiv:
        return b.CreateFDiv(lhs, rhs);
      case BinaryKind::kMax:
      case BinaryKind::kMin:
        return FloatMaxMin(b, kind == BinaryKind::kMax, lhs, rhs);
      // A call to libm's powf per lane (the JIT resolves it from the
      // process): within 1 ulp of the reference, the row's ulps in
      // reference/elementwise_bounds.cc (kPowUlps).
      case BinaryKind::kPow:
        return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, lhs, rhs);
    }
  }
  const bool u = IsUnsigned(dtype);
  if (dtype == DType::kBool || kind == BinaryKind::kDiv ||
      kind == BinaryKind::kPow) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " does not take ", DTypeName(dtype), " operands"));
  }
  switch (kind) {
    case BinaryKind::kAdd:
      return b.CreateAdd(lhs, rhs);
    case BinaryKind::kSub:
      return b.CreateSub(lhs, rhs);
    case BinaryKind::kMul:
      return b.CreateMul(lhs, rhs);
    case BinaryKind::kMax:
      return b.CreateBinaryIntrinsic(
          u ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, lhs, rhs);
    case BinaryKind::kMin:
      return b.CreateBinaryIntrinsic(
          u ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, lhs, rhs);
    case BinaryKind::kDiv:
    case BinaryKind::kPow:
      break;  // refused above
  }
  return absl::InternalError("unreachable");
}

absl::StatusOr<llvm::Value*> EmitCompare(llvm::IRBuilder<>& b, CompareKind kind,
                                         DType dtype, llvm::Value* lhs,
                                         llvm::Value* rhs) {
  HGC_RETURN_IF_ERROR(
      CheckBinaryOperands(OpKindName(ToOpKind(kind)), dtype, lhs, rhs));
  // The fcmp, icmp_signed and icmp_unsigned columns of ir/op_kinds.def.
  const bool is_float = IsFloat(dtype);
  const bool is_unsigned = IsUnsigned(dtype);
  switch (kind) {
#define HGC_COMPARE_ROW(e, name, operands, cpp_operator, fcmp, icmp_signed, \
                        icmp_unsigned, ...)                                 \
  case CompareKind::e:                                                      \
    return is_float      ? b.CreateFCmp(llvm::CmpInst::fcmp, lhs, rhs)      \
           : is_unsigned ? b.CreateICmp(llvm::CmpInst::icmp_unsigned, lhs,  \
                                        rhs)                                \
                         : b.CreateICmp(llvm::CmpInst::icmp_signed, lhs, rhs);
#include "ir/op_kinds.def"
  }
  return absl::InternalError("unreachable");
}

llvm::Value* EmitSelect(llvm::IRBuilder<>& b, llvm::Value* cond,
                        llvm::Value* on_true, llvm::Value* on_false) {
  return b.CreateSelect(cond, on_true, on_false);
}

namespace {

// The operands EmitElementwise takes for `kind` (an IsElementalOp kind).
size_t ElementwiseArity(OpKind kind) {
  if (IsBinary(kind)) return 2;
  return kind == OpKind::kSelect ? 3 : 1;
}

absl::StatusOr<llvm::Value*> EmitQuantOp(llvm::IRBuilder<>& b, OpKind kind,
                                         DType dtype, DType result_dtype,
                                         llvm::Value* x, const AttrMap& attrs,
                                         const CastOptions& cast_options) {
  const absl::string_view name = OpKindName(kind);
  HGC_ASSIGN_OR_RETURN(double scale, ScalarQuantAttr(name, attrs, "scale", 1));
  HGC_ASSIGN_OR_RETURN(double zp,
                       ScalarQuantAttr(name, attrs, "zero_point", 0));
  llvm::Value* zero_point =
      IntConst(IntTypeLike(x->getType(), 32), static_cast<int64_t>(zp));
  if (kind == OpKind::kQuantize) {
    HGC_RETURN_IF_ERROR(CheckOperand(name, DType::kF32, x));
    return EmitQuantize(b, x, F32Const(x->getType(), scale), zero_point,
                        result_dtype, cast_options);
  }
  HGC_RETURN_IF_ERROR(CheckOperand(name, dtype, x));
  llvm::Type* f32 = WithElementType(x->getType(), b.getFloatTy());
  return EmitDequantize(b, x, dtype, F32Const(f32, scale), zero_point);
}

absl::StatusOr<llvm::Value*> EmitCastOp(llvm::IRBuilder<>& b, DType dtype,
                                        DType result_dtype, llvm::Value* x,
                                        const CastOptions& cast_options) {
  HGC_RETURN_IF_ERROR(CheckOperand("cast", dtype, x));
  // Floats arrive as f32 holding a value of their dtype exactly.
  HGC_ASSIGN_OR_RETURN(llvm::Value * r,
                       EmitCast(b, IsFloat(dtype) ? DType::kF32 : dtype,
                                result_dtype, x, cast_options));
  if (result_dtype == DType::kBF16 || result_dtype == DType::kF16) {
    HGC_ASSIGN_OR_RETURN(r, EmitCast(b, result_dtype, DType::kF32, r));
  }
  return r;
}

}  // namespace

absl::StatusOr<llvm::Value*> EmitElementwise(
    llvm::IRBuilder<>& b, OpKind kind, const std::vector<DType>& operand_dtypes,
    DType result_dtype, const std::vector<llvm::Value*>& operands,
    const AttrMap& attrs, const CastOptions& cast_options) {
  if (!IsElementalOp(kind)) {
    return absl::UnimplementedError(
        absl::StrCat("no elemental emitter for op '", OpKindName(kind), "'"));
  }
  const size_t arity = ElementwiseArity(kind);
  if (operands.size() != arity || operand_dtypes.size() != arity) {
    return absl::InvalidArgumentError(absl::StrCat(OpKindName(kind), " takes ",
                                                   arity, " operands, got ",
                                                   operands.size()));
  }
  const DType dtype = operand_dtypes[0];
  llvm::Value* x = operands[0];
  llvm::Value* r = nullptr;
  switch (OpClassOf(kind)) {
    case OpClass::kSelect:
      // The branches already hold values of the result dtype.
      HGC_RETURN_IF_ERROR(CheckOperand("select", DType::kBool, x));
      return EmitSelect(b, x, operands[1], operands[2]);
    case OpClass::kCast:
      return EmitCastOp(b, dtype, result_dtype, x, cast_options);
    case OpClass::kQuant:
      return EmitQuantOp(b, kind, dtype, result_dtype, x, attrs,
                         cast_options);
    case OpClass::kUnary: {
      HGC_ASSIGN_OR_RETURN(r, EmitUnary(b, *AsUnary(kind), dtype, x, attrs));
      break;
    }
    case OpClass::kBinary: {
      HGC_ASSIGN_OR_RETURN(
          r, EmitBinary(b, *AsBinary(kind), dtype, x, operands[1]));
      break;
    }
    case OpClass::kComparison: {
      HGC_ASSIGN_OR_RETURN(
          r, EmitCompare(b, *AsCompare(kind), dtype, x, operands[1]));
      break;
    }
    case OpClass::kMatmul:
    case OpClass::kNormalization:
    case OpClass::kReduction:
    case OpClass::kShape:
    case OpClass::kConstant:
    case OpClass::kFusion:
    case OpClass::kUnknown:
      return absl::InternalError("not elemental");  // IsElementalOp refused
  }
  return RoundToDType(b, r, result_dtype, cast_options);
}

}  // namespace codegen
}  // namespace hgc
