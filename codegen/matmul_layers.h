// The layers of a "matmul" / "mlp" fusion group: each matmul of the body
// with the elementwise post-ops on its result, and the checks that make a
// body something the matmul lowering (lower_matmul.h) takes.
#ifndef HGC_CODEGEN_MATMUL_LAYERS_H_
#define HGC_CODEGEN_MATMUL_LAYERS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "microkernels/brgemm_desc.h"

namespace hgc {
namespace codegen {

// Which matrix of an operand the layer's output matrix `b` (its flat batch
// index) reads: the operand's batch dims broadcast to the output's (numpy
// rules, the operand's aligned to the right), so the matrix is
//   sum over runs of (b / inner % extent) * stride
// where a run is a stretch of output batch dims the operand walks with one
// stride (adjacent dims merged, broadcast dims left out: stride 0). A
// matrix shared by every batch has no runs.
struct BatchMap {
  struct Run {
    int64_t inner = 1;   // output batches per step of the run's index
    int64_t extent = 1;  // values of the run's index
    int64_t stride = 0;  // operand matrices per step of it
  };
  std::vector<Run> runs;  // innermost first
  int64_t matrices = 1;   // the operand's own matrices
};

// The BatchMap of an operand of shape `operand` (rank >= 2) in a matmul
// whose result has shape `out`; Unimplemented if they do not broadcast.
absl::StatusOr<BatchMap> MapBatch(const Shape& operand, const Shape& out);

// One matmul and the post-ops on its result.
struct Layer {
  const Op* matmul = nullptr;
  std::vector<const Op*> post;
  const Value* out = nullptr;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  BatchMap a_batch, b_batch;
  // A is stored K x M (transpose_a): the lowering transposes it into a
  // scratch first, as the kernels read M x K rows.
  bool a_transposed = false;
  microkernels::BrgemmDataType kind = microkernels::BrgemmDataType::kF32;
  int64_t in_bytes = 4;  // bytes per A / B element
  // The kernel's C is f32 or s32; it is written straight into the layer's
  // output (where the post-ops rewrite it in place) when the matmul result
  // is that type and the output has 4-byte elements too, else into an f32 /
  // s32 tile of per-thread scratch from which the post-ops (or the rounding
  // to bf16) read.
  bool c_scratch = false;
  // Post-ops the f32 kernel applies itself as it stores C (brgemm_desc.h):
  // a bias row (`bias`, a group param of N elements) and / or relu, when
  // they are all the layer's post-ops. The tile loop then runs none.
  const Value* bias = nullptr;
  bool relu = false;
  bool kernel_post_ops() const { return bias != nullptr || relu; }
};

// Sets l.bias / l.relu when the layer's post-ops are exactly
// [add(C, bias)] [relu] in that order (either or both; add's operands in
// either order), on an f32 kernel writing its C straight to the output.
void MatchKernelPostOps(Layer& l);

// The layers of `body` in order. Unimplemented when the body is not a chain
// of matmuls (f32, bf16, u8 x s8, s8 x s8; B a group operand, A the group's
// input or the previous layer, with transpose_a only the group's input;
// batch dims broadcast either way) each followed by shape-keeping post-ops
// that read only their layer, group operands and literal constants.
absl::StatusOr<std::vector<Layer>> SplitLayers(const Graph& body);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_MATMUL_LAYERS_H_
