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

// One matmul and the post-ops on its result.
struct Layer {
  const Op* matmul = nullptr;
  std::vector<const Op*> post;
  const Value* out = nullptr;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool a_batched = false, b_batched = false;
  microkernels::BrgemmDataType kind = microkernels::BrgemmDataType::kF32;
  int64_t in_bytes = 4;  // bytes per A / B element
  // The kernel's C is f32 or s32; it is written straight into the layer's
  // output (where the post-ops rewrite it in place) when the matmul result
  // is that type and the output has 4-byte elements too, else into an f32 /
  // s32 scratch from which the post-ops (or the rounding to bf16) read.
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
// input or the previous layer) each followed by shape-keeping post-ops that
// read only their layer, group operands and literal constants.
absl::StatusOr<std::vector<Layer>> SplitLayers(const Graph& body);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_MATMUL_LAYERS_H_
