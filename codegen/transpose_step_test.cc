#include "codegen/transpose_step.h"

#include <cstdint>
#include <numeric>
#include <vector>

#include "gtest/gtest.h"

namespace hgc {
namespace codegen {
namespace {

// out[j...] = in[i...] with i[perm[d]] = j[d], element by element.
template <typename T>
std::vector<T> NaiveTranspose(const std::vector<T>& in, const Shape& shape,
                              const std::vector<int64_t>& perm) {
  const size_t rank = shape.size();
  std::vector<int64_t> strides(rank, 1), out_shape(rank);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  for (size_t d = 0; d < rank; ++d) out_shape[d] = shape[perm[d]];
  std::vector<T> out(in.size());
  std::vector<int64_t> idx(rank, 0);
  for (size_t flat = 0; flat < out.size(); ++flat) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += idx[d] * strides[perm[d]];
    out[flat] = in[src];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

template <typename T>
void ExpectMatchesNaive(const Shape& shape, const std::vector<int64_t>& perm) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::vector<T> in(count);
  std::iota(in.begin(), in.end(), T(1));
  std::vector<T> out(count, T(0));
  absl::StatusOr<TransposePlan> plan = PlanTranspose(shape, perm, sizeof(T));
  ASSERT_TRUE(plan.ok()) << plan.status();
  RunTranspose(*plan, in.data(), out.data());
  const std::vector<T> want = NaiveTranspose(in, shape, perm);
  EXPECT_EQ(out, want);
  // Split into parts (threads' shares), run one after another.
  for (int parts : {2, 3, 7}) {
    std::vector<T> split(count, T(0));
    for (int part = 0; part < parts; ++part) {
      RunTranspose(*plan, in.data(), split.data(), part, parts);
    }
    EXPECT_EQ(split, want) << parts << " parts";
  }
}

TEST(TransposeStepTest, MatchesNaiveForManyPermutations) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{5, 7}, {1, 0}},
      {{5, 7}, {0, 1}},
      {{2, 3, 4}, {2, 0, 1}},
      {{2, 64, 4, 16}, {0, 2, 1, 3}},  // head split: rows of 16 copied whole
      {{2, 4, 64, 16}, {0, 2, 1, 3}},  // head merge
      {{2, 6, 3, 4, 5}, {2, 0, 3, 1, 4}},
      {{1, 9, 1, 3}, {3, 2, 1, 0}},  // size-1 dims
      {{3, 1, 1}, {1, 2, 0}},
      {{1, 1}, {1, 0}},
      {{17}, {0}},
      // The innermost output dim gathers with a stride: 4-byte elements
      // go through 16 x 16 register tiles, whole and partial.
      {{33, 17}, {1, 0}},
      {{3, 37, 50}, {0, 2, 1}},
      {{4, 32, 48}, {0, 2, 1}},
      {{2, 5, 40, 3}, {0, 3, 1, 2}},  // the contiguous dim not next to last
      {{19, 2, 21}, {2, 1, 0}},
  };
  for (const auto& [shape, perm] : cases) {
    SCOPED_TRACE(::testing::PrintToString(shape) + " by " +
                 ::testing::PrintToString(perm));
    ExpectMatchesNaive<float>(shape, perm);
    ExpectMatchesNaive<uint16_t>(shape, perm);
    ExpectMatchesNaive<int8_t>(shape, perm);
  }
}

TEST(TransposeStepTest, MergesContiguousDims) {
  // [B, S, H, D] -> [B, H, S, D]: D stays innermost and contiguous.
  absl::StatusOr<TransposePlan> plan =
      PlanTranspose({2, 64, 4, 16}, {0, 2, 1, 3}, 4);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->in_strides.back(), 1);
  EXPECT_EQ(plan->dims.back(), 16);
  // The identity is one contiguous run.
  plan = PlanTranspose({3, 4, 5}, {0, 1, 2}, 4);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->dims, std::vector<int64_t>({60}));
}

TEST(TransposeStepTest, EmptyTensorsCopyNothing) {
  absl::StatusOr<TransposePlan> plan = PlanTranspose({3, 0, 2}, {2, 1, 0}, 4);
  ASSERT_TRUE(plan.ok());
  float sentinel = 42;
  RunTranspose(*plan, nullptr, &sentinel);
  EXPECT_EQ(sentinel, 42);
}

TEST(TransposeStepTest, NegativeAxesCountFromTheEnd) {
  ExpectMatchesNaive<float>({3, 4, 5}, {0, 2, 1});
  absl::StatusOr<TransposePlan> a = PlanTranspose({3, 4, 5}, {0, -1, -2}, 4);
  absl::StatusOr<TransposePlan> b = PlanTranspose({3, 4, 5}, {0, 2, 1}, 4);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->dims, b->dims);
  EXPECT_EQ(a->in_strides, b->in_strides);
}

TEST(TransposeStepTest, RejectsNonPermutations) {
  EXPECT_FALSE(PlanTranspose({3, 4}, {0, 0}, 4).ok());
  EXPECT_FALSE(PlanTranspose({3, 4}, {0}, 4).ok());
  EXPECT_FALSE(PlanTranspose({3, 4}, {0, 2}, 4).ok());
}

// A slice's plan: x[3::-1, 1::2] of a 4 x 6 input (negative and merged
// strides), split in parts as the threads run it.
TEST(TransposeStepTest, StridedCopyWalksBackwards) {
  std::vector<int32_t> in(24);
  std::iota(in.begin(), in.end(), 0);
  absl::StatusOr<TransposePlan> plan = PlanStridedCopy({4, 3}, {-6, 2}, 4);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::vector<int32_t> want = {19, 21, 23, 13, 15, 17,
                                     7,  9,  11, 1,  3,  5};
  for (int parts : {1, 2, 5}) {
    std::vector<int32_t> out(12, -1);
    for (int part = 0; part < parts; ++part) {
      RunTranspose(*plan, in.data() + 19, out.data(), part, parts);
    }
    EXPECT_EQ(out, want) << parts << " parts";
  }
  // x[::-1] of 24 contiguous elements, and an empty copy.
  plan = PlanStridedCopy({2, 12}, {-12, -1}, 4);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::vector<int32_t> reversed(24);
  RunTranspose(*plan, in.data() + 23, reversed.data());
  EXPECT_EQ(reversed.front(), 23);
  EXPECT_EQ(reversed.back(), 0);
  EXPECT_EQ(plan->dims, (std::vector<int64_t>{24}));  // merged
  plan = PlanStridedCopy({3, 0}, {1, 1}, 4);
  ASSERT_TRUE(plan.ok());
  RunTranspose(*plan, in.data(), reversed.data());  // writes nothing
  EXPECT_FALSE(PlanStridedCopy({2}, {1, 1}, 4).ok());
  EXPECT_FALSE(PlanStridedCopy({2}, {1}, 3).ok());
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
