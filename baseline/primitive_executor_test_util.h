// Helpers shared by the primitive executor's tests
// (primitive_executor_test.cc, primitive_executor_ops_test.cc): type and
// attribute shorthands, seeded inputs, and Check, which runs a graph
// through the executor and the reference interpreter and compares them.
#ifndef HGC_BASELINE_PRIMITIVE_EXECUTOR_TEST_UTIL_H_
#define HGC_BASELINE_PRIMITIVE_EXECUTOR_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "baseline/primitive_executor.h"
#include "gtest/gtest.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "ir/tensor_type.h"
#include "tensor_util/random_fill.h"
#include "tensor_util/tensor_compare.h"

namespace hgc {
namespace executor_test {

inline TensorType F32(Shape s) { return TensorType(DType::kF32, std::move(s)); }
inline TensorType BF16(Shape s) {
  return TensorType(DType::kBF16, std::move(s));
}
inline TensorType Ty(DType d, Shape s) { return TensorType(d, std::move(s)); }

inline Attribute I(int64_t v) { return Attribute::Int(v); }
inline Attribute Fl(double v) { return Attribute::Float(v); }
inline Attribute B(bool v) { return Attribute::Bool(v); }
inline Attribute S(std::string v) { return Attribute::String(std::move(v)); }
inline Attribute Ints(std::vector<int64_t> v) { return Attribute::IntList(v); }
inline Attribute Floats(std::vector<double> v) {
  return Attribute::FloatList(v);
}
inline Attribute D(DType d) { return Attribute::Type(d); }

// Whether oneDNN has its own bf16 primitives here depends on the CPU and on
// ONEDNN_MAX_CPU_ISA (oneDNN 2.6 has them on AVX-512 only); without them
// the executor runs bf16 ops as reference steps ("ref:"). The tests
// check either outcome's consequences, never which one the host gives.
bool HasReferenceStep(const PrimitiveExecutor& e, const std::string& kind);

// Unwraps a StatusOr in a test body.
template <typename T>
T Get(absl::StatusOr<T> v) {
  EXPECT_TRUE(v.ok()) << v.status();
  return *std::move(v);
}

// Seeded random tensors for the parameters of `g`.
std::vector<Tensor> RandomInputs(const Graph& g, uint64_t seed,
                                 const RandomFillOptions& fill = {});

// Runs `g` through the executor and the interpreter and compares every
// output; returns the executor for further checks (nullptr on failure).
std::unique_ptr<PrimitiveExecutor> Check(
    const Graph& g, int threads, PrimitiveExecutor::Options options = {},
    const RandomFillOptions& fill = {}, uint64_t seed = 7,
    std::optional<Tolerance> tolerance = std::nullopt);

// The executor's steps as one line: "step | step | ...".
std::string Joined(const PrimitiveExecutor& e);

// The tests run with 1 and 2 threads (the parameter).
class ExecutorTest : public ::testing::TestWithParam<int> {
 protected:
  int threads() const { return GetParam(); }
  Module module_;
};

}  // namespace executor_test
}  // namespace hgc

#endif  // HGC_BASELINE_PRIMITIVE_EXECUTOR_TEST_UTIL_H_
