// The error-bound model of --check (reference/error_bound.h, check.h):
// values identical to Interpret's, bounds that admit a result off by what
// summation order and one rounding per op allow, and none for exact values.
#include "reference/check.h"

#include <cmath>
#include <string>
#include <vector>

#include "frontend/parser.h"
#include "gtest/gtest.h"
#include "reference/error_bound.h"
#include "reference/reference_interpreter.h"
#include "support/source_location.h"
#include "tensor_util/random_inputs.h"

namespace hgc {
namespace {

Module Parse(const std::string& text) {
  static SourceManager* sm = new SourceManager;
  absl::StatusOr<Module> m = ParseModule(text, "test.graph", *sm);
  EXPECT_TRUE(m.ok()) << m.status();
  return *std::move(m);
}

constexpr char kMlp[] = R"(
graph @g(%x: bf16[8, 64], %w0: bf16[64, 64] const, %w1: bf16[64, 32] const)
    -> (bf16[8, 32], bool[8, 32], f32[8, 64]) {
  %h = matmul(%x, %w0)
  %r = relu(%h)
  %y = matmul(%r, %w1)
  %z = constant() {value = 0.0} : bf16[]
  %b = greater(%y, %z)
  %e = cast(%x) {to = f32}
  return %y, %b, %e
}
)";

TEST(ErrorBoundTest, ValuesAreInterpretsAndExactValuesHaveNoBound) {
  Module m = Parse(kMlp);
  const Graph& g = *m.graphs().front();
  std::vector<Tensor> inputs = *RandomInputs(g, 3);
  std::vector<Tensor> plain = *Interpret(g, inputs);
  BoundedResults bounded = *InterpretWithErrorBounds(g, inputs);
  ASSERT_EQ(bounded.values.size(), 3u);
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_TRUE(CompareTensors(bounded.values[i], plain[i], Tolerance{0, 0})
                    ->ok());
  }
  // The matmul chain carries a bound; the exact cast none; the bool (y > 0)
  // may come out either way exactly where y's interval reaches 0.
  ASSERT_NE(bounded.bounds[0].raw(), nullptr);
  EXPECT_EQ(bounded.bounds[2].raw(), nullptr);
  for (int64_t i = 0; i < bounded.values[1].num_elements(); ++i) {
    const double y = bounded.values[0].GetDouble(i);
    const double flips = std::fabs(y) <= bounded.bounds[0].GetDouble(i);
    const double b = bounded.bounds[1].raw() == nullptr
                         ? 0
                         : bounded.bounds[1].GetDouble(i);
    EXPECT_EQ(b, flips) << "element " << i << ": y = " << y;
  }
  for (int64_t i = 0; i < bounded.bounds[0].num_elements(); ++i) {
    const double b = bounded.bounds[0].GetDouble(i);
    const double y = std::fabs(bounded.values[0].GetDouble(i));
    // At least a flip of the last bf16 rounding, and far below the value's
    // scale (a few percent after two layers).
    EXPECT_GE(b, 2 * 0x1p-8 * y);
    EXPECT_LT(b, 0.2 * (y + 1));
  }
}

TEST(ErrorBoundTest, CancellationGetsTheTermsMagnitude) {
  // 1000 - 1000 + small: the result is small, its bound is not.
  Module m = Parse(R"(
graph @g(%a: f32[1, 3], %b: f32[3, 1]) -> f32[1, 1] {
  %c = matmul(%a, %b)
  return %c
}
)");
  const Graph& g = *m.graphs().front();
  Tensor a = *Tensor::Create(TensorType(DType::kF32, {1, 3}));
  Tensor b = *Tensor::Create(TensorType(DType::kF32, {3, 1}));
  const float av[] = {1000.0f, -1000.0f, 0.001f}, bv[] = {1.0f, 1.0f, 1.0f};
  for (int i = 0; i < 3; ++i) {
    a.SetDouble(i, av[i]);
    b.SetDouble(i, bv[i]);
  }
  BoundedResults r = *InterpretWithErrorBounds(g, {a, b});
  const double bound = r.bounds[0].GetDouble(0);
  EXPECT_GT(bound, 1000 * 0x1p-24);
  EXPECT_LT(bound, 1000 * 0x1p-24 * 20);
}

TEST(CheckTest, AComparisonWithinRoundingMayGoEitherWay) {
  // exp(0) = 1 within exp's few ulps, so exp(x) < 1 may be true or false
  // at x = 0, and the select may pick either side; at x = 1 it may not.
  Module m = Parse(R"(
graph @g(%x: f32[2], %a: f32[2], %b: f32[2]) -> (bool[2], f32[2]) {
  %e = exp(%x)
  %one = constant() {value = 1.0} : f32[]
  %c = less(%e, %one)
  %s = select(%c, %a, %b)
  return %c, %s
}
)");
  const Graph& g = *m.graphs().front();
  Tensor x = *Tensor::Create(TensorType(DType::kF32, {2}));
  Tensor a = *Tensor::Create(TensorType(DType::kF32, {2}));
  Tensor b = *Tensor::Create(TensorType(DType::kF32, {2}));
  x.SetDouble(0, 0.0);
  x.SetDouble(1, 1.0);
  for (int i = 0; i < 2; ++i) {
    a.SetDouble(i, 10.0);
    b.SetDouble(i, -3.0);
  }
  std::vector<Tensor> outputs = *Interpret(g, {x, a, b});
  ASSERT_EQ(outputs[0].GetDouble(0), 0);  // exp(0) = 1 is not below 1
  std::vector<Tensor> flipped = outputs;
  flipped[0].SetDouble(0, 1);
  flipped[1].SetDouble(0, 10.0);
  std::vector<CompareResult> r = *CompareWithReference(g, {x, a, b}, flipped);
  EXPECT_TRUE(r[0].ok()) << r[0].Summary();
  EXPECT_TRUE(r[1].ok()) << r[1].Summary();
  // exp(1) is far from 1: that comparison and its select are exact.
  flipped = outputs;
  flipped[0].SetDouble(1, 1);
  flipped[1].SetDouble(1, 10.0);
  r = *CompareWithReference(g, {x, a, b}, flipped);
  EXPECT_FALSE(r[0].ok());
  EXPECT_FALSE(r[1].ok());
}

TEST(CheckTest, AcceptsAFlipCarriedThroughLayersRejectsWrongBoolsAndInts) {
  Module m = Parse(kMlp);
  const Graph& g = *m.graphs().front();
  std::vector<Tensor> inputs = *RandomInputs(g, 3);
  std::vector<Tensor> outputs = *Interpret(g, inputs);
  // Exactly the reference: passes.
  std::vector<CompareResult> same = *CompareWithReference(g, inputs, outputs);
  for (const CompareResult& r : same) EXPECT_TRUE(r.ok()) << r.Summary();

  // The first layer computed with one hidden element one bf16 ulp off.
  std::vector<Tensor> shifted = inputs;
  Tensor x = *Tensor::Create(inputs[0].type());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    x.SetDouble(i, inputs[0].GetDouble(i));
  }
  // Perturbing an input by one ulp stands in for a flip in the first layer.
  const double x0 = x.GetDouble(0);
  x.SetDouble(0, x0 + std::ldexp(std::fabs(x0), -7));
  shifted[0] = x;
  std::vector<Tensor> flipped = *Interpret(g, shifted);
  std::vector<CompareResult> r = *CompareWithReference(
      g, inputs, {flipped[0], outputs[1], outputs[2]});
  EXPECT_TRUE(r[0].ok()) << r[0].Summary();

  // A wrong bool fails where the floats behind it are apart by more than
  // their bounds.
  Tensor wrong_bool = *Tensor::Create(outputs[1].type());
  for (int64_t i = 0; i < wrong_bool.num_elements(); ++i) {
    wrong_bool.SetDouble(i, outputs[1].GetDouble(i));
  }
  wrong_bool.SetDouble(5, 1 - outputs[1].GetDouble(5));
  r = *CompareWithReference(g, inputs, {outputs[0], wrong_bool, outputs[2]});
  EXPECT_FALSE(r[1].ok());

  // A matmul output off by far more than its bound fails.
  Tensor wrong = *Tensor::Create(outputs[0].type());
  for (int64_t i = 0; i < wrong.num_elements(); ++i) {
    wrong.SetDouble(i, outputs[0].GetDouble(i));
  }
  wrong.SetDouble(3, outputs[0].GetDouble(3) + 1.0);
  r = *CompareWithReference(g, inputs, {wrong, outputs[1], outputs[2]});
  EXPECT_FALSE(r[0].ok()) << r[0].Summary();
}

TEST(CheckTest, IntegerOutputsStayExact) {
  Module m = Parse(R"(
graph @g(%a: s8[4, 16], %b: s8[16, 4]) -> s32[4, 4] {
  %c = matmul(%a, %b)
  return %c
}
)");
  const Graph& g = *m.graphs().front();
  std::vector<Tensor> inputs = *RandomInputs(g, 1);
  std::vector<Tensor> out = *Interpret(g, inputs);
  Tensor off = *Tensor::Create(out[0].type());
  for (int64_t i = 0; i < off.num_elements(); ++i) {
    off.SetDouble(i, out[0].GetDouble(i) + (i == 2 ? 1 : 0));
  }
  EXPECT_TRUE((*CompareWithReference(g, inputs, out))[0].ok());
  EXPECT_FALSE((*CompareWithReference(g, inputs, {off}))[0].ok());
}

// One-element f32 tensor of `shape` holding `values`.
Tensor F32(Shape shape, const std::vector<double>& values) {
  Tensor t = *Tensor::Create(TensorType(DType::kF32, std::move(shape)));
  for (size_t i = 0; i < values.size(); ++i) t.SetDouble(i, values[i]);
  return t;
}

TEST(CheckTest, WrappingIntegerOpsNearTheRangeAcceptAWrappedNeighbour) {
  // Row 0: the f32 matmul gives 0.33 up to its rounding, a tie of
  // 0.33 / 0.02 that may quantize to 21 or 22; times 24 in u8 those are 504
  // and 528, which wrap to 248 and 16. Row 1 is an exact 0: 5 * 24 = 120,
  // far from the range's ends, stays exact.
  Module m = Parse(R"(
graph @g(%a: f32[2, 3], %b: f32[3, 1], %w: u8[] const) -> (u8[2], s32[2]) {
  %s = matmul(%a, %b)
  %x = reshape(%s) {shape = [2]}
  %q = quantize(%x) {scale = 0.02, to = u8, zero_point = 5}
  %m = mul(%q, %w)
  %c = cast(%m) {to = s32}
  return %m, %c
}
)");
  const Graph& g = *m.graphs().front();
  Tensor w = *Tensor::Create(TensorType(DType::kU8, {}));
  w.SetDouble(0, 24);
  std::vector<Tensor> inputs = {F32({2, 3}, {0.2, -1.1, -1.1, 0, 0, 0}),
                                F32({3, 1}, {0, 0.8, -1.1}), w};
  BoundedResults r = *InterpretWithErrorBounds(g, inputs);
  const double ref = r.values[1].GetDouble(0);
  ASSERT_TRUE(ref == 248 || ref == 16) << ref;
  EXPECT_EQ(r.values[1].GetDouble(1), 120);
  auto with = [](const Tensor& like, int64_t i, double v) {
    Tensor t = like.Clone();
    t.SetDouble(i, v);
    return t;
  };
  const double other = ref == 248 ? 16 : 248;
  std::vector<CompareResult> c = *CompareWithReference(
      r, {with(r.values[0], 0, other), with(r.values[1], 0, other)});
  EXPECT_TRUE(c[0].ok()) << c[0].Summary();
  EXPECT_TRUE(c[1].ok()) << c[1].Summary();
  c = *CompareWithReference(
      r, {with(r.values[0], 1, 144), with(r.values[1], 1, 144)});
  EXPECT_FALSE(c[0].ok());
  EXPECT_FALSE(c[1].ok());
}

TEST(CheckTest, InfinityFromAnIntervalAtASingularityIsUncertain) {
  // The f32 products-then-sums of the reference cancel to 0 (FMAs give
  // 5.96e-8, the exact sum is 2.98e-8): log of it is -inf for the
  // reference, and anything for a correct implementation.
  Module m = Parse(R"(
graph @g(%a: f32[1, 3], %b: f32[3, 1], %x: f32[2]) -> (f32[1, 1], f32[2]) {
  %c = matmul(%a, %b)
  %l = log(%c)
  %y = log(%x)
  return %l, %y
}
)");
  const Graph& g = *m.graphs().front();
  std::vector<Tensor> inputs = {
      F32({1, 3}, {1.75, 2.950000047683716, 3.950000047683716}),
      F32({3, 1}, {0.8500000238418579, 0.5, -0.75}), F32({2}, {0.0, 0.5})};
  BoundedResults r = *InterpretWithErrorBounds(g, inputs);
  EXPECT_EQ(r.values[0].GetDouble(0), -INFINITY);
  EXPECT_EQ(r.bounds[0].GetDouble(0), INFINITY);
  std::vector<CompareResult> c = *CompareWithReference(
      r, {F32({1, 1}, {-16.6355}), F32({2}, {-INFINITY, std::log(0.5)})});
  EXPECT_TRUE(c[0].ok()) << c[0].Summary();
  EXPECT_TRUE(c[1].ok()) << c[1].Summary();
  // log of an exact 0 is -inf for certain.
  EXPECT_EQ(r.bounds[1].GetDouble(0), 0);
  c = *CompareWithReference(r,
                            {r.values[0], F32({2}, {-16.6355, std::log(0.5)})});
  EXPECT_FALSE(c[1].ok());
}

TEST(CheckTest, CertainInfinitiesStayExact) {
  // inf / (2 +- E) and inf + (1 +- E) are inf whatever E; 0 * inf is NaN.
  Module m = Parse(R"(
graph @g(%a: f32[1, 4], %b: f32[4, 2], %x: f32[3]) -> f32[3] {
  %c = matmul(%a, %b)
  %s = reduce_sum(%c)
  %t = reshape(%s) {shape = [1]}
  %d = div(%x, %t)
  return %d
}
)");
  const Graph& g = *m.graphs().front();
  std::vector<Tensor> inputs = {F32({1, 4}, {0.1, 0.2, 0.3, 0.4}),
                                F32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                                F32({3}, {INFINITY, -INFINITY, NAN})};
  BoundedResults r = *InterpretWithErrorBounds(g, inputs);
  EXPECT_EQ(r.values[0].GetDouble(0), INFINITY);
  EXPECT_EQ(r.values[0].GetDouble(1), -INFINITY);
  std::vector<CompareResult> c =
      *CompareWithReference(r, {F32({3}, {-INFINITY, -INFINITY, NAN})});
  EXPECT_FALSE(c[0].ok());
  c = *CompareWithReference(r, {F32({3}, {INFINITY, 3.4e38, NAN})});
  EXPECT_FALSE(c[0].ok());
  c = *CompareWithReference(r, {F32({3}, {INFINITY, -INFINITY, 1})});
  EXPECT_FALSE(c[0].ok());
  c = *CompareWithReference(r, {r.values[0]});
  EXPECT_TRUE(c[0].ok());
}

TEST(CheckTest, SoftmaxUnderflowTimesInfinityIsUncertain) {
  // Row 0: p of -103.2 underflows to 0 (exp(-103.7) / 2 < 2^-150) while
  // exp still gives a denormal, so p * inf may be inf (a deferred division
  // by the sum) or NaN (the reference). Row 1: exp(-200) is 0 in f32, and
  // exp(-inf) is 0 for certain, so 0 * inf is NaN for certain.
  Module m = Parse(R"(
graph @g(%x: f32[2, 3], %v: f32[3, 1]) -> f32[2, 1] {
  %p = softmax(%x)
  %o = matmul(%p, %v)
  return %o
}
)");
  const Graph& g = *m.graphs().front();
  std::vector<Tensor> inputs = {
      F32({2, 3}, {0.5, 0.5, -103.2, 0.5, 0.5, -200.0}),
      F32({3, 1}, {1.0, 2.0, INFINITY})};
  BoundedResults r = *InterpretWithErrorBounds(g, inputs);
  EXPECT_TRUE(std::isnan(r.values[0].GetDouble(0)));
  EXPECT_TRUE(std::isnan(r.values[0].GetDouble(1)));
  std::vector<CompareResult> c =
      *CompareWithReference(r, {F32({2, 1}, {INFINITY, NAN})});
  EXPECT_TRUE(c[0].ok()) << c[0].Summary();
  c = *CompareWithReference(r, {F32({2, 1}, {INFINITY, INFINITY})});
  EXPECT_FALSE(c[0].ok()) << c[0].Summary();
  inputs[0] = F32({2, 3}, {0.5, 0.5, -103.2, 0.5, 0.5, -INFINITY});
  r = *InterpretWithErrorBounds(g, inputs);
  c = *CompareWithReference(r, {F32({2, 1}, {INFINITY, INFINITY})});
  EXPECT_FALSE(c[0].ok()) << c[0].Summary();
}

TEST(CheckTest, ZeroSumsOfUncertainSignAcceptEitherInfinity) {
  // a * b: -1e-40 * 1e-40 underflows to -0 (the reference's +0 + -0 is +0,
  // an fma from +0 gives -0), -1e-40 * -0 is an exact +0 in every order.
  // 1 / x, with x an exact -0, is -inf for certain.
  Module m = Parse(R"(
graph @g(%a: f32[1, 1], %b: f32[1, 2], %x: f32[1]) -> (f32[1, 2], f32[1]) {
  %c = matmul(%a, %b)
  %one = constant() {value = 1.0} : f32[]
  %d = div(%one, %c)
  %y = div(%one, %x)
  return %d, %y
}
)");
  const Graph& g = *m.graphs().front();
  std::vector<Tensor> inputs = {F32({1, 1}, {-1e-40}),
                                F32({1, 2}, {1e-40, -0.0}), F32({1}, {-0.0})};
  BoundedResults r = *InterpretWithErrorBounds(g, inputs);
  EXPECT_EQ(r.values[0].GetDouble(0), INFINITY);
  EXPECT_EQ(r.values[0].GetDouble(1), INFINITY);
  EXPECT_EQ(r.values[1].GetDouble(0), -INFINITY);
  std::vector<CompareResult> c = *CompareWithReference(
      r, {F32({1, 2}, {-INFINITY, INFINITY}), F32({1}, {-INFINITY})});
  EXPECT_TRUE(c[0].ok()) << c[0].Summary();
  EXPECT_TRUE(c[1].ok()) << c[1].Summary();
  // A sign bug in exact code still fails: the certain +0 sum and the
  // elementwise division of an exact -0.
  c = *CompareWithReference(
      r, {F32({1, 2}, {INFINITY, -INFINITY}), F32({1}, {INFINITY})});
  EXPECT_FALSE(c[0].ok()) << c[0].Summary();
  EXPECT_FALSE(c[1].ok()) << c[1].Summary();
}

TEST(ErrorBoundTest, ZeroSumsOfExactZerosAreCertain) {
  // Products that are exact zeros with a +0 among them give +0 in every
  // order; all -0 products give +0 or -0; reduce_sum the same.
  Module m = Parse(R"(
graph @g(%a: f32[2, 2], %b: f32[2, 1]) -> (f32[2, 1], f32[2]) {
  %c = matmul(%a, %b)
  %s = reduce_sum(%a) {axes = [1]}
  return %c, %s
}
)");
  const Graph& g = *m.graphs().front();
  // Row 0: (+0, -0) . (1, 1) = +0 + -0; row 1: (-0, -0) . (1, 1) = all -0.
  std::vector<Tensor> inputs = {F32({2, 2}, {0.0, -0.0, -0.0, -0.0}),
                                F32({2, 1}, {1.0, 1.0})};
  BoundedResults r = *InterpretWithErrorBounds(g, inputs);
  for (int out = 0; out < 2; ++out) {
    ASSERT_NE(r.bounds[out].raw(), nullptr);
    EXPECT_EQ(r.bounds[out].GetDouble(0), 0) << out;
    EXPECT_GT(r.bounds[out].GetDouble(1), 0) << out;
  }
}

TEST(ErrorBoundTest, AFlipIsAtLeastOneDenormalStep) {
  // gelu of the smallest f16 denormal rounds to it or to 0 (its exact
  // value is just above the tie); gelu(0) = 0 and log(1) = 0 exactly.
  Module m = Parse(R"(
graph @g(%x: f16[2], %y: f32[1]) -> (f16[2], f32[1]) {
  %g = gelu(%x)
  %l = log(%y)
  return %g, %l
}
)");
  const Graph& g = *m.graphs().front();
  Tensor x = *Tensor::Create(TensorType(DType::kF16, {2}));
  x.SetDouble(0, 0x1p-24);
  x.SetDouble(1, 0.0);
  BoundedResults r = *InterpretWithErrorBounds(g, {x, F32({1}, {1.0})});
  EXPECT_EQ(r.values[0].GetDouble(0), 0x1p-24);
  EXPECT_GE(r.bounds[0].GetDouble(0), 0x1p-24);
  EXPECT_EQ(r.bounds[0].GetDouble(1), 0);
  EXPECT_EQ(r.bounds[1].raw(), nullptr);
}

TEST(RandomInputsTest, MatmulOperandsAreScaledByKToTheMinusQuarter) {
  Module m = Parse(R"(
graph @g(%q: f32[2, 256], %k: f32[2, 256], %bias: f32[2, 2],
         %w: f32[16, 2] const) -> f32[2, 2] {
  %kt = transpose(%k) {perm = [1, 0]}
  %s = matmul(%q, %kt)
  %t = add(%s, %bias)
  return %t
}
)");
  const Graph& g = *m.graphs().front();
  EXPECT_DOUBLE_EQ(InputFillOptions(g, 0).float_max, 0.25);
  EXPECT_DOUBLE_EQ(InputFillOptions(g, 0).float_min, -0.25);
  EXPECT_DOUBLE_EQ(InputFillOptions(g, 1).float_max, 0.25);  // transposed
  EXPECT_DOUBLE_EQ(InputFillOptions(g, 2).float_max, 1.0);   // no matmul
  EXPECT_DOUBLE_EQ(InputFillOptions(g, 3).float_max, 1.0);   // unused
  std::vector<Tensor> inputs = *RandomInputs(g, 9);
  for (int64_t i = 0; i < inputs[0].num_elements(); ++i) {
    EXPECT_LE(std::fabs(inputs[0].GetDouble(i)), 0.25);
  }
}

}  // namespace
}  // namespace hgc
