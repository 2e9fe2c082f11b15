// Row programs: an elementwise DAG of a fused group (its ops, inputs with
// numpy broadcasting strides, result buffer) evaluated over an iteration
// space whose last dim is the row, and how one is built from a body's ops.
// EmitRow (emit_row.h) lowers a program to LLVM IR; the tile IR's RowMap
// statements run one over a segment of a row.
#ifndef HGC_CODEGEN_ROW_PROGRAM_H_
#define HGC_CODEGEN_ROW_PROGRAM_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace hgc {
namespace codegen {

// Lanes of every vector the lowerings emit (one zmm of f32).
inline constexpr int kVectorWidth = 16;

// One source of values for EmitRow.
struct RowInput {
  const Value* value = nullptr;  // the body value it provides
  int buffer = -1;               // frame buffer index (unless is_constant)
  // Element offset of the value's element at output coordinate idx:
  // sum(idx[d] * strides[d]) (one stride per dim of the iteration space).
  std::vector<int64_t> strides;
  // A literal whose elements are all equal: `constant` in every lane, in
  // the compute form of value's dtype (bf16 / f16 widened to f32, integers
  // exact, bool 0 / 1).
  bool is_constant = false;
  double constant = 0;
  // Memory holds f32 and the value is a bf16 / f16 rounding of it (a
  // low-precision matmul's result in the kernel's f32 C).
  bool rounded_from_f32 = false;
  // Read from the caller's row pointer (EmitRow's in_row) instead of
  // `buffer`: a tile of the row held elsewhere (an attention score tile).
  bool from_in_row = false;
};

// An elementwise DAG to evaluate over an iteration space.
struct RowProgram {
  Shape shape;  // iteration space; the last dim is the row
  std::vector<RowInput> inputs;
  std::vector<const Op*> ops;  // elementwise ops, in order
  const Value* result = nullptr;
  int out_buffer = -1;  // the result's dtype, contiguous over `shape`
  // Store the result as f32 whatever its dtype (a bf16 / f16 result is
  // already rounded, so the f32 holds its value exactly): an f32 tile that
  // later programs read with RowInput::rounded_from_f32.
  bool result_in_f32 = false;
  // Store denormal results as zeros of their sign (a bf16 matmul operand,
  // as the matmul reads it).
  bool result_denormals_as_zero = false;
};

// Checks that `program` is something EmitRow can lower: a non-empty
// iteration space and elemental ops of any dtype (a per-channel quantize /
// dequantize must not be broadcast). Unimplemented otherwise.
absl::Status CheckRowProgram(const RowProgram& program);

// Appends the params and literal-constant ops that `ops` (a body's ops in
// order) read, each once.
void CollectInputs(const std::vector<const Op*>& ops,
                   std::vector<const Value*>& params,
                   std::vector<const Op*>& constants);

// Whether a quantize / dequantize has per-channel (list) scale or zero
// point.
bool IsPerChannel(const Op& op);

// Row-major element strides of `type` broadcast to `out` (numpy rules,
// 0 on broadcast dims); InvalidArgument when it does not broadcast.
absl::StatusOr<std::vector<int64_t>> BroadcastStrides(const Shape& type,
                                                      const Shape& out);


// Gives a literal constant that is not a splat a buffer of the step being
// built: `value` is the constant's evaluated contents; returns the frame
// index the row program reads it from (with broadcasting strides, as it
// reads a const parameter).
using ConstantBinder =
    std::function<absl::StatusOr<int>(const Op& constant, Tensor value)>;

// Builds the RowProgram that evaluates `ops` (elemental ops and literal
// `constant` ops; params bound to the frame buffers `param_buffers`) over
// `shape`, writing `result` to `out_buffer`. A constant whose elements are
// all equal becomes a splat; any other goes to `bind_constant`, or is
// Unimplemented without one. Values the caller provides itself are
// appended to program.inputs after the call. Unimplemented when the ops
// are anything but elemental ops and constants.
absl::Status BuildRowProgram(const std::vector<const Op*>& ops,
                             const std::vector<const Value*>& params,
                             const std::vector<int>& param_buffers,
                             const Shape& shape, const Value* result,
                             int out_buffer, RowProgram& program,
                             const ConstantBinder& bind_constant = nullptr);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_ROW_PROGRAM_H_
