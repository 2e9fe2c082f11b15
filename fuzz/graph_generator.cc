// The public entry points of the graph generator (fuzz/graph_generator.h)
// and Generator::Run, which assembles one graph: a recipe
// (fuzz/graph_recipes.cc), a random tail and the results. The building
// blocks are in fuzz/generator_blocks.cc.
#include "fuzz/graph_generator.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <utility>
#include <vector>

#include "fuzz/generator_blocks.h"
#include "ir/dtype.h"
#include "ir/tensor_type.h"

namespace hgc {
namespace generator_internal {

Generator::Generator(uint64_t seed, const GenerateOptions& options)
    : rng_(seed), options_(options) {
  graph_ = result_.module.AddGraph("fuzz");
}

absl::StatusOr<GeneratedGraph> Generator::Run() {
  result_.kind =
      options_.fixed_kind
          ? options_.kind
          : kAllGraphKinds[rng_.Int(0, std::size(kAllGraphKinds) - 1)];
  Value* last = nullptr;
  switch (result_.kind) {
    case GraphKind::kElementwise:
      last = Elementwise();
      break;
    case GraphKind::kMatmul:
      last = MatmulGraph();
      break;
    case GraphKind::kMlp:
      last = Mlp();
      break;
    case GraphKind::kRowwise:
      last = Rowwise();
      break;
    case GraphKind::kShapes:
      last = Shapes();
      break;
    case GraphKind::kBf16:
      last = Bf16();
      break;
    case GraphKind::kInt8:
      last = Int8();
      break;
    case GraphKind::kAttention:
      last = Attention();
      break;
    case GraphKind::kMixed:
      last = Mixed();
      break;
  }
  if (last == nullptr) {
    // A recipe that could not build anything: a plain chain instead.
    last = Chain(Input(FloatType(RandomShape(2, 512))), 3);
  }
  // A short random tail.
  if (rng_.Chance(0.3)) last = Chain(last, static_cast<int>(rng_.Int(1, 3)));
  std::vector<Value*> results = {last};
  // Several results: intermediates (then used twice) or a parameter.
  int extra = rng_.Chance(0.3) ? static_cast<int>(rng_.Int(1, 2)) : 0;
  for (int i = 0; i < extra && !pool_.empty(); ++i) {
    Value* v = rng_.Pick(pool_);
    if (std::find(results.begin(), results.end(), v) == results.end()) {
      results.push_back(v);
    }
  }
  if (rng_.Chance(0.02) && graph_->num_params() > 0) {
    results.push_back(graph_->param(0));
  }
  if (rng_.Chance(0.3))
    std::shuffle(results.begin(), results.end(), rng_.engine());
  std::vector<TensorType> types;
  for (Value* v : results) types.push_back(v->type());
  graph_->SetResults(results);
  graph_->SetDeclaredResultTypes(std::move(types));
  return std::move(result_);
}

}  // namespace generator_internal

namespace {

using generator_internal::Generator;
using generator_internal::Rng;
using generator_internal::SplitMix;

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

absl::string_view GraphKindName(GraphKind kind) {
  switch (kind) {
    case GraphKind::kElementwise:
      return "elementwise";
    case GraphKind::kMatmul:
      return "matmul";
    case GraphKind::kMlp:
      return "mlp";
    case GraphKind::kRowwise:
      return "rowwise";
    case GraphKind::kShapes:
      return "shapes";
    case GraphKind::kBf16:
      return "bf16";
    case GraphKind::kInt8:
      return "int8";
    case GraphKind::kAttention:
      return "attention";
    case GraphKind::kMixed:
      return "mixed";
  }
  return "?";
}

bool ParseGraphKind(absl::string_view name, GraphKind* kind) {
  for (GraphKind k : kAllGraphKinds) {
    if (GraphKindName(k) == name) {
      *kind = k;
      return true;
    }
  }
  return false;
}

absl::StatusOr<GeneratedGraph> GenerateGraph(uint64_t seed,
                                             const GenerateOptions& options) {
  return Generator(seed, options).Run();
}

Tensor SpecialTensor(const TensorType& type, uint64_t seed, uint64_t stream) {
  Tensor t = *Tensor::Create(type);
  Rng rng(SplitMix(seed) ^ SplitMix(stream + 0x1234));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  static const std::vector<double> kFloat = {
      0.0,     -0.0, kInf, -kInf, nan,    1e-40,      -1e-40,     1.4e-45,
      -2.5,    -0.5, 0.5,  1.5,   2.5,    1.00390625, 1.01171875, -1.00390625,
      65520.0, 6e-8, 1e-5, 100.0, -100.0, 1.0,        -1.0};
  static const std::vector<double> kS8 = {-128, 127, 0, -1, 1, 126, -127};
  static const std::vector<double> kU8 = {0, 255, 1, 128, 127, 254};
  static const std::vector<double> kS32 = {
      -2147483648.0, 2147483647.0, 0, -1, 1, 65536, -65536};
  const double special = rng.Real(0.1, 0.6);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const bool sp = rng.Chance(special);
    double v;
    switch (type.dtype) {
      case DType::kS8:
        v = sp ? rng.Pick(kS8) : rng.Int(-32, 32);
        break;
      case DType::kU8:
        v = sp ? rng.Pick(kU8) : rng.Int(0, 64);
        break;
      case DType::kS32:
        v = sp ? rng.Pick(kS32) : rng.Int(-1000, 1000);
        break;
      case DType::kBool:
        v = rng.Int(0, 1);
        break;
      default:
        v = sp ? rng.Pick(kFloat) : std::round(rng.Real(-4, 4) * 4096) / 4096;
    }
    t.SetDouble(i, v);
  }
  return t;
}

}  // namespace hgc
