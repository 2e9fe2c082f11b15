// Internal to the graph generator (fuzz/graph_generator.h): the random
// source and the Generator class that builds one graph. Not part of any
// public API: only fuzz/generator_blocks.cc, fuzz/graph_recipes.cc,
// fuzz/attention_recipe.cc and fuzz/graph_generator.cc include this header.
//
// The files split the Generator by concept:
//   generator_blocks.cc  the building blocks: parameters, literal constants,
//                        random shapes and dtypes, operands, and the
//                        elementwise, row-wise, shape, activation and
//                        quantization op helpers the recipes share
//   graph_recipes.cc     the recipes, one per GraphKind, but Attention
//   attention_recipe.cc  the Attention recipe and its parts
//   graph_generator.cc   Generator::Run (recipe, tail, results) and the
//                        public entry points
//
// Every random draw goes through one Rng in a fixed order, so the same seed
// gives the same graph: a change to what a block or recipe draws, or to the
// order of the draws, changes the graphs of existing seeds.
#ifndef HGC_FUZZ_GENERATOR_BLOCKS_H_
#define HGC_FUZZ_GENERATOR_BLOCKS_H_

#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "fuzz/graph_generator.h"
#include "ir/attribute.h"
#include "ir/dtype.h"
#include "ir/graph.h"
#include "ir/tensor_type.h"

namespace hgc {
namespace generator_internal {

// The SplitMix64 finalizer: spreads nearby seeds apart.
inline uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The random source of the generator and of SpecialTensor.
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(SplitMix(seed)) {}
  // Uniform in [lo, hi].
  int64_t Int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(engine_);
  }
  double Real(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(engine_);
  }
  bool Chance(double p) { return Real(0, 1) < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int64_t>(v.size()) - 1))];
  }
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

bool IsFloatType(DType d);
bool IsIntType(DType d);
int64_t NumElements(const Shape& s);

// The sizes, dtype and head layout of the Generator's Attention block.
struct AttentionShape {
  int64_t b = 0, h = 0, sq = 0, skv = 0, dh = 0, dv = 0;
  DType d = DType::kF32;
  bool bshd = false;  // inputs as [B, S, H, D]
  bool mqa = false;   // one K/V head for all
  bool gqa = false;   // pairs of Q heads stacked along S onto one K/V head
  int64_t kvh = 0;    // K/V heads
  int64_t score_heads = 0, score_rows = 0;
};

// Builds one graph for GenerateGraph (fuzz/graph_generator.h).
class Generator {
 public:
  Generator(uint64_t seed, const GenerateOptions& options);

  // Picks the kind (unless fixed), runs its recipe, adds a random tail and
  // sets the results. Call once; defined in graph_generator.cc.
  absl::StatusOr<GeneratedGraph> Run();

 private:
  // ---- Building blocks (generator_blocks.cc) --------------------------------

  // A new op, or nullptr when an operand is nullptr or the op registry
  // refuses it. The result joins the pool.
  Value* Op(absl::string_view kind, std::vector<Value*> operands,
            AttrMap attrs = {}, std::vector<TensorType> declared = {});
  // A new parameter (x<i>, or w<i> when const); it joins the pool.
  Value* Input(TensorType type, bool is_const = false);

  // A value for a literal constant of dtype `d` (with special_values,
  // sometimes a special one).
  double ConstValue(DType d);
  Attribute NumberAttr(double v, DType d);
  // A literal constant of `type` (a scalar, a splat or a full list).
  Value* Const(TensorType type);

  // A dimension (sometimes 0 with special values and empty tensors).
  int64_t Dim();
  // A matmul dimension M, K or N (sometimes 0, as Dim).
  int64_t MatDim();
  Shape RandomShape(int max_rank, int64_t max_elements);
  // A shape that broadcasts to `s` under numpy's rules.
  Shape BroadcastShape(const Shape& s);

  DType FloatDType();
  DType AnyDType();
  TensorType FloatType(Shape s);

  // An operand of dtype `d` broadcasting to `shape`: a new parameter (const
  // or not), a literal constant, or a pool value that fits (used twice).
  Value* Operand(DType d, const Shape& shape);

  // One random elementwise op on x (keeping x's dtype, mostly).
  Value* ElementwiseOp(Value* x);
  // n elementwise ops after x (skipping refused ones).
  Value* Chain(Value* x, int n);
  // x itself or one of sigmoid, tanh, gelu, relu on x (nullptr when
  // refused).
  Value* Activation(Value* x);

  // softmax, layernorm or a reduce_* over random axes.
  Value* RowOp(Value* x);
  // softmax(x) {axis}: the op, or now and then written out op by op
  // (reduce_max, sub, exp, reduce_sum, div) as JAX exports it.
  Value* Softmax(Value* x, int64_t axis, bool axis_attr = true);
  Value* TransposeOp(Value* x);
  Value* ReshapeOp(Value* x);
  // slice of x over random axes: negative, clamped and backwards bounds.
  Value* SliceOp(Value* x);
  // concat of x with a new input along a random axis (nullptr for a
  // scalar).
  Value* ConcatOp(Value* x);

  // The attributes of a quantize to `to` (with `quantize`) or of a
  // dequantize from `to`: a scale and a zero point, per tensor or (with
  // channels > 0, sometimes) per channel along `axis`.
  AttrMap QuantAttrs(DType to, int64_t channels, int64_t axis, bool quantize);

  // ---- Recipes, one per GraphKind (graph_recipes.cc; Attention in
  // attention_recipe.cc) -----------------------------------------------------
  // Each returns the final value, or nullptr when it could not build one.

  Value* Elementwise();
  Value* MatmulGraph();
  Value* Mlp();
  Value* Rowwise();
  Value* Shapes();
  Value* Bf16();
  Value* Int8();
  Value* Attention();
  // Attention's optional extra score op (attention_recipe.cc).
  Value* ExtraScoreOp(Value* s, int64_t b, int64_t h, int64_t sq,
                      int64_t skv);
  Value* Mixed();

  // Attention's parts, each drawing in Attention's fixed order
  // (attention_recipe.cc):
  // Draws the block's sizes, dtype and head layout.
  AttentionShape RandomAttentionShape();
  // A [B, heads, seq, dim] operand (from [B, seq, heads, dim] when bshd).
  Value* AttentionInput(const AttentionShape& a, int64_t heads, int64_t seq,
                        int64_t dim);
  // Q, sometimes stored [D, S] (sets *q_transposed), grouped for gqa.
  Value* AttentionQuery(const AttentionShape& a, bool* q_transposed);
  // Q, sometimes scaled by a literal or a runtime scalar.
  Value* ScaleQuery(Value* q, DType d, double scale);
  // K or Kᵀ, sometimes scaled by sqrt(scale), a runtime scalar or 2.
  Value* MaybeScaleK(Value* k, DType d, double scale);
  // The scores Q·Kᵀ, with K transposed by attribute, by op or as stored.
  Value* AttentionScores(const AttentionShape& a, Value* q, bool q_transposed,
                         double scale);
  // The scores, sometimes scaled by a literal (scale or sqrt(dh)).
  Value* ScaleScores(Value* s, DType sd, int64_t dh, double scale);
  // The scores unmasked, or with an added mask, a select mask or a floor.
  Value* MaskScores(Value* s, const AttentionShape& a, DType sd);
  // O, sometimes transposed (and merged to [B, S, H·D]) and cast to f32.
  Value* ArrangeAttentionOutput(Value* o, const AttentionShape& a);

  Rng rng_;
  GenerateOptions options_;
  GeneratedGraph result_;
  Graph* graph_;
  // Every value made so far (parameters and op results): operands to reuse
  // and extra results.
  std::vector<Value*> pool_;
};

}  // namespace generator_internal
}  // namespace hgc

#endif  // HGC_FUZZ_GENERATOR_BLOCKS_H_
