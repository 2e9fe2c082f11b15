// API edge cases of canonicalize; behaviour tests are in
// testdata/passes/canonicalize/.
#include "passes/canonicalize.h"

#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::CountOps;
using pass_test::ExpectSameNumbers;
using pass_test::Optimize;
using pass_test::Parse;
using pass_test::RunPipeline;

TEST(CanonicalizeTest, IdentitiesNeedTheSameType) {
  // x * 1 with a broadcast that grows the shape is not x.
  Module m = Parse(R"(
graph @g(%x: f32[4], %y: f32[4]) -> (f32[4], f32[2, 4], f32[4]) {
  %one = constant() {value = 1.0} : f32[2, 4]
  %a = mul(%x, %one)
  %zero = constant() {value = [-0.0, -0.0, -0.0, -0.0]} : f32[4]
  %b = add(%zero, %y)
  %one_s = constant() {value = 1.0} : f32[]
  %c = mul(%one_s, %x)
  return %b, %a, %c
}
)");
  ASSERT_TRUE(RunPipeline(m, "canonicalize").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(g.results()[0], g.param(1));
  EXPECT_EQ(g.results()[1]->defining_op()->kind(), "mul");
  EXPECT_EQ(g.results()[2], g.param(0));
}

TEST(CanonicalizeTest, TransposeComposition) {
  std::string out = Optimize(R"(
graph @g(%x: f32[2, 3, 4]) -> (f32[4, 2, 3], f32[2, 3, 4]) {
  %a = transpose(%x) {perm = [1, 2, 0]}
  %b = transpose(%a) {perm = [1, 2, 0]}
  %c = transpose(%a) {perm = [2, 0, 1]}
  return %b, %c
}
)",
                             "canonicalize");
  // %a: [3, 4, 2]; %b picks a's dims [1, 2, 0] = x's [2, 0, 1].
  EXPECT_NE(out.find("%b = transpose(%x) {perm = [2, 0, 1]} : f32[4, 2, 3]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("return %b, %x"), std::string::npos) << out;
  ExpectSameNumbers(R"(
graph @g(%x: f32[2, 3, 4]) -> f32[4, 2, 3] {
  %a = transpose(%x) {perm = [1, 2, 0]}
  %b = transpose(%a) {perm = [1, 2, 0]}
  return %b
}
)",
                    "canonicalize");
}

TEST(CanonicalizeTest, ReciprocalRules) {
  // f32 by 3 is inexact: only the fast-math option allows it.
  const char* kDiv3 = R"(
graph @g(%x: f32[4]) -> f32[4] {
  %c = constant() {value = 3.0} : f32[]
  %y = div(%x, %c)
  return %y
}
)";
  EXPECT_EQ(CountOps(*Parse(kDiv3).graphs()[0], "div"), 1);
  Module m = Parse(kDiv3);
  ASSERT_TRUE(RunPipeline(m, "canonicalize").ok());
  EXPECT_EQ(CountOps(*m.graphs()[0], "div"), 1);
  Module fast = Parse(kDiv3);
  ASSERT_TRUE(
      RunPipeline(fast, "canonicalize{exact-reciprocal-only=false}").ok());
  EXPECT_EQ(CountOps(*fast.graphs()[0], "div"), 0);
  ExpectSameNumbers(kDiv3, "canonicalize{exact-reciprocal-only=false}");
  // bf16 by 3: no; bf16 by 0.25: yes (exact 4).
  std::string bf = Optimize(R"(
graph @g(%x: bf16[4]) -> (bf16[4], bf16[4]) {
  %c = constant() {value = 3.0} : bf16[]
  %y = div(%x, %c)
  %q = constant() {value = 0.25} : bf16[]
  %z = div(%x, %q)
  return %y, %z
}
)",
                            "canonicalize");
  EXPECT_NE(bf.find("%y = div(%x, %c)"), std::string::npos) << bf;
  EXPECT_NE(bf.find("%z = mul(%x, "), std::string::npos) << bf;
  EXPECT_NE(bf.find("{value = 4.0} : bf16[]"), std::string::npos) << bf;
  // Zero, and a reciprocal that would be subnormal, are left alone; a list
  // constant gets a list of reciprocals.
  std::string edge = Optimize(R"(
graph @g(%x: f32[2]) -> (f32[2], f32[2], f32[2]) {
  %z = constant() {value = 0.0} : f32[]
  %a = div(%x, %z)
  %h = constant() {value = 1e38} : f32[]
  %b = div(%x, %h)
  %l = constant() {value = [2.0, 0.5]} : f32[2]
  %c = div(%x, %l)
  return %a, %b, %c
}
)",
                              "canonicalize");
  EXPECT_NE(edge.find("%a = div(%x, %z)"), std::string::npos) << edge;
  EXPECT_NE(edge.find("%b = div(%x, %h)"), std::string::npos) << edge;
  EXPECT_NE(edge.find("{value = [0.5, 2.0]} : f32[2]"), std::string::npos)
      << edge;
}

TEST(CanonicalizeTest, OnlySignedZerosThatAreExactIdentities) {
  Module m = Parse(R"(
graph @g(%x: f32[4]) -> (f32[4], f32[4], f32[4], f32[4], f32[4]) {
  %pz = constant() {value = 0.0} : f32[]
  %nz = constant() {value = -0.0} : f32[]
  %a = add(%x, %pz)
  %b = add(%pz, %x)
  %c = sub(%x, %nz)
  %d = add(%nz, %x)
  %e = sub(%x, %pz)
  return %a, %b, %c, %d, %e
}
)");
  ASSERT_TRUE(RunPipeline(m, "canonicalize").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(g.results()[0]->defining_op()->kind(), "add");
  EXPECT_EQ(g.results()[1]->defining_op()->kind(), "add");
  EXPECT_EQ(g.results()[2]->defining_op()->kind(), "sub");
  EXPECT_EQ(g.results()[3], g.param(0));
  EXPECT_EQ(g.results()[4], g.param(0));
}

TEST(CanonicalizeTest, RunsToAFixedPointAndReportsNoChangeAfter) {
  Module m = Parse(R"(
graph @g(%x: s32[4]) -> s32[4] {
  %a = neg(%x)
  %b = neg(%a)
  %c = neg(%b)
  %d = neg(%c)
  %zero = constant() {value = 0} : s32[]
  %e = sub(%d, %zero)
  return %e
}
)");
  CanonicalizeOptions options;
  absl::StatusOr<bool> changed = CanonicalizeGraph(*m.graphs()[0], options);
  ASSERT_TRUE(changed.ok());
  EXPECT_TRUE(*changed);
  EXPECT_EQ(m.graphs()[0]->results()[0], m.graphs()[0]->param(0));
  EXPECT_TRUE(m.graphs()[0]->ops().empty());
  changed = CanonicalizeGraph(*m.graphs()[0], options);
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace hgc
