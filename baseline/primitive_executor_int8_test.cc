// The QDQ form on the primitive executor: matmuls of dequantized 8-bit
// operands run as oneDNN int8 matmuls (scales, zero points, post-ops and a
// trailing quantize fused), the way a framework's oneDNN integration runs
// them. Whether oneDNN has an int8 matmul for the host (and the ISA cap) is
// not checked: either way the results must match the reference, and the
// steps must be the int8 matmul or the plain chain.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "baseline/primitive_executor.h"
#include "baseline/primitive_executor_test_util.h"
#include "gtest/gtest.h"
#include "ir/builder.h"
#include "ir/graph.h"

namespace hgc {
namespace executor_test {
namespace {

// Per-column weight scales 0.01, 0.02, ... (n of them).
Attribute ColumnScales(int n) {
  std::vector<double> scales;
  for (int i = 0; i < n; ++i) scales.push_back(0.01 * (1 + i % 4));
  return Floats(scales);
}

// u8 x (zero point 128) . s8 w (per column) + b, relu, quantized to u8
// with zero point 3: one QDQ layer as ONNX exports it.
Graph* BuildQdqLayer(Module& m, bool result_quantized) {
  Graph* g = m.AddGraph(result_quantized ? "qdq_u8" : "qdq_f32");
  Builder b(g);
  Value* x = g->AddParam("x", Ty(DType::kU8, {32, 64}));
  Value* w = g->AddParam("w", Ty(DType::kS8, {64, 48}), true);
  Value* bias = g->AddParam("b", F32({48}), true);
  Value* xd = Get(b.Create("dequantize", {x},
                           {{"scale", Fl(0.02)}, {"zero_point", I(128)}}));
  Value* wd = Get(b.Create("dequantize", {w},
                           {{"scale", ColumnScales(48)}, {"axis", I(1)}}));
  Value* r = Get(b.Unary("relu", Get(b.Binary("add", Get(b.Matmul(xd, wd)),
                                              bias))));
  if (result_quantized) {
    r = Get(b.Create("quantize", {r},
                     {{"scale", Fl(0.05)},
                      {"zero_point", I(3)},
                      {"to", D(DType::kU8)}}));
  }
  g->SetResults({r});
  return g;
}

TEST_P(ExecutorTest, QdqLayerIsOneInt8Matmul) {
  for (bool quantized : {false, true}) {
    SCOPED_TRACE(quantized ? "u8 result" : "f32 result");
    Graph* g = BuildQdqLayer(module_, quantized);
    // A requantized value may land one step away (x * (1/scale) against
    // the reference's x / scale, and another summation order).
    auto exec = Check(*g, threads(), {}, {}, 7,
                      quantized ? std::optional<Tolerance>(Tolerance{1, 0})
                                : std::nullopt);
    ASSERT_NE(exec, nullptr);
    const std::string steps = Joined(*exec);
    if (absl::StartsWith(steps, "matmul_int8")) {
      EXPECT_EQ(steps, quantized ? "matmul_int8+add+relu+quantize"
                                 : "matmul_int8+add+relu");
    } else {
      EXPECT_TRUE(absl::StrContains(steps, "dequantize")) << steps;
    }
  }
}

// A dequantized value that something else reads too is still computed;
// per-row (K-axis) weight scales do not factor out of the sums, so that
// matmul stays f32.
TEST_P(ExecutorTest, Int8MatmulKeepsSharedAndUnfactorableDequantizes) {
  Graph* g = module_.AddGraph("shared");
  Builder b(g);
  Value* x = g->AddParam("x", Ty(DType::kS8, {16, 32}));
  Value* w = g->AddParam("w", Ty(DType::kS8, {32, 8}), true);
  Value* wk = g->AddParam("wk", Ty(DType::kS8, {32, 8}), true);
  Value* xd = Get(b.Create("dequantize", {x}, {{"scale", Fl(0.1)}}));
  Value* wd = Get(b.Create("dequantize", {w}, {{"scale", Fl(0.03)}}));
  Value* wkd = Get(b.Create("dequantize", {wk},
                            {{"scale", ColumnScales(32)}, {"axis", I(0)}}));
  Value* y = Get(b.Matmul(xd, wd));
  Value* yk = Get(b.Matmul(xd, wkd));
  g->SetResults({y, yk, xd});
  auto exec = Check(*g, threads());
  ASSERT_NE(exec, nullptr);
  const std::string steps = Joined(*exec);
  // %xd is a result: computed whatever the matmuls do.
  EXPECT_TRUE(absl::StartsWith(steps, "dequantize | ")) << steps;
  // The K-scaled matmul reads the f32 weights.
  EXPECT_TRUE(absl::StrContains(steps, "dequantize | matmul")) << steps;
}

INSTANTIATE_TEST_SUITE_P(Threads, ExecutorTest, ::testing::Values(1, 2));

}  // namespace
}  // namespace executor_test
}  // namespace hgc
