// EmitRow, the one elementwise engine: a RowProgram (row_program.h)
// lowered to LLVM IR over a segment of one row, 16 lanes at a time with a
// masked last vector (no scalar tail loop), operands broadcast through
// their strides, 16-bit floats widened on load and narrowed on store,
// per-channel quantization by tables. The matmul epilogue runs it over
// the rows of a C tile right after the BRGEMM call, elementwise groups
// over every row of their output, the row ops around their producers and
// consumers.
#ifndef HGC_CODEGEN_EMIT_ROW_H_
#define HGC_CODEGEN_EMIT_ROW_H_

#include "absl/status/status.h"
#include "codegen/llvm/cast_emitter.h"
#include "codegen/row_program.h"
#include "codegen/step_function.h"
#include "ir/dtype.h"
#include "llvm/IR/IRBuilder.h"

namespace hgc {
namespace codegen {

// Evaluates `program` for the row with flat index `row` (over all dims but
// the last) and columns [col_begin, col_end), 16 lanes at a time with a
// masked last vector.
// `out_row`, when given, replaces the row's place in out_buffer (a float*
// to the row's element 0, e.g. a per-thread scratch row); `in_row` that of
// the inputs marked from_in_row (a pointer to the row's element 0 as well;
// the caller may offset a tile's pointer back by col_begin).
// `on_result`, when given, is called inside the loop with each vector of
// results (in compute form, as stored) and the vector's lane mask (a fused
// reduction over the written values).
using RowResultFn =
    std::function<void(llvm::IRBuilder<>&, llvm::Value*, llvm::Value*)>;

// The target's and the loop's choices for EmitRow.
struct RowEmitOptions {
  CastOptions cast;  // for the program's casts and quantizes
  // Unroll the loop over the vectors where their count is a constant (a
  // few vectors: tile::RowMap::unroll).
  bool unroll = false;
};

absl::Status EmitRow(llvm::IRBuilder<>& b, const FrameValues& frame,
                     const RowProgram& program, llvm::Value* row,
                     llvm::Value* col_begin, llvm::Value* col_end,
                     llvm::Value* out_row = nullptr,
                     llvm::Value* in_row = nullptr,
                     const RowResultFn& on_result = nullptr,
                     const RowEmitOptions& options = {});

// Stores `value` (16 lanes in their compute form, already exact in
// `dtype`) to lanes [col, col + 16) of the `dtype` row at `row` (its
// element 0) under `mask`.
void StoreRowVector(llvm::IRBuilder<>& b, DType dtype, llvm::Value* value,
                    llvm::Value* row, llvm::Value* col, llvm::Value* mask);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_EMIT_ROW_H_
