#include "codegen/reduce_step.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ir/tensor.h"
#include "reference/reference_interpreter.h"

namespace hgc {
namespace codegen {
namespace {

// RunReduce against the reference interpreter, bit for bit.
void ExpectMatchesReference(const char* kind, const Shape& shape,
                            const std::vector<int64_t>& axes,
                            bool with_nan = false) {
  Tensor x = *Tensor::Create(TensorType(DType::kF32, shape));
  float* data = x.mutable_data<float>();
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    data[i] = std::sin(0.7f * i) * 3 + 0.25f * (i % 7);
  }
  if (with_nan && x.num_elements() > 2) {
    data[2] = std::numeric_limits<float>::quiet_NaN();
  }
  AttrMap attrs = {{"axes", Attribute::IntList(axes)}};
  absl::StatusOr<Tensor> want = EvaluateOp(kind, {x}, attrs);
  ASSERT_TRUE(want.ok()) << want.status();
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : axes) reduced[a < 0 ? a + shape.size() : a] = true;
  const ReduceKind k = std::strcmp(kind, "reduce_sum") == 0 ? ReduceKind::kSum
                       : std::strcmp(kind, "reduce_max") == 0
                           ? ReduceKind::kMax
                           : ReduceKind::kMean;
  ReducePlan plan = PlanReduce(k, shape, reduced);
  ASSERT_EQ(plan.out_elements, want->num_elements());
  std::vector<float> got(plan.out_elements);
  std::vector<double> acc(plan.out_elements);
  RunReduce(plan, x.data<float>(), got.data(), acc.data());
  for (int64_t o = 0; o < plan.out_elements; ++o) {
    const float w = want->data<float>()[o];
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(got[o])) << kind << " at " << o;
    } else {
      EXPECT_EQ(got[o], w) << kind << " at " << o;
    }
  }
}

TEST(ReduceStepTest, MatchesReferenceOverAxes) {
  for (const char* kind : {"reduce_sum", "reduce_max", "reduce_mean"}) {
    ExpectMatchesReference(kind, {2, 9, 16}, {1});  // sequence pooling
    ExpectMatchesReference(kind, {13, 7}, {0});     // column sums
    ExpectMatchesReference(kind, {3, 4, 5, 6}, {0, 2});
    ExpectMatchesReference(kind, {3, 4, 5}, {-1});
    ExpectMatchesReference(kind, {3, 4, 5}, {0, 1, 2});
    ExpectMatchesReference(kind, {1, 17}, {0});
  }
}

TEST(ReduceStepTest, NanPropagatesThroughMax) {
  ExpectMatchesReference("reduce_max", {4, 6}, {0}, /*with_nan=*/true);
  ExpectMatchesReference("reduce_sum", {4, 6}, {1}, /*with_nan=*/true);
}

TEST(ReduceStepTest, EmptyReductions) {
  // Reducing a zero-length axis: sum 0, max -inf, mean NaN.
  ReducePlan plan = PlanReduce(ReduceKind::kMean, {3, 0}, {false, true});
  std::vector<float> out(3, 1);
  std::vector<double> acc(3);
  RunReduce(plan, nullptr, out.data(), acc.data());
  for (float v : out) EXPECT_TRUE(std::isnan(v));
  plan = PlanReduce(ReduceKind::kMax, {3, 0}, {false, true});
  RunReduce(plan, nullptr, out.data(), acc.data());
  for (float v : out) EXPECT_EQ(v, -std::numeric_limits<float>::infinity());
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
