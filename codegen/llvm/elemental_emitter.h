// Per-op-kind LLVM IR for hgc's elementwise ops (design.md's op table):
// given operand values, return the result value, lane-wise, in the same
// shape (scalar or <N x T>). The loop emitter walks a fused body, loads
// operand tiles, and calls these for each op; nothing here knows about
// memory, loops or broadcasting.
//
// Operand representation (see cast_emitter.h): floating-point ops compute
// in f32, so operands of f32, bf16 and f16 ops are float values (the loop
// emitter widens 16-bit loads with EmitCast and narrows results after);
// s32 operands are i32, s8/u8 are i8, bool is i1. The `dtype` arguments are
// the hgc operand dtypes: they carry what LLVM types cannot (u8 vs s8) and
// select float vs integer semantics.
//
// Semantics follow the reference interpreter bit for bit where it is exact
// (arithmetic, comparisons, max/min with NaN propagation, relu(-0) = +0,
// clamp's numpy.clip order, integer wrap-around and saturation) and within
// the bounds of vector_math.h for the transcendental functions.
#ifndef HGC_CODEGEN_LLVM_ELEMENTAL_EMITTER_H_
#define HGC_CODEGEN_LLVM_ELEMENTAL_EMITTER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codegen/llvm/cast_emitter.h"
#include "ir/attribute.h"
#include "ir/dtype.h"
#include "ir/op_kind.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Value.h"

namespace hgc {
namespace codegen {

// True for every kind EmitElementwise lowers: the unary, binary and
// comparison families, select, cast, quantize, dequantize (a switch over
// the op classes; each family's emitter switches over all its members). The
// fusion pass may group only these kinds (codegen/group_coverage_test.cc).
bool IsElementalOp(OpKind kind);

// A unary op on `x` of operand dtype `dtype`. Attributes: gelu's
// `approximate` ("none", the default, or "tanh"); clamp's `min` / `max`
// (numbers, each optional). Integer operands allow relu, neg, abs and clamp
// (neg and abs wrap: abs(-128) is -128 in s8). InvalidArgument for a math
// function on integers, a bad attribute, or a value whose LLVM type does
// not match `dtype`.
absl::StatusOr<llvm::Value*> EmitUnary(llvm::IRBuilder<>& b, UnaryKind kind,
                                       DType dtype, llvm::Value* x,
                                       const AttrMap& attrs = {});

// A binary arithmetic op on `lhs`, `rhs` (same shape, operand dtype
// `dtype`); results have the operands' representation. Integer add/sub/mul
// wrap; div is float-only. max/min propagate NaN like numpy.maximum /
// minimum.
absl::StatusOr<llvm::Value*> EmitBinary(llvm::IRBuilder<>& b, BinaryKind kind,
                                        DType dtype, llvm::Value* lhs,
                                        llvm::Value* rhs);

// A comparison of `lhs`, `rhs` (same shape, operand dtype `dtype`): i1,
// false when either float operand is NaN.
absl::StatusOr<llvm::Value*> EmitCompare(llvm::IRBuilder<>& b, CompareKind kind,
                                         DType dtype, llvm::Value* lhs,
                                         llvm::Value* rhs);

// An f32 value of a bf16 / f16 op rounded to that dtype and widened back
// to f32 (every op rounds once at its end, as the reference does); other
// dtypes pass through.
llvm::Value* RoundToDType(llvm::IRBuilder<>& b, llvm::Value* x, DType dtype,
                          const CastOptions& options = {});

// cond ? on_true : on_false, lane-wise; cond is i1 of the same shape.
llvm::Value* EmitSelect(llvm::IRBuilder<>& b, llvm::Value* cond,
                        llvm::Value* on_true, llvm::Value* on_false);

// Any op kind of IsElementalOp with per-tensor attributes, as the loop
// emitter sees it: operand dtypes, the result dtype, operands (already
// broadcast to one shape) and the op's attributes. cast reads nothing from
// attrs (the result dtype is `to`); quantize and dequantize read scalar
// `scale` / `zero_point`. Per-channel (list) scales are Unimplemented here:
// the loop emitter passes per-lane vectors to EmitQuantize/EmitDequantize
// itself.
absl::StatusOr<llvm::Value*> EmitElementwise(
    llvm::IRBuilder<>& b, OpKind kind, const std::vector<DType>& operand_dtypes,
    DType result_dtype, const std::vector<llvm::Value*>& operands,
    const AttrMap& attrs = {}, const CastOptions& cast_options = {});

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LLVM_ELEMENTAL_EMITTER_H_
