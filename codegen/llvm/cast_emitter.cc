#include "codegen/llvm/cast_emitter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/llvm/llvm_util.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace hgc {
namespace codegen {
namespace {

struct IntRange {
  int64_t lo, hi;
};

IntRange RangeOf(DType dtype) {
  switch (dtype) {
    case DType::kS8:
      return {-128, 127};
    case DType::kU8:
      return {0, 255};
    case DType::kBool:
      return {0, 1};
    default:
      return {INT32_MIN, INT32_MAX};
  }
}

bool IsSigned(DType dtype) {
  return dtype == DType::kS32 || dtype == DType::kS8;
}

llvm::Type* F32Like(llvm::Value* x) {
  return WithElementType(x->getType(), llvm::Type::getFloatTy(x->getContext()));
}

// Float `x` with NaN lanes -> `lo`, others clamped to [lo, hi]: the
// compare+select form is exactly vmaxps/vminps.
llvm::Value* ClampOrdered(llvm::IRBuilder<>& b, llvm::Value* x, double lo,
                          double hi) {
  llvm::Value* l = F32Const(x->getType(), lo);
  llvm::Value* h = F32Const(x->getType(), hi);
  llvm::Value* r = b.CreateSelect(b.CreateFCmpOGT(x, l), x, l);
  return b.CreateSelect(b.CreateFCmpOLT(r, h), r, h);
}

// Integer `x` (dtype `from`) saturated into `to`'s range and resized.
llvm::Value* SaturateInt(llvm::IRBuilder<>& b, llvm::Value* x, DType from,
                         DType to) {
  const IntRange src = RangeOf(from), dst = RangeOf(to);
  llvm::Type* wide = IntTypeLike(x->getType(), 32);
  // Widen to i32 first (sign by source), clamp there, then truncate: no
  // intermediate can wrap since every source value fits i32.
  llvm::Value* v =
      x->getType()->getScalarSizeInBits() < 32
          ? (IsSigned(from) ? b.CreateSExt(x, wide) : b.CreateZExt(x, wide))
          : x;
  if (dst.lo > src.lo) {
    v = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, v,
                                IntConst(wide, dst.lo));
  }
  if (dst.hi < src.hi) {
    v = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, v,
                                IntConst(wide, dst.hi));
  }
  llvm::Type* out = to == DType::kS32 ? wide : IntTypeLike(x->getType(), 8);
  return v->getType() == out ? v : b.CreateTrunc(v, out);
}

// Integer of dtype `from` -> f32, one rounding (RNE).
llvm::Value* IntToF32(llvm::IRBuilder<>& b, llvm::Value* x, DType from) {
  return IsSigned(from) ? b.CreateSIToFP(x, F32Like(x))
                        : b.CreateUIToFP(x, F32Like(x));
}

// Any dtype -> f32 (exact except s32 beyond 2^24, which rounds RNE).
llvm::Value* ToF32(llvm::IRBuilder<>& b, DType from, llvm::Value* x) {
  switch (from) {
    case DType::kF32:
      return x;
    case DType::kBF16:
      return EmitBf16ToF32(b, x);
    case DType::kF16:
      return EmitF16ToF32(b, x);
    case DType::kBool:
      return b.CreateUIToFP(x, F32Like(x));
    default:
      return IntToF32(b, x, from);
  }
}

}  // namespace

llvm::Type* ComputeType(llvm::LLVMContext& context, DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return llvm::Type::getFloatTy(context);
    case DType::kBF16:
    case DType::kF16:
      return llvm::Type::getInt16Ty(context);
    case DType::kS32:
      return llvm::Type::getInt32Ty(context);
    case DType::kS8:
    case DType::kU8:
      return llvm::Type::getInt8Ty(context);
    case DType::kBool:
      return llvm::Type::getInt1Ty(context);
  }
  return nullptr;
}

llvm::Value* EmitF32ToBf16(llvm::IRBuilder<>& b, llvm::Value* x,
                           const CastOptions& options) {
  if (options.native_bf16) {
    if (llvm::Value* r = EmitCvtNePs2Bf16(b, x)) return r;
  }
  llvm::Type* i32 = IntTypeLike(x->getType(), 32);
  llvm::Value* u = b.CreateBitCast(x, i32);
  // Round to nearest even on the bits: add 0x7fff plus the lowest kept bit;
  // a carry into the exponent is the correct rounding up (to inf at most).
  llvm::Value* lsb =
      b.CreateAnd(b.CreateLShr(u, IntConst(i32, 16)), IntConst(i32, 1));
  llvm::Value* rounded =
      b.CreateLShr(b.CreateAdd(u, b.CreateAdd(lsb, IntConst(i32, 0x7fff))),
                   IntConst(i32, 16));
  // NaN: truncate and set the quiet bit (the rounding add could carry a
  // NaN into inf).
  llvm::Value* nan =
      b.CreateOr(b.CreateLShr(u, IntConst(i32, 16)), IntConst(i32, 0x40));
  llvm::Value* r = b.CreateSelect(b.CreateFCmpUNO(x, x), nan, rounded);
  return b.CreateTrunc(r, IntTypeLike(x->getType(), 16));
}

llvm::Value* EmitBf16ToF32(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* i32 = IntTypeLike(x->getType(), 32);
  return b.CreateBitCast(b.CreateShl(b.CreateZExt(x, i32), IntConst(i32, 16)),
                         F32Like(x));
}

llvm::Value* EmitDenormalsAsZero(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* i32 = IntTypeLike(x->getType(), 32);
  llvm::Value* bits = b.CreateBitCast(x, i32);
  llvm::Value* exponent_zero = b.CreateICmpEQ(
      b.CreateAnd(bits, IntConst(i32, 0x7f800000)), IntConst(i32, 0));
  llvm::Value* sign = b.CreateAnd(bits, IntConst(i32, 0x80000000u));
  return b.CreateBitCast(b.CreateSelect(exponent_zero, sign, bits),
                         x->getType());
}

llvm::Value* EmitF32ToF16(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* half = WithElementType(x->getType(), b.getHalfTy());
  return b.CreateBitCast(b.CreateFPTrunc(x, half),
                         IntTypeLike(x->getType(), 16));
}

llvm::Value* EmitF16ToF32(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* half = WithElementType(x->getType(), b.getHalfTy());
  return b.CreateFPExt(b.CreateBitCast(x, half), F32Like(x));
}

llvm::Value* EmitF32ToInt(llvm::IRBuilder<>& b, llvm::Value* x, DType to) {
  // llvm.roundeven is ties-to-even whatever MXCSR says (vrndscaleps $8).
  llvm::Value* r = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
  llvm::Type* i32 = IntTypeLike(x->getType(), 32);
  llvm::Value* v;
  if (to == DType::kS32) {
    // 2147483520 is the largest float below 2^31; anything at or above 2^31
    // saturates to INT32_MAX after the (now in-range) conversion.
    llvm::Value* c = ClampOrdered(b, r, -2147483648.0, 2147483520.0);
    v = b.CreateFPToSI(c, i32);
    v = b.CreateSelect(b.CreateFCmpOGE(r, F32Const(x->getType(), 2147483648.0)),
                       IntConst(i32, INT32_MAX), v);
  } else {
    const IntRange range = RangeOf(to);
    v = b.CreateFPToSI(ClampOrdered(b, r, range.lo, range.hi), i32);
  }
  // fptosi of NaN would be poison; the clamp already mapped NaN to a
  // bound, and this select makes it 0 as design.md asks.
  v = b.CreateSelect(b.CreateFCmpUNO(x, x), IntConst(i32, 0), v);
  return to == DType::kS32 ? v : b.CreateTrunc(v, IntTypeLike(x->getType(), 8));
}

llvm::Value* EmitS32ToF32RoundToOdd(llvm::IRBuilder<>& b, llvm::Value* x) {
  llvm::Type* i64 = IntTypeLike(x->getType(), 64);
  llvm::Type* i32 = IntTypeLike(x->getType(), 32);
  llvm::Value* f = b.CreateSIToFP(x, F32Like(x));
  // |f| <= 2^31 always fits i64, so the round trip is exact and tells
  // whether sitofp rounded, and which way.
  llvm::Value* back = b.CreateFPToSI(f, i64);
  llvm::Value* wide = b.CreateSExt(x, i64);
  llvm::Value* inexact = b.CreateICmpNE(back, wide);
  llvm::Value* bits = b.CreateBitCast(f, i32);
  llvm::Value* even =
      b.CreateICmpEQ(b.CreateAnd(bits, IntConst(i32, 1)), IntConst(i32, 0));
  // Sign-magnitude: +1 on the bits moves away from zero, -1 toward it.
  llvm::Value* away = b.CreateICmpSGT(
      b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, wide, b.getFalse()),
      b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, back, b.getFalse()));
  llvm::Value* step = b.CreateSelect(away, IntConst(i32, 1), IntConst(i32, -1));
  llvm::Value* odd = b.CreateBitCast(b.CreateAdd(bits, step), F32Like(x));
  return b.CreateSelect(b.CreateAnd(inexact, even), odd, f);
}

absl::StatusOr<llvm::Value*> EmitCast(llvm::IRBuilder<>& b, DType from,
                                      DType to, llvm::Value* x,
                                      const CastOptions& options) {
  if (ElementType(x->getType()) != ComputeType(x->getContext(), from)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cast from ", DTypeName(from), ": operand has LLVM type ",
                     PrintToString(*x->getType())));
  }
  if (from == to) return x;
  if (to == DType::kBool) {
    if (IsInteger(from)) {
      return b.CreateICmpNE(x, IntConst(x->getType(), 0));
    }
    // une: NaN != 0 is true, as in C++ and the reference.
    return b.CreateFCmpUNE(ToF32(b, from, x), F32Const(x->getType(), 0.0));
  }
  if (from == DType::kBool) {
    if (IsInteger(to)) {
      return b.CreateZExt(
          x, WithElementType(x->getType(), ComputeType(x->getContext(), to)));
    }
    return EmitCast(b, DType::kF32, to, b.CreateUIToFP(x, F32Like(x)), options);
  }
  if (IsInteger(from) && IsInteger(to)) return SaturateInt(b, x, from, to);
  if (IsInteger(to)) return EmitF32ToInt(b, ToF32(b, from, x), to);
  // Floating-point destination.
  llvm::Value* f = from == DType::kS32 && to != DType::kF32
                       ? EmitS32ToF32RoundToOdd(b, x)
                       : ToF32(b, from, x);
  switch (to) {
    case DType::kBF16:
      return EmitF32ToBf16(b, f, options);
    case DType::kF16:
      return EmitF32ToF16(b, f);
    default:
      return f;
  }
}

namespace {

// 1 / scale (f32, correctly rounded) lane by lane, where `scale` is a
// constant whose every lane has a magnitude in [2^-100, 2^100]: there
// QuotientByReciprocal neither overflows nor underflows where it matters.
// Null otherwise.
llvm::Constant* ReciprocalOf(llvm::Value* scale) {
  auto lane = [](llvm::Constant* c) -> llvm::Constant* {
    auto* f = llvm::dyn_cast_or_null<llvm::ConstantFP>(c);
    if (f == nullptr || !f->getType()->isFloatTy()) return nullptr;
    const float s = f->getValueAPF().convertToFloat();
    const float magnitude = std::fabs(s);
    if (!(magnitude >= 0x1p-100f && magnitude <= 0x1p100f)) return nullptr;
    return llvm::ConstantFP::get(f->getType(), 1.0f / s);
  };
  auto* c = llvm::dyn_cast<llvm::Constant>(scale);
  if (c == nullptr) return nullptr;
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(c->getType());
  if (vector == nullptr) return lane(c);
  std::vector<llvm::Constant*> lanes;
  for (unsigned i = 0; i < vector->getNumElements(); ++i) {
    lanes.push_back(lane(c->getAggregateElement(i)));
    if (lanes.back() == nullptr) return nullptr;
  }
  return llvm::ConstantVector::get(lanes);
}

// x / scale correctly rounded without a division (Markstein): q0 = x *
// inv is within an ulp of the quotient, r = x - q0 * scale is exact by
// FMA, and q0 + r * inv rounds to the quotient itself. An infinite q0 (x
// infinite, or a quotient past f32's range) makes r NaN; q0 stands then.
// Quantized values where only a tiny x could make r inexact (|quotient|
// < 2^-26 for the scales ReciprocalOf takes) round to 0 either way.
// `finite_quotient`: the caller knows q0 is finite or x NaN (no select).
llvm::Value* QuotientByReciprocal(llvm::IRBuilder<>& b, llvm::Value* x,
                                  llvm::Value* scale, llvm::Constant* inv,
                                  bool finite_quotient = false) {
  llvm::Value* q0 = b.CreateFMul(x, inv);
  llvm::Value* r = b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()},
                                     {b.CreateFNeg(q0), scale, x});
  llvm::Value* q1 =
      b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {r, inv, q0});
  if (finite_quotient) return q1;
  return b.CreateSelect(b.CreateFCmpUNO(r, r), q0, q1);
}

}  // namespace

// The quantize of a 16-lane x by a splat constant scale and zero point
// on AVX-512 (see EmitQuantize); null where that does not apply. The
// clamp bounds l and h are (lo - zero_point) * scale and (hi -
// zero_point) * scale rounded to f32: x / scale is monotonic in x, and
// the quotients of l and h are within 2^-14 of the integral lo - zero_point
// and hi - zero_point, so a clamped x quantizes to what x saturates to.
llvm::Value* QuantizeAvx512(llvm::IRBuilder<>& b, llvm::Value* x,
                            llvm::Value* scale, llvm::Constant* inv,
                            llvm::Value* zero_point, DType to) {
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (vt == nullptr || vt->getNumElements() != 16 || inv == nullptr) {
    return nullptr;
  }
  auto splat_value = [](llvm::Value* v) -> llvm::Constant* {
    auto* c = llvm::dyn_cast_or_null<llvm::Constant>(v);
    return c != nullptr ? c->getSplatValue() : nullptr;
  };
  auto* s = llvm::dyn_cast_or_null<llvm::ConstantFP>(splat_value(scale));
  int64_t zp = 0;
  if (zero_point != nullptr) {
    auto* z =
        llvm::dyn_cast_or_null<llvm::ConstantInt>(splat_value(zero_point));
    if (z == nullptr) return nullptr;
    zp = z->getSExtValue();
  }
  const IntRange range = RangeOf(to);
  if (s == nullptr || zp < range.lo || zp > range.hi) return nullptr;
  const double sv = s->getValueAPF().convertToFloat();
  const float l = static_cast<float>((range.lo - zp) * sv);
  const float h = static_cast<float>((range.hi - zp) * sv);
  llvm::Value* lo = F32Const(vt, std::min(l, h));
  llvm::Value* hi = F32Const(vt, std::max(l, h));
  // x clamped to the quotient's saturating range; NaN passes both selects.
  llvm::Value* c = b.CreateSelect(b.CreateFCmpOLT(x, lo), lo, x);
  c = b.CreateSelect(b.CreateFCmpOGT(c, hi), hi, c);
  llvm::Value* q = QuotientByReciprocal(b, c, scale, inv, true);
  llvm::Type* i32 = IntTypeLike(vt, 32);
  // vcvtps2dq {rn-sae}: ties to even; NaN becomes 0x80000000, whose low
  // byte after adding the zero point is the zero point itself.
  llvm::Value* v = b.CreateIntrinsic(
      llvm::Intrinsic::x86_avx512_mask_cvtps2dq_512, {},
      {q, llvm::UndefValue::get(i32), b.getInt16(-1), b.getInt32(8)});
  if (zp != 0) v = b.CreateAdd(v, IntConst(i32, zp));
  return b.CreateTrunc(v, IntTypeLike(vt, 8));
}

llvm::Value* EmitQuantize(llvm::IRBuilder<>& b, llvm::Value* x,
                          llvm::Value* scale, llvm::Value* zero_point, DType to,
                          const CastOptions& options) {
  // A division costs about ten times what the three FMA-unit operations
  // of the exact reciprocal form do.
  llvm::Constant* inv = ReciprocalOf(scale);
  if (options.avx512) {
    if (llvm::Value* q = QuantizeAvx512(b, x, scale, inv, zero_point, to)) {
      return q;
    }
  }
  llvm::Value* q = inv != nullptr ? QuotientByReciprocal(b, x, scale, inv)
                                  : b.CreateFDiv(x, scale);
  llvm::Value* r = b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, q);
  r = b.CreateSelect(b.CreateFCmpUNO(q, q), F32Const(x->getType(), 0.0), r);
  // r + zero_point is exact below 2^24 and saturates anyway above it.
  if (zero_point != nullptr)
    r = b.CreateFAdd(r, b.CreateSIToFP(zero_point, F32Like(x)));
  const IntRange range = RangeOf(to);
  llvm::Value* v = b.CreateFPToSI(ClampOrdered(b, r, range.lo, range.hi),
                                  IntTypeLike(x->getType(), 32));
  return b.CreateTrunc(v, IntTypeLike(x->getType(), 8));
}

llvm::Value* EmitDequantize(llvm::IRBuilder<>& b, llvm::Value* x, DType from,
                            llvm::Value* scale, llvm::Value* zero_point) {
  // s32 - zero_point can leave i32 (INT32_MIN - 1), so s32 works in i64
  // unless the zero point is a constant 0; 8-bit inputs fit i32 with room
  // to spare.
  auto* zero = llvm::dyn_cast_or_null<llvm::Constant>(zero_point);
  if (zero != nullptr && zero->isNullValue()) zero_point = nullptr;
  const bool wide_s32 = from == DType::kS32 && zero_point != nullptr;
  llvm::Type* wide = IntTypeLike(x->getType(), wide_s32 ? 64 : 32);
  llvm::Value* v =
      IsSigned(from) ? b.CreateSExt(x, wide) : b.CreateZExt(x, wide);
  if (zero_point != nullptr) v = b.CreateSub(v, b.CreateSExt(zero_point, wide));
  return b.CreateFMul(b.CreateSIToFP(v, F32Like(x)), scale);
}

}  // namespace codegen
}  // namespace hgc
