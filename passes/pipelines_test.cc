#include "passes/pipelines.h"

#include "gtest/gtest.h"
#include "passes/register_all_passes.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

TEST(PipelinesTest, NamedPipelines) {
  EXPECT_EQ(DescribeNamedPipeline("O0"), "verify");
  EXPECT_EQ(DescribeNamedPipeline("O2"),
            "canonicalize,fold-constants,recognize-softmax,"
            "attention-transposes,attention-repeat-kv,attention-reshapes,"
            "attention-k-scale,canonicalize,cse,"
            "dce,attention-fusion,quantized-matmul,widen-f16-matmul,softmax-"
            "last-axis,fusion,"
            "mlp-fusion,dce");
  EXPECT_TRUE(IsNamedPipeline("O2"));
  EXPECT_FALSE(IsNamedPipeline("O3"));
}

TEST(PipelinesTest, StringsMixPassesAndNamedPipelines) {
  PassManager pm;
  ASSERT_TRUE(
      AddPipeline("O0,fusion{max-ops=4},dce", GlobalPassRegistry(), pm).ok());
  EXPECT_EQ(pm.PipelineString(), "verify,fusion,dce");
}

TEST(PipelinesTest, Errors) {
  PassManager pm;
  EXPECT_FALSE(AddPipeline("O2{x=1}", GlobalPassRegistry(), pm).ok());
  EXPECT_FALSE(AddPipeline("nope", GlobalPassRegistry(), pm).ok());
  EXPECT_FALSE(AddPipeline("fusion{max-ops=0}", GlobalPassRegistry(), pm).ok());
  EXPECT_FALSE(AddPipeline("cse{a=1}", GlobalPassRegistry(), pm).ok());
  EXPECT_FALSE(AddPipeline("cse,", GlobalPassRegistry(), pm).ok());
}

TEST(PipelinesTest, O2PreservesNumbersOnAnMlpAndAttention) {
  pass_test::ExpectSameNumbers(R"(
graph @mlp(%x: f32[8, 13], %w0: f32[13, 32] const, %b0: f32[32] const,
           %w1: f32[32, 16] const, %b1: f32[16] const) -> f32[8, 16] {
  %0 = matmul(%x, %w0)
  %1 = add(%0, %b0)
  %2 = relu(%1)
  %3 = matmul(%2, %w1)
  %4 = add(%3, %b1)
  %5 = relu(%4)
  return %5
}
)",
                               "O2");
  pass_test::ExpectSameNumbers(R"(
graph @mha(%q: f32[2, 2, 8, 4], %k: f32[2, 2, 8, 4], %v: f32[2, 2, 8, 4],
           %mask: f32[2, 1, 1, 8]) -> f32[2, 2, 8, 4] {
  %s = matmul(%q, %k) {transpose_b = true}
  %c = constant() {value = 3.0} : f32[]
  %t = div(%s, %c)
  %m = add(%t, %mask)
  %p = softmax(%m) {axis = -1}
  %o = matmul(%p, %v)
  return %o
}
)",
                               "O2");
}

}  // namespace
}  // namespace hgc
