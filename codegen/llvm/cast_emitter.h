// Element conversions between hgc dtypes, and quantize / dequantize math,
// emitted as LLVM IR on scalar or fixed-vector values.
//
// Values are in their compute representation:
//   f32          float
//   bf16, f16    i16 bit patterns (what memory holds; widen with Emit*ToF32)
//   s32          i32
//   s8, u8       i8 (signedness comes from the dtype argument)
//   bool         i1 (stored as a 0/1 byte; zext/trunc at the memory edge)
//
// Every conversion is bit-exact with the reference interpreter
// (reference/, support/float16.h):
//   - to bf16 / f16: round to nearest even, NaN stays NaN (quieted), f16
//     overflow to inf and gradual underflow; from s32 the value is first
//     rounded to f32 with round-to-odd so the two roundings equal one;
//   - float to s32 / s8 / u8: round half to even, saturate, NaN -> 0;
//   - integer to integer: saturate; to bool: != 0 (NaN -> true).
#ifndef HGC_CODEGEN_LLVM_CAST_EMITTER_H_
#define HGC_CODEGEN_LLVM_CAST_EMITTER_H_

#include "absl/status/statusor.h"
#include "ir/dtype.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Value.h"

namespace hgc {
namespace codegen {

// Target-dependent choices of the conversions.
struct CastOptions {
  // f32 -> bf16 with AVX512_BF16's vcvtneps2bf16 (one instruction instead
  // of five) for 8- and 16-lane values. The instruction flushes denormal
  // inputs to +-0, so results differ from the reference on |x| < 2^-126
  // (within any bf16 tolerance); leave it off for bit-exactness. Set it only
  // when the target has avx512bf16 (TargetSpec::HasFeature).
  bool native_bf16 = false;
  // quantize of 16-lane values by a constant per-tensor scale and zero
  // point with AVX-512's vcvtps2dq {rn-sae} (rounding and NaN handling in
  // one instruction, exact results: see EmitQuantize). Set it only when the
  // target has avx512f.
  bool avx512 = false;
};

// The LLVM element type of `dtype`'s compute representation (see above).
llvm::Type* ComputeType(llvm::LLVMContext& context, DType dtype);

// Converts `x` (compute representation of `from`, any shape) to `to`.
// Identity when from == to. Never fails for valid dtypes; InvalidArgument
// if x's element type does not match `from`.
absl::StatusOr<llvm::Value*> EmitCast(llvm::IRBuilder<>& b, DType from,
                                      DType to, llvm::Value* x,
                                      const CastOptions& options = {});

// f32 -> bf16 bits (i16), round to nearest even; NaN -> quiet NaN with the
// top payload bits kept ((bits >> 16) | 0x40), as support/float16.h.
llvm::Value* EmitF32ToBf16(llvm::IRBuilder<>& b, llvm::Value* x,
                           const CastOptions& options = {});

// bf16 bits (i16) -> f32, exact.
llvm::Value* EmitBf16ToF32(llvm::IRBuilder<>& b, llvm::Value* x);

// f32 x (scalar or vector) with its denormals replaced by zeros of their
// sign: how a bf16 matmul reads a bf16 operand (the AVX512_BF16 and AMX dot
// products do in hardware; a bf16 denormal widens to an f32 denormal).
llvm::Value* EmitDenormalsAsZero(llvm::IRBuilder<>& b, llvm::Value* x);

// f32 -> IEEE half bits (i16), round to nearest even (fptrunc; vcvtps2ph).
llvm::Value* EmitF32ToF16(llvm::IRBuilder<>& b, llvm::Value* x);

// IEEE half bits (i16) -> f32, exact (fpext; vcvtph2ps).
llvm::Value* EmitF16ToF32(llvm::IRBuilder<>& b, llvm::Value* x);

// f32 -> s32 / s8 / u8 (i32 or i8): round half to even (independent of the
// MXCSR rounding mode), saturate to the type's range, NaN -> 0.
llvm::Value* EmitF32ToInt(llvm::IRBuilder<>& b, llvm::Value* x, DType to);

// s32 (i32) -> f32 rounded to odd: exact values stay, inexact ones get the
// neighbour with an odd significand. A second rounding to bf16/f16 then
// equals rounding the integer directly.
llvm::Value* EmitS32ToF32RoundToOdd(llvm::IRBuilder<>& b, llvm::Value* x);

// quantize: saturate(round_half_even(x / scale) + zero_point) to `to` (s8
// or u8, result i8). x and scale are f32 of the same shape (splat a
// per-tensor scale), zero_point i32 of that shape or nullptr for 0. The
// IEEE quotient, as the reference divides: by a division, or where scale
// is a constant of ordinary magnitude by 1 / scale with an FMA correction
// that rounds to the same quotient; NaN gives zero_point, +-inf saturate.
// With options.avx512, a 16-lane x whose scale and zero point are constant
// splats is first clamped to the x that quantize to the type's range (NaN
// passes) and converted by vcvtps2dq {rn-sae}, whose NaN result
// 0x80000000 plus the zero point truncates to the zero point.
llvm::Value* EmitQuantize(llvm::IRBuilder<>& b, llvm::Value* x,
                          llvm::Value* scale, llvm::Value* zero_point, DType to,
                          const CastOptions& options = {});

// dequantize: f32(x - zero_point) * scale for x of dtype `from` (s8, u8:
// i8; s32: i32). The subtraction is exact (done in 64 bits for s32 with
// a zero point), then rounded once to f32. zero_point: i32 of x's shape
// or nullptr (a constant 0 counts as nullptr: s32 then converts without
// widening).
llvm::Value* EmitDequantize(llvm::IRBuilder<>& b, llvm::Value* x, DType from,
                            llvm::Value* scale, llvm::Value* zero_point);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LLVM_CAST_EMITTER_H_
