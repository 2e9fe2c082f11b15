// Random valid graphs for differential testing (fuzz/differential.h).
//
// GenerateGraph(seed, options) builds one graph through hgc::Builder, so
// every op is type-checked by the op registry as the parser would; an op the
// registry refuses is simply not added. The same seed always gives the same
// graph. Each graph follows one recipe (GraphKind), with random shapes,
// dtypes and attributes, a random tail of further ops, and sometimes several
// results (intermediates returned beside the final value, so that values are
// used twice):
//
//   elementwise  broadcasting chains of unary, binary, comparison + select,
//                clamp, gelu and casts, in f32, bf16, f16, s32, s8 and u8
//   matmul       one matmul with odd M/K/N, transpose_a/_b or transpose ops
//                on the operands, batch broadcast, const or non-const B,
//                then a post-op chain (bias, activations, ...)
//   mlp          1 to 4 layers of matmul + bias + activation with const
//                weights, in f32, bf16 throughout, or f32 with bf16 casts
//   rowwise      softmax, layernorm and reduce_* over random axes with
//                elementwise producers and consumers
//   shapes       reshapes and transposes in the middle of elementwise chains
//   bf16         cast chains f32 <-> bf16 <-> f16 around arithmetic
//   int8         dequantize -> matmul -> quantize chains (u8 / s8, per-tensor
//                and per-channel scales), s8/u8 matmuls to s32
//   attention    Q·Kᵀ (transpose_b, a transposed K, or K given as [.., D, S]),
//                scale (on Q or the scores, mul or div), mask (add, select or
//                max), softmax, ·V, optional BSHD transposes, output
//                transpose + reshape, bf16 casts, MQA / GQA broadcasting
//   mixed        random ops from the whole table on a pool of values
//
// With `special_values`, the graph is meant to be run on special inputs
// (SpecialTensor): literal constants take values such as -0.0, denormals
// and rounding ties, and some tensors have a dimension of size 0.
#ifndef HGC_FUZZ_GRAPH_GENERATOR_H_
#define HGC_FUZZ_GRAPH_GENERATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace hgc {

enum class GraphKind {
  kElementwise,
  kMatmul,
  kMlp,
  kRowwise,
  kShapes,
  kBf16,
  kInt8,
  kAttention,
  kMixed,
};

inline constexpr GraphKind kAllGraphKinds[] = {
    GraphKind::kElementwise, GraphKind::kMatmul, GraphKind::kMlp,
    GraphKind::kRowwise,     GraphKind::kShapes, GraphKind::kBf16,
    GraphKind::kInt8,        GraphKind::kAttention, GraphKind::kMixed};

absl::string_view GraphKindName(GraphKind kind);
// nullopt-like: returns false for an unknown name.
bool ParseGraphKind(absl::string_view name, GraphKind* kind);

struct GenerateOptions {
  // Special constants and empty tensors (see above).
  bool special_values = false;
  // With special_values: some dimensions of size 0.
  bool empty_tensors = true;
  // Only this kind, when set; otherwise the seed picks one.
  bool fixed_kind = false;
  GraphKind kind = GraphKind::kMixed;
};

struct GeneratedGraph {
  GraphKind kind = GraphKind::kMixed;
  // The module holding one graph, @fuzz.
  Module module;
};

// Deterministic in (seed, options). Internal errors only (a generator bug);
// ops the registry refuses are skipped, not errors.
absl::StatusOr<GeneratedGraph> GenerateGraph(uint64_t seed,
                                             const GenerateOptions& options);

// A tensor of `type` for the special-values mode: a mix of -0.0, +-inf, NaN,
// denormals, exact rounding ties (for bf16, f16, integer casts and
// quantize), extremes of the integer types and ordinary random values.
// Deterministic in (seed, stream).
Tensor SpecialTensor(const TensorType& type, uint64_t seed, uint64_t stream);

}  // namespace hgc

#endif  // HGC_FUZZ_GRAPH_GENERATOR_H_
