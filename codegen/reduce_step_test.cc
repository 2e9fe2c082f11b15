#include "codegen/reduce_step.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ir/tensor.h"
#include "reference/reference_interpreter.h"
#include "support/float16.h"

namespace hgc {
namespace codegen {
namespace {

// RunReduce against the reference interpreter, bit for bit, on `dtype`
// data (bf16 / f16 values are the f32 ones rounded).
void ExpectMatchesReference(const char* kind, const Shape& shape,
                            const std::vector<int64_t>& axes,
                            bool with_nan = false, DType dtype = DType::kF32) {
  Tensor x = *Tensor::Create(TensorType(dtype, shape));
  const bool is_float =
      dtype == DType::kF32 || dtype == DType::kBF16 || dtype == DType::kF16;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    // Integers over their whole range (s8 and u8 sums wrap around).
    x.SetDouble(
        i, is_float ? std::sin(0.7f * i) * 3 + 0.25f * (i % 7)
                    : std::fmod(i * 2654435761.0, 4294967296.0) - 2147483648.0);
  }
  if (with_nan && x.num_elements() > 2) {
    x.SetDouble(2, std::numeric_limits<double>::quiet_NaN());
  }
  AttrMap attrs = {{"axes", Attribute::IntList(axes)}};
  absl::StatusOr<Tensor> want = EvaluateOp(kind, {x}, attrs);
  ASSERT_TRUE(want.ok()) << want.status();
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : axes) reduced[a < 0 ? a + shape.size() : a] = true;
  const ReduceKind k = *AsReduce(*OpKindFromName(kind));
  ReducePlan plan = PlanReduce(k, shape, reduced, dtype);
  ASSERT_EQ(plan.out_elements, want->num_elements());
  Tensor got = *Tensor::Create(want->type());
  std::vector<double> acc(plan.out_elements);
  RunReduce(plan, x.raw(), got.mutable_raw(), acc.data());
  for (int64_t o = 0; o < plan.out_elements; ++o) {
    const double w = want->GetDouble(o);
    if (std::isnan(w)) {
      EXPECT_TRUE(std::isnan(got.GetDouble(o))) << kind << " at " << o;
    }
  }
  if (!with_nan) {
    EXPECT_EQ(std::memcmp(got.raw(), want->raw(), got.size_in_bytes()), 0)
        << kind << " " << DTypeName(dtype);
  }
}

TEST(ReduceStepTest, MatchesReferenceOverAxes) {
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (const char* kind : {"reduce_sum", "reduce_max", "reduce_mean"}) {
      ExpectMatchesReference(kind, {2, 9, 16}, {1}, false, dtype);  // pooling
      ExpectMatchesReference(kind, {13, 7}, {0}, false, dtype);  // column sums
      ExpectMatchesReference(kind, {3, 4, 5, 6}, {0, 2}, false, dtype);
      ExpectMatchesReference(kind, {3, 4, 5}, {-1}, false, dtype);
      ExpectMatchesReference(kind, {3, 4, 5}, {0, 1, 2}, false, dtype);
      ExpectMatchesReference(kind, {1, 17}, {0}, false, dtype);
    }
  }
}

TEST(ReduceStepTest, IntegersSumAroundAndTakeTheirMax) {
  for (DType dtype : {DType::kS32, DType::kS8, DType::kU8}) {
    for (const char* kind : {"reduce_sum", "reduce_max"}) {
      ExpectMatchesReference(kind, {2, 9, 16}, {1}, false, dtype);
      ExpectMatchesReference(kind, {13, 7}, {0}, false, dtype);
      ExpectMatchesReference(kind, {3, 4, 5}, {-1}, false, dtype);
      ExpectMatchesReference(kind, {3, 4, 5}, {0, 1, 2}, false, dtype);
    }
  }
}

TEST(ReduceStepTest, NanPropagatesThroughMax) {
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    ExpectMatchesReference("reduce_max", {4, 6}, {0}, /*with_nan=*/true, dtype);
    ExpectMatchesReference("reduce_sum", {4, 6}, {1}, /*with_nan=*/true, dtype);
  }
}

TEST(ReduceStepTest, RoundsA16BitResultOnce) {
  // 1 + 2^-8 + 2^-30 is just above bf16's tie between 1 and 1 + 2^-7;
  // rounded to f32 first (to nearest) it would land on the tie and go to 1.
  Tensor x = *Tensor::Create(TensorType(DType::kBF16, {3, 1}));
  x.SetDouble(0, 1.0);
  x.SetDouble(1, 0x1p-8);
  x.SetDouble(2, 0x1p-30);
  ReducePlan plan =
      PlanReduce(ReduceKind::kReduceSum, {3, 1}, {true, false}, DType::kBF16);
  uint16_t out = 0;
  double acc = 0;
  RunReduce(plan, x.raw(), &out, &acc);
  EXPECT_EQ(Bf16ToFloat(out), 1 + 0x1p-7f);
}

TEST(ReduceStepTest, EmptyReductions) {
  // Reducing a zero-length axis: sum 0, max -inf, mean NaN.
  ReducePlan plan = PlanReduce(ReduceKind::kReduceMean, {3, 0}, {false, true});
  std::vector<float> out(3, 1);
  std::vector<double> acc(3);
  RunReduce(plan, nullptr, out.data(), acc.data());
  for (float v : out) EXPECT_TRUE(std::isnan(v));
  plan = PlanReduce(ReduceKind::kReduceMax, {3, 0}, {false, true});
  RunReduce(plan, nullptr, out.data(), acc.data());
  for (float v : out) EXPECT_EQ(v, -std::numeric_limits<float>::infinity());
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
