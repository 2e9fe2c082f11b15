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

// The kinds the dispatch of EmitUnary*, EmitBinary and EmitElementwise
// handles (each dispatch's last case takes whatever is left, so a kind is
// listed here only once its case exists).
constexpr OpKind kUnaryKinds[] = {
    OpKind::kRelu, OpKind::kSigmoid, OpKind::kTanh,  OpKind::kExp,
    OpKind::kLog,  OpKind::kSqrt,    OpKind::kRsqrt, OpKind::kNeg,
    OpKind::kAbs,  OpKind::kGelu,    OpKind::kClamp};
constexpr OpKind kArithmeticKinds[] = {OpKind::kAdd, OpKind::kSub,
                                       OpKind::kMul, OpKind::kDiv,
                                       OpKind::kMax, OpKind::kMin};
constexpr OpKind kCompareKinds[] = {OpKind::kEqual, OpKind::kGreater,
                                    OpKind::kGreaterEqual, OpKind::kLess,
                                    OpKind::kLessEqual};
constexpr OpKind kOtherKinds[] = {OpKind::kSelect, OpKind::kCast,
                                  OpKind::kQuantize, OpKind::kDequantize};

template <size_t N>
bool Contains(const OpKind (&list)[N], OpKind kind) {
  for (OpKind k : list) {
    if (k == kind) return true;
  }
  return false;
}

OpKind KindOf(absl::string_view name) {
  return OpKindFromName(name).value_or(OpKind::kUnknown);
}

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
                                            absl::string_view kind,
                                            llvm::Value* x,
                                            const AttrMap& attrs) {
  if (kind == "relu") {
    // ugt keeps NaN; relu(-0) is +0 as in the reference (x > 0 ? x : 0).
    llvm::Value* zero = F32Const(x->getType(), 0.0);
    return b.CreateSelect(b.CreateFCmpUGT(x, zero), x, zero);
  }
  if (kind == "sigmoid") return EmitSigmoid(b, x);
  if (kind == "tanh") return EmitTanh(b, x);
  if (kind == "exp") return EmitExp(b, x);
  if (kind == "log") return EmitLog(b, x);
  if (kind == "sqrt") return EmitSqrt(b, x);
  if (kind == "rsqrt") return EmitRsqrt(b, x);
  if (kind == "neg") return b.CreateFNeg(x);
  if (kind == "abs") return b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  if (kind == "gelu") return EmitGelu(b, x, attrs);
  HGC_ASSIGN_OR_RETURN(std::optional<double> lo,
                       NumberAttr(kind, attrs, "min"));
  HGC_ASSIGN_OR_RETURN(std::optional<double> hi,
                       NumberAttr(kind, attrs, "max"));
  return ClampFloat(b, x, lo, hi);
}

absl::StatusOr<llvm::Value*> EmitUnaryInt(llvm::IRBuilder<>& b,
                                          absl::string_view kind, DType dtype,
                                          llvm::Value* x,
                                          const AttrMap& attrs) {
  const bool u = IsUnsigned(dtype);
  if (kind == "relu") {
    if (u) return x;
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x,
                                   IntConst(x->getType(), 0));
  }
  if (kind == "neg") return b.CreateNeg(x);  // wraps, as the reference
  if (kind == "abs") {
    if (u) return x;
    // is_int_min_poison = false: abs(INT_MIN) wraps to INT_MIN.
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b.getFalse());
  }
  if (kind == "clamp") {
    HGC_ASSIGN_OR_RETURN(std::optional<double> lo,
                         NumberAttr(kind, attrs, "min"));
    HGC_ASSIGN_OR_RETURN(std::optional<double> hi,
                         NumberAttr(kind, attrs, "max"));
    return ClampInt(b, x, dtype, lo, hi);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      kind, " takes floating-point operands, found ", DTypeName(dtype)));
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

bool IsElementalUnary(OpKind kind) { return Contains(kUnaryKinds, kind); }

bool IsElementalUnary(absl::string_view kind) {
  return IsElementalUnary(KindOf(kind));
}

bool IsElementalBinary(OpKind kind) {
  return Contains(kArithmeticKinds, kind) || Contains(kCompareKinds, kind);
}

bool IsElementalBinary(absl::string_view kind) {
  return IsElementalBinary(KindOf(kind));
}

bool IsElementalOp(OpKind kind) {
  return IsElementalUnary(kind) || IsElementalBinary(kind) ||
         Contains(kOtherKinds, kind);
}

bool IsElementalOp(absl::string_view kind) {
  return IsElementalOp(KindOf(kind));
}

absl::StatusOr<llvm::Value*> EmitUnary(llvm::IRBuilder<>& b,
                                       absl::string_view kind, DType dtype,
                                       llvm::Value* x, const AttrMap& attrs) {
  if (!IsElementalUnary(kind)) {
    return absl::UnimplementedError(
        absl::StrCat("no elemental emitter for unary op '", kind, "'"));
  }
  if (dtype == DType::kBool) {
    return absl::InvalidArgumentError(
        absl::StrCat(kind, " does not take bool operands"));
  }
  HGC_RETURN_IF_ERROR(CheckOperand(kind, dtype, x));
  if (IsFloat(dtype)) return EmitUnaryFloat(b, kind, x, attrs);
  return EmitUnaryInt(b, kind, dtype, x, attrs);
}

absl::StatusOr<llvm::Value*> EmitBinary(llvm::IRBuilder<>& b,
                                        absl::string_view kind, DType dtype,
                                        llvm::Value* lhs, llvm::Value* rhs) {
  if (!IsElementalBinary(kind)) {
    return absl::UnimplementedError(
        absl::StrCat("no elemental emitter for binary op '", kind, "'"));
  }
  HGC_RETURN_IF_ERROR(CheckOperand(kind, dtype, lhs));
  HGC_RETURN_IF_ERROR(CheckOperand(kind, dtype, rhs));
  if (lhs->getType() != rhs->getType()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kind, ": operands have different shapes"));
  }
  if (IsFloat(dtype)) {
    if (kind == "add") return b.CreateFAdd(lhs, rhs);
    if (kind == "sub") return b.CreateFSub(lhs, rhs);
    if (kind == "mul") return b.CreateFMul(lhs, rhs);
    if (kind == "div") return b.CreateFDiv(lhs, rhs);
    if (kind == "max" || kind == "min") {
      // a > b ? a : b (ties give b, as the reference), then NaN if either
      // is NaN: llvm.maximum would order -0 < +0 and differ on ties.
      llvm::Value* pick =
          kind == "max" ? b.CreateFCmpOGT(lhs, rhs) : b.CreateFCmpOLT(lhs, rhs);
      llvm::Value* r = b.CreateSelect(pick, lhs, rhs);
      return b.CreateSelect(b.CreateFCmpUNO(lhs, rhs), b.CreateFAdd(lhs, rhs),
                            r);
    }
    if (kind == "equal") return b.CreateFCmpOEQ(lhs, rhs);
    if (kind == "greater") return b.CreateFCmpOGT(lhs, rhs);
    if (kind == "greater_equal") return b.CreateFCmpOGE(lhs, rhs);
    if (kind == "less") return b.CreateFCmpOLT(lhs, rhs);
    return b.CreateFCmpOLE(lhs, rhs);
  }
  const bool u = IsUnsigned(dtype);
  if (kind == "equal") return b.CreateICmpEQ(lhs, rhs);
  if (kind == "greater") {
    return u ? b.CreateICmpUGT(lhs, rhs) : b.CreateICmpSGT(lhs, rhs);
  }
  if (kind == "greater_equal") {
    return u ? b.CreateICmpUGE(lhs, rhs) : b.CreateICmpSGE(lhs, rhs);
  }
  if (kind == "less") {
    return u ? b.CreateICmpULT(lhs, rhs) : b.CreateICmpSLT(lhs, rhs);
  }
  if (kind == "less_equal") {
    return u ? b.CreateICmpULE(lhs, rhs) : b.CreateICmpSLE(lhs, rhs);
  }
  if (dtype == DType::kBool || kind == "div") {
    return absl::InvalidArgumentError(
        absl::StrCat(kind, " does not take ", DTypeName(dtype), " operands"));
  }
  if (kind == "add") return b.CreateAdd(lhs, rhs);
  if (kind == "sub") return b.CreateSub(lhs, rhs);
  if (kind == "mul") return b.CreateMul(lhs, rhs);
  if (kind == "max") {
    return b.CreateBinaryIntrinsic(
        u ? llvm::Intrinsic::umax : llvm::Intrinsic::smax, lhs, rhs);
  }
  return b.CreateBinaryIntrinsic(
      u ? llvm::Intrinsic::umin : llvm::Intrinsic::smin, lhs, rhs);
}

llvm::Value* EmitSelect(llvm::IRBuilder<>& b, llvm::Value* cond,
                        llvm::Value* on_true, llvm::Value* on_false) {
  return b.CreateSelect(cond, on_true, on_false);
}

absl::StatusOr<llvm::Value*> EmitElementwise(
    llvm::IRBuilder<>& b, absl::string_view kind,
    const std::vector<DType>& operand_dtypes, DType result_dtype,
    const std::vector<llvm::Value*>& operands, const AttrMap& attrs,
    const CastOptions& cast_options) {
  const size_t arity = IsElementalUnary(kind) || kind == "cast" ||
                               kind == "quantize" || kind == "dequantize"
                           ? 1
                       : kind == "select" ? 3
                                          : 2;
  if (!IsElementalOp(kind)) {
    return absl::UnimplementedError(
        absl::StrCat("no elemental emitter for op '", kind, "'"));
  }
  if (operands.size() != arity || operand_dtypes.size() != arity) {
    return absl::InvalidArgumentError(absl::StrCat(
        kind, " takes ", arity, " operands, got ", operands.size()));
  }
  const DType dtype = operand_dtypes[0];
  llvm::Value* x = operands[0];
  llvm::Value* r = nullptr;
  if (kind == "select") {
    // The branches already hold values of the result dtype.
    HGC_RETURN_IF_ERROR(CheckOperand(kind, DType::kBool, x));
    return EmitSelect(b, x, operands[1], operands[2]);
  } else if (kind == "cast") {
    HGC_RETURN_IF_ERROR(CheckOperand(kind, dtype, x));
    // Floats arrive as f32 holding a value of their dtype exactly.
    HGC_ASSIGN_OR_RETURN(r, EmitCast(b, IsFloat(dtype) ? DType::kF32 : dtype,
                                     result_dtype, x, cast_options));
    if (result_dtype == DType::kBF16 || result_dtype == DType::kF16) {
      HGC_ASSIGN_OR_RETURN(r, EmitCast(b, result_dtype, DType::kF32, r));
    }
    return r;
  } else if (kind == "quantize") {
    HGC_RETURN_IF_ERROR(CheckOperand(kind, DType::kF32, x));
    HGC_ASSIGN_OR_RETURN(double scale,
                         ScalarQuantAttr(kind, attrs, "scale", 1));
    HGC_ASSIGN_OR_RETURN(double zp,
                         ScalarQuantAttr(kind, attrs, "zero_point", 0));
    return EmitQuantize(
        b, x, F32Const(x->getType(), scale),
        IntConst(IntTypeLike(x->getType(), 32), static_cast<int64_t>(zp)),
        result_dtype);
  } else if (kind == "dequantize") {
    HGC_RETURN_IF_ERROR(CheckOperand(kind, dtype, x));
    HGC_ASSIGN_OR_RETURN(double scale,
                         ScalarQuantAttr(kind, attrs, "scale", 1));
    HGC_ASSIGN_OR_RETURN(double zp,
                         ScalarQuantAttr(kind, attrs, "zero_point", 0));
    llvm::Type* f32 = WithElementType(x->getType(), b.getFloatTy());
    return EmitDequantize(
        b, x, dtype, F32Const(f32, scale),
        IntConst(IntTypeLike(x->getType(), 32), static_cast<int64_t>(zp)));
  } else if (arity == 1) {
    HGC_ASSIGN_OR_RETURN(r, EmitUnary(b, kind, dtype, x, attrs));
  } else {
    HGC_ASSIGN_OR_RETURN(r, EmitBinary(b, kind, dtype, x, operands[1]));
  }
  return RoundToDType(b, r, result_dtype, cast_options);
}

}  // namespace codegen
}  // namespace hgc
