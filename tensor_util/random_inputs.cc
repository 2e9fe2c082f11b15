#include "tensor_util/random_inputs.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace hgc {
namespace {

// How deeply fusion bodies are followed (the verifier rejects cycles).
constexpr int kMaxDepth = 64;

// Lowers `scale` to K^(-1/4) for the largest K of the matmuls `v` (of `graph`) reaches, through
// reshape/transpose/cast and into fusion bodies.
void SmallestScale(const Graph& graph, const Value* v, int depth,
                      double& scale) {
  if (depth > kMaxDepth) return;
  for (const auto& op : graph.ops()) {
    for (int i = 0; i < op->num_operands(); ++i) {
      if (op->operand(i) != v) continue;
      const OpKind kind = op->kind_id();
      if (kind == OpKind::kMatmul && i < 2) {
        const Shape& shape = v->type().shape;
        const Attribute* t =
            op->FindAttr(i == 0 ? "transpose_a" : "transpose_b");
        const bool transposed = t != nullptr && t->is_bool() && t->as_bool();
        // a [.., M, K] (K last) and b [.., K, N] (K second to last).
        const bool k_last = (i == 0) != transposed;
        if (shape.size() >= 2) {
          const int64_t k = shape[shape.size() - (k_last ? 1 : 2)];
          if (k > 0) scale = std::min(scale, std::pow(double(k), -0.25));
        }
      } else if ((kind == OpKind::kReshape || kind == OpKind::kTranspose ||
                  kind == OpKind::kCast) &&
                 op->num_results() == 1) {
        SmallestScale(graph, op->result(0), depth + 1, scale);
      } else if (kind == OpKind::kFusion) {
        const Attribute* body = op->FindAttr("body");
        const Module* module = graph.module();
        const Graph* g = body != nullptr && body->is_symbol() && module
                             ? module->FindGraph(body->as_symbol())
                             : nullptr;
        if (g != nullptr && i < g->num_params()) {
          SmallestScale(*g, g->param(i), depth + 1, scale);
        }
      }
    }
  }
}

}  // namespace

RandomFillOptions InputFillOptions(const Graph& graph, int index) {
  RandomFillOptions options;
  const Value* param = graph.param(index);
  if (!IsFloat(param->type().dtype)) return options;
  double scale = 1.0;
  SmallestScale(graph, param, 0, scale);
  options.float_min = -scale;
  options.float_max = scale;
  return options;
}

absl::StatusOr<std::vector<Tensor>> RandomInputs(const Graph& graph,
                                                 uint64_t seed,
                                                 int64_t max_bytes) {
  std::vector<Tensor> inputs;
  for (int i = 0; i < graph.num_params(); ++i) {
    absl::StatusOr<Tensor> t =
        RandomTensor(graph.param(i)->type(), seed, graph.param(i)->name(),
                     InputFillOptions(graph, i), max_bytes);
    if (!t.ok()) return t.status();
    inputs.push_back(*std::move(t));
  }
  return inputs;
}

}  // namespace hgc
