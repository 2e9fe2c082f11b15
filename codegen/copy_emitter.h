// The data movement of tile nests (tile_emitter.h), emitted at the
// builder's insertion point: 2-D copies (element by element, a memcpy per
// contiguous row, transposes, bf16 / f16 rows widened to f32 and f32 rows
// narrowed to bf16 / f16 through runtime_helpers.h), fills and prefetch
// hints, and calls of the other runtime helpers.
#ifndef HGC_CODEGEN_COPY_EMITTER_H_
#define HGC_CODEGEN_COPY_EMITTER_H_

#include <functional>

#include "absl/status/status.h"
#include "codegen/tile_ir.h"
#include "llvm/IR/IRBuilder.h"

namespace hgc {
namespace codegen {

// Evaluates an index expression of the nest being emitted (an i64).
using ExprEvaluator = std::function<llvm::Value*(const tile::Expr&)>;

// `copy` from `src` to `dst` (the views' addresses, i8*). Internal error
// for a widening copy whose rows are not contiguous, or a narrowing one
// whose source rows are not.
absl::Status EmitCopy(llvm::IRBuilder<>& b, const tile::Copy& copy,
                      llvm::Value* src, llvm::Value* dst,
                      const ExprEvaluator& eval);

// The runtime helper call `call`; `ptr` gives a view's address (i8*).
void EmitCall(llvm::IRBuilder<>& b, const tile::Call& call,
              const std::function<llvm::Value*(const tile::View&)>& ptr,
              const ExprEvaluator& eval);

// dst[0, count) = value.
void EmitFill(llvm::IRBuilder<>& b, llvm::Value* dst, llvm::Value* count,
              float value);

// The hint `prefetch`, its first row at `base` (i8*, computed without
// inbounds).
void EmitPrefetch(llvm::IRBuilder<>& b, const tile::Prefetch& prefetch,
                  llvm::Value* base, const ExprEvaluator& eval);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_COPY_EMITTER_H_
