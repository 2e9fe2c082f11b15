// concat and slice of the portable kernels against numpy's results.
#include <cstdint>
#include <limits>

#include "gtest/gtest.h"
#include "runtime/portable/evaluate.h"
#include "runtime/portable/test_util.h"

namespace hgc {
namespace portable {
namespace {

using namespace testing_util;  // NOLINT

constexpr int64_t kBig = std::numeric_limits<int64_t>::max();
constexpr int64_t kSmall = std::numeric_limits<int64_t>::min();

// 0, 1, ..., n - 1 as an f32 tensor of `shape`.
Tensor Iota(Shape shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i));
  return F32(std::move(shape), v);
}

TEST(ConcatTest, EveryAxis) {
  Tensor a = Iota({2, 2});
  Tensor b = F32({2, 1}, {10, 11});
  Tensor c = F32({1, 2}, {20, 21});
  Tensor cols = Eval("concat", {a, b}, {{"axis", I(1)}});
  EXPECT_EQ(cols.shape(), (Shape{2, 3}));
  ExpectValues(cols, {0, 1, 10, 2, 3, 11});
  Tensor rows = Eval("concat", {a, c, a}, {{"axis", I(-2)}});
  EXPECT_EQ(rows.shape(), (Shape{5, 2}));
  ExpectValues(rows, {0, 1, 2, 3, 20, 21, 0, 1, 2, 3});
}

TEST(ConcatTest, OneOperandEmptyOperandsAndIntegers) {
  ExpectValues(Eval("concat", {Iota({3})}, {{"axis", I(0)}}), {0, 1, 2});
  Tensor r = Eval("concat", {F32({2, 0}, {}), Iota({2, 2}), F32({2, 0}, {})},
                  {{"axis", I(1)}});
  ExpectValues(r, {0, 1, 2, 3});
  Tensor s8 = Eval("concat",
                   {T(DType::kS8, {2}, {-128, 127}), T(DType::kS8, {1}, {5})},
                   {{"axis", I(0)}});
  EXPECT_EQ(s8.dtype(), DType::kS8);
  ExpectValues(s8, {-128, 127, 5});
}

TEST(ConcatTest, RefusesMismatches) {
  EXPECT_FALSE(EvaluateOp("concat", {Iota({2, 2}), Iota({3, 3})},
                          {{"axis", I(0)}})
                   .ok());
  EXPECT_FALSE(
      EvaluateOp("concat", {Iota({2}), Iota({2, 1})}, {{"axis", I(0)}}).ok());
  EXPECT_FALSE(EvaluateOp("concat", {Iota({2}), T(DType::kS32, {2}, {1, 2})},
                          {{"axis", I(0)}})
                   .ok());
  EXPECT_FALSE(EvaluateOp("concat", {Iota({2})}, {{"axis", I(1)}}).ok());
  EXPECT_FALSE(EvaluateOp("concat", {F32({}, {1})}, {{"axis", I(0)}}).ok());
}

// x[start:end:step] of 0..9, as numpy gives it.
std::vector<double> Slice1(int64_t start, int64_t end, int64_t step) {
  Tensor r = Eval("slice", {Iota({10})},
                  {{"starts", Ints({start})},
                   {"ends", Ints({end})},
                   {"steps", Ints({step})}});
  return Values(r);
}

TEST(SliceTest, NumpyBasicSlicingInOneDim) {
  using V = std::vector<double>;
  EXPECT_EQ(Slice1(2, 5, 1), (V{2, 3, 4}));
  EXPECT_EQ(Slice1(-3, kBig, 1), (V{7, 8, 9}));    // x[-3:]
  EXPECT_EQ(Slice1(1, -1, 3), (V{1, 4, 7}));       // x[1:-1:3]
  EXPECT_EQ(Slice1(-100, 2, 1), (V{0, 1}));        // start clamps to 0
  EXPECT_EQ(Slice1(8, 100, 1), (V{8, 9}));         // end clamps to 10
  EXPECT_EQ(Slice1(kBig, kSmall, -1),              // x[::-1]
            (V{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(Slice1(7, 2, -2), (V{7, 5, 3}));       // x[7:2:-2]
  EXPECT_EQ(Slice1(-1, -4, -1), (V{9, 8, 7}));     // x[-1:-4:-1]
  EXPECT_EQ(Slice1(100, -100, -4), (V{9, 5, 1}));  // both clamp, backwards
  EXPECT_EQ(Slice1(3, 9, kBig), (V{3}));
  EXPECT_EQ(Slice1(9, 0, kSmall), (V{9}));         // |step| overflows int64
  EXPECT_EQ(Slice1(5, 5, 1), V{});                 // empty
  EXPECT_EQ(Slice1(6, 2, 1), V{});                 // empty: wrong direction
  EXPECT_EQ(Slice1(2, 6, -1), V{});
  EXPECT_EQ(Slice1(-100, -50, 1), V{});
}

TEST(SliceTest, AxesStepsAndDefaults) {
  Tensor x = Iota({3, 4});
  // x[:, ::-2]
  Tensor r = Eval("slice", {x},
                  {{"starts", Ints({kBig})},
                   {"ends", Ints({kSmall})},
                   {"axes", Ints({-1})},
                   {"steps", Ints({-2})}});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  ExpectValues(r, {3, 1, 7, 5, 11, 9});
  // x[1:, 1:3] with axes and steps left out.
  r = Eval("slice", {x}, {{"starts", Ints({1, 1})}, {"ends", Ints({3, 3})}});
  EXPECT_EQ(r.shape(), (Shape{2, 2}));
  ExpectValues(r, {5, 6, 9, 10});
  // x[-1:0:-1, 0:1] through axes in another order.
  r = Eval("slice", {x},
           {{"starts", Ints({0, -1})},
            {"ends", Ints({1, 0})},
            {"axes", Ints({1, 0})},
            {"steps", Ints({1, -1})}});
  EXPECT_EQ(r.shape(), (Shape{2, 1}));
  ExpectValues(r, {8, 4});
  // An empty result in one dim empties the tensor.
  r = Eval("slice", {x}, {{"starts", Ints({2})}, {"ends", Ints({2})},
                          {"axes", Ints({1})}});
  EXPECT_EQ(r.shape(), (Shape{3, 0}));
}

TEST(SliceTest, OtherDTypesAndRank3) {
  Tensor x = T(DType::kU8, {2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor r = Eval("slice", {x}, {{"starts", Ints({1, -1})},
                                 {"ends", Ints({2, kSmall})},
                                 {"axes", Ints({2, 0})},
                                 {"steps", Ints({1, -1})}});
  EXPECT_EQ(r.dtype(), DType::kU8);
  EXPECT_EQ(r.shape(), (Shape{2, 2, 1}));
  ExpectValues(r, {5, 7, 1, 3});
  Tensor h = Bits16(DType::kBF16, {4}, {1, 2, 3, 4});
  EXPECT_EQ(Bits(Eval("slice", {h}, {{"starts", Ints({3})},
                                     {"ends", Ints({0})},
                                     {"steps", Ints({-2})}})),
            (std::vector<uint16_t>{4, 2}));
}

TEST(SliceTest, RefusesBadAttributes) {
  Tensor x = Iota({3, 4});
  auto bad = [&](AttrMap attrs) {
    absl::StatusOr<Tensor> r = EvaluateOp("slice", {x}, attrs);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
        << r.status();
  };
  bad({{"starts", Ints({0})}, {"ends", Ints({1})}, {"steps", Ints({0})}});
  bad({{"starts", Ints({0})}, {"ends", Ints({1})}, {"axes", Ints({2})}});
  bad({{"starts", Ints({0, 0})}, {"ends", Ints({1, 1})},
       {"axes", Ints({1, -1})}});
  bad({{"starts", Ints({0, 0})}, {"ends", Ints({1})}});
  bad({{"starts", Ints({0})}, {"ends", Ints({1})}, {"axes", Ints({0, 1})}});
  bad({{"starts", Ints({0})}, {"ends", Ints({1})}, {"steps", Ints({1, 1})}});
  bad({{"starts", Ints({0, 0, 0})}, {"ends", Ints({1, 1, 1})}});
  bad({{"ends", Ints({1})}});
}

}  // namespace
}  // namespace portable
}  // namespace hgc
