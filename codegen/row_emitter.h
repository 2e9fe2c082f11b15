// The row statements of tile nests (tile_emitter.h): reductions, exp with a
// running sum, scaling and rounding, layernorm's normalization, the online
// softmax step and RowMap's running max. Each is a loop over the 16-lane
// f32 vectors of one row, the last vector masked, emitted at the builder's
// insertion point.
#ifndef HGC_CODEGEN_ROW_EMITTER_H_
#define HGC_CODEGEN_ROW_EMITTER_H_

#include <array>
#include <functional>

#include "absl/status/status.h"
#include "codegen/copy_emitter.h"
#include "codegen/llvm/vector_math.h"
#include "codegen/tile_ir.h"
#include "llvm/IR/IRBuilder.h"

namespace hgc {
namespace codegen {

// The address of a view of the nest being emitted, as an `elem`*.
using ViewAddress =
    std::function<llvm::Value*(const tile::View&, llvm::Type* elem)>;

class RowEmitter {
 public:
  // Creates the accumulators at the builder's insertion point, which must
  // be in the function's entry block. Exps scale as `exp_scaling` says.
  RowEmitter(llvm::IRBuilder<>& b, ExpScaling exp_scaling, ViewAddress address,
             ExprEvaluator eval);

  // Internal error when the max cannot be emitted.
  absl::Status Emit(const tile::RowReduce& r);
  void Emit(const tile::RowExp& r);
  void Emit(const tile::RowScale& r);
  void Emit(const tile::RowNormalize& r);
  void Emit(const tile::OnlineSoftmax& r);

  // A running max over the vectors of a row as softmax takes it (FastMax,
  // a NaN need not survive): MaxStart, then MaxTake with each vector and
  // its lane mask (at any builder), then MaxResult for the scalar.
  void MaxStart();
  void MaxTake(llvm::IRBuilder<>& b, llvm::Value* y, llvm::Value* mask);
  llvm::Value* MaxResult();

 private:
  llvm::Constant* Splat(float v);
  llvm::Value* VPtr(llvm::Value* row, llvm::Value* col);
  llvm::Value* Load(llvm::Value* row, llvm::Value* col, llvm::Value* mask,
                    float pass);
  void Store(llvm::Value* v, llvm::Value* row, llvm::Value* col,
             llvm::Value* mask);
  llvm::Value* Scalar(const tile::View& v);
  // body(col, mask) over the vectors of a row of `len` floats, from vector
  // `first` (none: 0) on.
  void ForVectors(llvm::Value* len,
                  const std::function<void(llvm::Value*, llvm::Value*)>& body,
                  llvm::Value* first = nullptr);
  // The lanes' sum of accumulator `acc` (acc_ by default) of vector type
  // `vt`, in a tree (a reduction may sum in any order).
  llvm::Value* AccSum(llvm::Value* acc = nullptr, llvm::Type* vt = nullptr);
  void Accumulate(llvm::Value* t);
  // exp(src[i] - max) stored to dst[i] over the row, their sum returned.
  llvm::Value* ExpRow(llvm::Value* src, llvm::Value* dst, llvm::Value* len,
                      llvm::Value* max);
  // take(b, slot, col, mask) over the vectors of a row of `len` floats:
  // whole groups of kSlots vectors give slot i their i-th vector (kSlots
  // independent chains instead of one at an op's latency a vector; mask
  // nullptr), the vectors left slot 0 (ForVectors: an all-true mask, the
  // partial last one its tail mask).
  void ForVectorSlots(
      llvm::Value* len,
      const std::function<void(llvm::IRBuilder<>&, int, llvm::Value*,
                               llvm::Value*)>& take);
  llvm::Value* SoftmaxRowMax(llvm::Value* src, llvm::Value* len);
  absl::StatusOr<llvm::Value*> RowMax(llvm::Value* src, llvm::Value* len);
  // RowReduce's sum, mean or mean squared deviation; `wide`: in double.
  llvm::Value* RowSum(const tile::RowReduce& r, bool wide);

  llvm::IRBuilder<>& b_;
  const ExpScaling exp_scaling_;
  const ViewAddress address_;
  const ExprEvaluator eval_;
  llvm::Type* f32_ = nullptr;
  llvm::FixedVectorType* vt_ = nullptr;
  llvm::FixedVectorType* vd_ = nullptr;  // 16 doubles
  llvm::Value* acc_ = nullptr;
  llvm::Value* acc64_ = nullptr;  // <16 x double>: squares, in double
  // ForVectorSlots' accumulators: SoftmaxRowMax's running maxes, RowSum's
  // running sums.
  static constexpr int kSlots = 4;
  std::array<llvm::Value*, kSlots> slots_{};
  // ExpRow's pipelined loop: the next vector's range reduction (r and the
  // shifted n, EmitExpReduce), carried into the next trip.
  llvm::Value* next_r_ = nullptr;
  llvm::Value* next_shifted_ = nullptr;
};

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_ROW_EMITTER_H_
