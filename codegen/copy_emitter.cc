#include "codegen/copy_emitter.h"

#include <initializer_list>
#include <variant>
#include <vector>

#include "codegen/emit_row.h"
#include "codegen/row_program.h"
#include "codegen/runtime_helpers.h"
#include "codegen/step_function.h"
#include "llvm/IR/Constants.h"

namespace hgc {
namespace codegen {
namespace {

bool IsOne(const tile::Expr& e) { return e.is_const() && e.value() == 1; }

llvm::Value* F32Ptr(llvm::IRBuilder<>& b, llvm::Value* p) {
  return b.CreateBitCast(p, b.getFloatTy()->getPointerTo());
}

llvm::Value* I16Ptr(llvm::IRBuilder<>& b, llvm::Value* p) {
  return b.CreateBitCast(p, b.getInt16Ty()->getPointerTo());
}

// A call of the runtime helper `name` (runtime_helpers.h), declared from
// the arguments' types.
void CallHelper(llvm::IRBuilder<>& b, const char* name,
                std::initializer_list<llvm::Value*> args) {
  std::vector<llvm::Type*> types;
  for (llvm::Value* arg : args) types.push_back(arg->getType());
  llvm::FunctionCallee fn =
      b.GetInsertBlock()->getModule()->getOrInsertFunction(
          name, llvm::FunctionType::get(b.getVoidTy(), types, false));
  b.CreateCall(fn, args);
}

// dst[c * dst_col + r] = src[r * src_row + c]: a transpose of contiguous
// rows, by the runtime helper (runtime_helpers.h).
void EmitTranspose(llvm::IRBuilder<>& b, const tile::Copy& c, llvm::Value* src,
                   llvm::Value* dst, const ExprEvaluator& eval) {
  CallHelper(b, kTransposeF32,
             {F32Ptr(b, src), eval(c.src_row), F32Ptr(b, dst), eval(c.dst_col),
              eval(c.rows), eval(c.cols)});
}

// Rows of contiguous f32: one memcpy a row, in a loop left rolled (a
// constant row of 512 bytes is already 16 or 8 vector moves; the unroller
// made 64 copies of it, a quarter of MHA-3's step code on AVX2).
void EmitRowCopies(llvm::IRBuilder<>& b, const tile::Copy& c, llvm::Value* src,
                   llvm::Value* dst, const ExprEvaluator& eval) {
  llvm::Type* f32 = b.getFloatTy();
  src = F32Ptr(b, src);
  dst = F32Ptr(b, dst);
  llvm::Value* src_row = eval(c.src_row);
  llvm::Value* dst_row = eval(c.dst_row);
  llvm::Value* bytes = b.CreateMul(eval(c.cols), b.getInt64(4));
  EmitLoop(
      b, b.getInt64(0), eval(c.rows),
      [&](llvm::IRBuilder<>& b, llvm::Value* r) {
        b.CreateMemCpy(b.CreateInBoundsGEP(f32, dst, b.CreateMul(r, dst_row)),
                       llvm::Align(4),
                       b.CreateInBoundsGEP(f32, src, b.CreateMul(r, src_row)),
                       llvm::Align(4), bytes);
      },
      Unroll::kDisable);
}

// Rows of contiguous bf16 / f16 elements widened to f32, through
// runtime_helpers.h.
void EmitWidenRows(llvm::IRBuilder<>& b, const tile::Copy& c, llvm::Value* src,
                   llvm::Value* dst, const ExprEvaluator& eval) {
  CallHelper(b, kWidenRows,
             {I16Ptr(b, src), eval(c.src_row), F32Ptr(b, dst), eval(c.dst_row),
              eval(c.rows), eval(c.cols), b.getInt32(c.src_type == DType::kF16),
              b.getInt32(c.denormals_as_zero)});
}

// Rows of contiguous u8 / s8 elements dequantized to f32, through
// runtime_helpers.h.
void EmitDequantizeRows(llvm::IRBuilder<>& b, const tile::Copy& c,
                        llvm::Value* src, llvm::Value* dst,
                        const ExprEvaluator& eval) {
  CallHelper(b, kDequantizeRows,
             {b.CreateBitCast(src, b.getInt8PtrTy()), eval(c.src_row),
              F32Ptr(b, dst), eval(c.dst_row), eval(c.rows), eval(c.cols),
              b.getInt32(c.src_type == DType::kS8),
              llvm::ConstantFP::get(b.getFloatTy(), c.scale),
              b.getInt32(c.zero_point)});
}

// f32 rows narrowed to bf16 / f16 with any destination strides, through
// runtime_helpers.h.
void EmitNarrowRows(llvm::IRBuilder<>& b, const tile::Copy& c, llvm::Value* src,
                    llvm::Value* dst, const ExprEvaluator& eval) {
  CallHelper(b, kNarrowRows,
             {F32Ptr(b, src), eval(c.src_row), I16Ptr(b, dst), eval(c.dst_row),
              eval(c.dst_col), eval(c.rows), eval(c.cols),
              b.getInt32(c.dst_type == DType::kF16)});
}

// Any strides, element by element; the row loop left rolled (the unroller
// made a 7 x 32 copy of Q rows with their heads last 224 scalar moves, and
// LLVM took 60-70 ms over that attention step on Zen 3).
void EmitStridedCopy(llvm::IRBuilder<>& b, const tile::Copy& c,
                     llvm::Value* src, llvm::Value* dst,
                     const ExprEvaluator& eval) {
  llvm::Type* f32 = b.getFloatTy();
  src = F32Ptr(b, src);
  dst = F32Ptr(b, dst);
  llvm::Value* src_row = eval(c.src_row);
  llvm::Value* src_col = eval(c.src_col);
  llvm::Value* dst_row = eval(c.dst_row);
  llvm::Value* dst_col = eval(c.dst_col);
  llvm::Value* cols = eval(c.cols);
  EmitLoop(
      b, b.getInt64(0), eval(c.rows),
      [&](llvm::IRBuilder<>& b, llvm::Value* r) {
        llvm::Value* s = b.CreateInBoundsGEP(f32, src, b.CreateMul(r, src_row));
        llvm::Value* d = b.CreateInBoundsGEP(f32, dst, b.CreateMul(r, dst_row));
        EmitLoop(
            b, b.getInt64(0), cols,
            [&](llvm::IRBuilder<>& b, llvm::Value* col) {
              llvm::Value* x = b.CreateLoad(
                  f32, b.CreateInBoundsGEP(f32, s, b.CreateMul(col, src_col)));
              b.CreateStore(
                  x, b.CreateInBoundsGEP(f32, d, b.CreateMul(col, dst_col)));
            });
      },
      Unroll::kDisable);
}

}  // namespace

absl::Status EmitCopy(llvm::IRBuilder<>& b, const tile::Copy& copy,
                      llvm::Value* src, llvm::Value* dst,
                      const ExprEvaluator& eval) {
  const bool rows_contiguous = IsOne(copy.src_col) && IsOne(copy.dst_col);
  if (copy.dst_type != DType::kF32) {
    if (copy.src_type != DType::kF32 || !IsOne(copy.src_col)) {
      return absl::InternalError("a narrowing copy of strided elements");
    }
    EmitNarrowRows(b, copy, src, dst, eval);
  } else if (copy.src_type != DType::kF32) {
    if (!rows_contiguous) {
      return absl::InternalError("a widening copy of strided elements");
    }
    if (copy.src_type == DType::kU8 || copy.src_type == DType::kS8) {
      EmitDequantizeRows(b, copy, src, dst, eval);
    } else {
      EmitWidenRows(b, copy, src, dst, eval);
    }
  } else if (IsOne(copy.src_col) && IsOne(copy.dst_row)) {
    EmitTranspose(b, copy, src, dst, eval);
  } else if (rows_contiguous) {
    EmitRowCopies(b, copy, src, dst, eval);
  } else {
    EmitStridedCopy(b, copy, src, dst, eval);
  }
  return absl::OkStatus();
}

void EmitCall(llvm::IRBuilder<>& b, const tile::Call& call,
              const std::function<llvm::Value*(const tile::View&)>& ptr,
              const ExprEvaluator& eval) {
  std::vector<llvm::Value*> args;
  std::vector<llvm::Type*> types;
  for (const tile::Call::Arg& arg : call.args) {
    llvm::Value* v = nullptr;
    if (const auto* view = std::get_if<tile::View>(&arg)) {
      v = b.CreateBitCast(ptr(*view), b.getInt8PtrTy());
    } else if (const auto* e = std::get_if<tile::Expr>(&arg)) {
      v = eval(*e);
    } else if (const auto* f = std::get_if<float>(&arg)) {
      v = llvm::ConstantFP::get(b.getFloatTy(), *f);
    } else {
      v = b.getInt32(std::get<int32_t>(arg));
    }
    args.push_back(v);
    types.push_back(v->getType());
  }
  llvm::FunctionCallee fn =
      b.GetInsertBlock()->getModule()->getOrInsertFunction(
          call.helper, llvm::FunctionType::get(b.getVoidTy(), types, false));
  b.CreateCall(fn, args);
}

void EmitFill(llvm::IRBuilder<>& b, llvm::Value* dst, llvm::Value* count,
              float value) {
  // 16 floats a store, the last under its tail mask (the row maxima of a
  // 64-row block are 1024 floats, filled per query block: one store a
  // float took 2 % of a short attention item).
  llvm::Value* splat = b.CreateVectorSplat(
      kVectorWidth, llvm::ConstantFP::get(b.getFloatTy(), value));
  ForVectorsThenTail(
      b, b.getInt64(0), count,
      [&](llvm::IRBuilder<>& b, llvm::Value* col, llvm::Value* mask) {
        StoreRowVector(b, DType::kF32, splat, dst, col, mask);
      });
}

void EmitPrefetch(llvm::IRBuilder<>& b, const tile::Prefetch& p,
                  llvm::Value* base, const ExprEvaluator& eval) {
  llvm::Type* i8 = b.getInt8Ty();
  llvm::Value* stride =
      b.CreateMul(eval(p.row_stride), b.getInt64(p.src.elem_bytes));
  const int64_t lines = (p.row_bytes + 63) / 64;
  auto prefetch_row = [&](llvm::IRBuilder<>& b, llvm::Value* r) {
    llvm::Value* row = b.CreateGEP(i8, base, b.CreateMul(r, stride));
    for (int64_t l = 0; l < lines; ++l) {
      b.CreateIntrinsic(llvm::Intrinsic::prefetch, {b.getInt8PtrTy()},
                        {b.CreateGEP(i8, row, b.getInt64(l * 64)),
                         b.getInt32(p.write ? 1 : 0),
                         b.getInt32(p.to_l1 ? 3 /* L1 */ : 2 /* L2 */),
                         b.getInt32(1) /* data */});
    }
  };
  // A few rows known now are straight code: a loop with a run-time trip
  // count inside the row loop costs LLVM's optimizer far more.
  if (p.rows.is_const() && p.rows.value() * lines <= 64) {
    for (int64_t r = 0; r < p.rows.value(); ++r) {
      prefetch_row(b, b.getInt64(r));
    }
    return;
  }
  EmitLoop(b, b.getInt64(0), eval(p.rows), prefetch_row);
}

}  // namespace codegen
}  // namespace hgc
