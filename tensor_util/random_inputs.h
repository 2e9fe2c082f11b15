// Seeded random inputs for a whole graph: what `hgc --run`, `--check` and
// `--bench` feed parameters that no --input names, and what the API tests
// use.
//
// Every parameter is filled by FillRandom (tensor_util/random_fill.h) from the
// stream of its name, with one change of range: a floating-point parameter
// that reaches an operand of a matmul (directly, or through reshape,
// transpose, cast and the parameters of fusion bodies) is drawn from
// [-s, s) with s = K^(-1/4), K the contraction length of that matmul (the
// smallest s where it reaches several). A matmul of two such parameters
// then has entries of about the inputs' size whatever K is (the sum of K
// products of two U(-s, s) values has standard deviation sqrt(K) s^2 / 3 =
// 1/3), and a chain of layers grows by about K^(1/4) per layer instead of
// sqrt(K), so that attention scores stay in a realistic range (|scores| of
// a few units, where unscaled inputs through Q/K projections of width 768
// reach ~500 and turn softmax into a one-hot argmax whose every ulp of
// score error is an error of the output). Other parameters keep
// RandomFillOptions' default range [-1, 1).
#ifndef HGC_TENSOR_UTIL_RANDOM_INPUTS_H_
#define HGC_TENSOR_UTIL_RANDOM_INPUTS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "tensor_util/random_fill.h"

namespace hgc {

// The fill options of parameter `index` of `graph` (see above).
RandomFillOptions InputFillOptions(const Graph& graph, int index);

// One seeded random tensor per parameter of `graph`, each from the stream of
// its name with InputFillOptions; ResourceExhausted above `max_bytes`.
absl::StatusOr<std::vector<Tensor>> RandomInputs(
    const Graph& graph, uint64_t seed,
    int64_t max_bytes = Tensor::kDefaultMaxBytes);

}  // namespace hgc

#endif  // HGC_TENSOR_UTIL_RANDOM_INPUTS_H_
