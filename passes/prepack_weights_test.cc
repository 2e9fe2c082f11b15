#include "passes/prepack_weights.h"

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::Parse;
using pass_test::RunPipeline;

TEST(PrepackWeightsTest, LayoutPerDType) {
  EXPECT_EQ(PackedLayoutFor(DType::kF32), "plain");
  EXPECT_EQ(PackedLayoutFor(DType::kBF16), "vnni2");
  EXPECT_EQ(PackedLayoutFor(DType::kF16), "vnni2");
  EXPECT_EQ(PackedLayoutFor(DType::kS8), "vnni4");
  EXPECT_EQ(PackedLayoutFor(DType::kU8), "vnni4");
}

TEST(PrepackWeightsTest, OnlyConstWeightsReadAsB) {
  Module m = Parse(R"(
graph @g(%x: s8[4, 8], %w: s8[8, 16] const, %v: f32[4, 16] const,
         %y: f32[4, 16], %z: f32[16, 16]) -> (s32[4, 16], f32[4, 16]) {
  %0 = matmul(%x, %w)
  %1 = matmul(%y, %z)
  %2 = matmul(%v, %z)
  %3 = add(%1, %2)
  return %0, %3
}
)");
  ASSERT_TRUE(RunPipeline(m, "fusion,prepack-weights").ok());
  std::string out = PrintModule(m);
  // s8 weight: vnni4. %z is not const; %v is const but an A operand.
  EXPECT_NE(out.find("{b_layout = \"vnni4\", body = @g_fused_0, kind = "
                     "\"matmul\", packed_operands = [1]}"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("packed_operands = [0]"), std::string::npos) << out;
  // Running it again changes nothing.
  PrepackWeightsPass pass;
  EXPECT_FALSE(*pass.Run(m));
}

TEST(PrepackWeightsTest, ConstOnlyProducersCount) {
  // A transposed constant weight is still constant: packed once.
  Module m = Parse(R"(
graph @g(%x: bf16[4, 8], %w: bf16[16, 8] const) -> bf16[4, 16] {
  %wt = transpose(%w)
  %0 = matmul(%x, %wt)
  return %0
}
)");
  ASSERT_TRUE(RunPipeline(m, "fusion,prepack-weights").ok());
  EXPECT_NE(PrintModule(m).find("b_layout = \"vnni2\""), std::string::npos);
}

}  // namespace
}  // namespace hgc
