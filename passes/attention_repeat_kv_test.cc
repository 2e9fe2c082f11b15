// attention-repeat-kv: which repeats of K and V the attention matmuls read
// in place, that the values are unchanged, and that the block then fuses
// as one attention group; the golden file is
// testdata/attention/gqa_expand.graph.
#include "passes/attention_repeat_kv.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::CountOps;
using pass_test::ExpectBitIdentical;
using pass_test::Parse;
using pass_test::RunPipeline;

// HF's repeat_kv without an expand op: 2 kv heads, 3 query heads each.
// CONST is replaced by each test's constant.
constexpr char kRepeat[] = R"(
graph @gqa(%q: f32[2, 6, 5, 8], %k: f32[2, 2, 7, 8], %v: f32[2, 2, 7, 8],
           %mask: f32[2, 1, 1, 7]) -> f32[2, 6, 5, 8] {
  %kr = reshape(%k) {shape = [2, 2, 1, 7, 8]}
  %c = CONST
  %ke = mul(%kr, %c)
  %kf = reshape(%ke) {shape = [2, 6, 7, 8]}
  %vr = reshape(%v) {shape = [2, 2, 1, 7, 8]}
  %ve = mul(%c, %vr)
  %vf = reshape(%ve) {shape = [2, 6, 7, 8]}
  %s = matmul(%q, %kf) {transpose_b = true}
  %sc = constant() {value = 0.35355339} : f32[]
  %t = mul(%s, %sc)
  %m = add(%t, %mask)
  %p = softmax(%m)
  %o = matmul(%p, %vf)
  return %o
}
)";

std::string WithConst(const std::string& constant) {
  return absl::StrReplaceAll(kRepeat, {{"CONST", constant}});
}

// The number of matmuls whose B operand is a 5-D value read before the
// repeat (a reshape of a parameter, or its transpose), after `pipeline`.
int MatmulsReadingInPlace(const std::string& text,
                          const std::string& pipeline) {
  Module m = Parse(text);
  absl::Status s = RunPipeline(m, pipeline);
  EXPECT_TRUE(s.ok()) << s;
  int n = 0;
  for (const auto& op : m.graphs()[0]->ops()) {
    if (op->kind() != "matmul") continue;
    const Value* b = op->operand(1);
    if (b->defining_op() != nullptr &&
        b->defining_op()->kind() == "transpose") {
      b = b->defining_op()->operand(0);
    }
    const Op* def = b->defining_op();
    n += b->type().rank() == 5 && def != nullptr && def->kind() == "reshape" &&
         def->operand(0)->is_param();
  }
  return n;
}

TEST(AttentionRepeatKvTest, ReadsKAndVOncePerKvHead) {
  const std::string text =
      WithConst("constant() {value = 1.0} : f32[1, 1, 3, 1, 1]");
  EXPECT_EQ(MatmulsReadingInPlace(text, "attention-repeat-kv"), 2);
  Module m = Parse(text);
  ASSERT_TRUE(RunPipeline(m, "attention-repeat-kv").ok());
  const Graph& g = *m.graphs()[0];
  // The repeats are gone: the only muls left are the scale's.
  EXPECT_EQ(CountOps(g, "mul"), 1);
  // Q and the mask regrouped, P·V's result reshaped back, the unit-dim
  // reshapes of K and V kept.
  EXPECT_EQ(CountOps(g, "reshape"), 5);
  EXPECT_EQ(CountOps(g, "softmax"), 1);
  ExpectBitIdentical(text, "attention-repeat-kv");
}

TEST(AttentionRepeatKvTest, TakesFullOnesZerosAndTransposedK) {
  // Ones of the repeated shape, written out element by element.
  std::string ones = "constant() {value = [";
  for (int i = 0; i < 2 * 2 * 3 * 7 * 8; ++i) ones += i ? ", 1.0" : "1.0";
  ones += "]} : f32[2, 2, 3, 7, 8]";
  const std::string full = WithConst(ones);
  EXPECT_EQ(MatmulsReadingInPlace(full, "attention-repeat-kv"), 2);
  ExpectBitIdentical(full, "attention-repeat-kv");

  // add of zeros, either sign.
  for (const char* zero : {"0.0", "-0.0"}) {
    std::string text = WithConst(
        absl::StrCat("constant() {value = ", zero, "} : f32[1, 1, 3, 1, 1]"));
    text = absl::StrReplaceAll(
        text, {{"mul(%kr", "add(%kr"}, {"mul(%c, %vr", "add(%c, %vr"}});
    EXPECT_EQ(MatmulsReadingInPlace(text, "attention-repeat-kv"), 2) << zero;
    ExpectBitIdentical(text, "attention-repeat-kv");
  }

  // Kᵀ by a transpose op, as HF's key.transpose(2, 3) exports.
  std::string transposed =
      WithConst("constant() {value = 1.0} : f32[1, 1, 3, 1, 1]");
  transposed = absl::StrReplaceAll(
      transposed, {{"%s = matmul(%q, %kf) {transpose_b = true}",
                    "%kt = transpose(%kf) {perm = [0, 1, 3, 2]}\n"
                    "  %s = matmul(%q, %kt)"}});
  EXPECT_EQ(MatmulsReadingInPlace(transposed, "attention-repeat-kv"), 2);
  ExpectBitIdentical(transposed, "attention-repeat-kv");
}

TEST(AttentionRepeatKvTest, RegroupsPerHeadSideOperands) {
  // A per-head bias given at run time, a per-head literal slope, a mask
  // shared by the heads, mul(s, s) reading the scores twice, a cast round
  // trip of P; R = 2.
  const std::string text = R"(
graph @g(%q: f32[1, 4, 5, 8], %k: f32[1, 2, 7, 8], %v: f32[1, 2, 7, 8],
         %bias: f32[4, 5, 7], %keep: bool[1, 1, 5, 7]) -> f32[1, 4, 5, 8] {
  %c = constant() {value = 1.0} : f32[1, 1, 2, 1, 1]
  %kr = reshape(%k) {shape = [1, 2, 1, 7, 8]}
  %ke = mul(%c, %kr)
  %kf = reshape(%ke) {shape = [1, 4, 7, 8]}
  %vr = reshape(%v) {shape = [1, 2, 1, 7, 8]}
  %ve = mul(%vr, %c)
  %vf = reshape(%ve) {shape = [1, 4, 7, 8]}
  %s = matmul(%q, %kf) {transpose_b = true}
  %ss = mul(%s, %s)
  %b = add(%ss, %bias)
  %slope = constant() {value = [0.5, 0.25, 0.125, 0.0625]} : f32[4, 1, 1]
  %a = mul(%b, %slope)
  %ninf = constant() {value = -inf} : f32[]
  %m = select(%keep, %a, %ninf)
  %p = softmax(%m) {axis = 3}
  %pb = cast(%p) {to = bf16}
  %pf = cast(%pb) {to = f32}
  %o = matmul(%pf, %vf)
  return %o
}
)";
  EXPECT_EQ(MatmulsReadingInPlace(text, "attention-repeat-kv"), 2);
  ExpectBitIdentical(text, "attention-repeat-kv");
  // The matcher takes no mul(s, s); with a tanh cap instead the block
  // fuses whole.
  Module m = Parse(absl::StrReplaceAll(text, {{"mul(%s, %s)", "tanh(%s)"}}));
  ASSERT_TRUE(RunPipeline(m, "O2").ok());
  EXPECT_EQ(CountOps(*m.graphs()[0], "fusion"), 1);
}

TEST(AttentionRepeatKvTest, LeavesKOrVRepeatedAloneOrBroadcastOverTheBatch) {
  const char* kCases[] = {
      // Only K repeated.
      R"(graph @g(%q: f32[2, 4, 5, 8], %k: f32[2, 2, 7, 8], %v: f32[2, 4, 7, 8])
    -> f32[2, 4, 5, 8] {
  %kr = reshape(%k) {shape = [2, 2, 1, 7, 8]}
  %c = constant() {value = 1.0} : f32[1, 1, 2, 1, 1]
  %ke = mul(%kr, %c)
  %kf = reshape(%ke) {shape = [2, 4, 7, 8]}
  %s = matmul(%q, %kf) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
})",
      // K and V shared by the batch as well.
      R"(graph @g(%q: f32[2, 4, 5, 8], %k: f32[1, 2, 7, 8], %v: f32[1, 2, 7, 8])
    -> f32[2, 4, 5, 8] {
  %c = constant() {value = 1.0} : f32[1, 1, 2, 1, 1]
  %kr = reshape(%k) {shape = [1, 2, 1, 7, 8]}
  %ke = mul(%kr, %c)
  %kf = reshape(%ke) {shape = [1, 4, 7, 8]}
  %vr = reshape(%v) {shape = [1, 2, 1, 7, 8]}
  %ve = mul(%vr, %c)
  %vf = reshape(%ve) {shape = [1, 4, 7, 8]}
  %s = matmul(%q, %kf) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %vf)
  return %o
})",
  };
  for (const char* text : kCases) {
    EXPECT_EQ(MatmulsReadingInPlace(text, "attention-repeat-kv"), 0) << text;
  }
}

TEST(AttentionRepeatKvTest, RefusesConstantsThatAreNotIdentities) {
  // One case per rule: a splat of 2, ones but one element, zeros for a
  // mul, ones for an add, a runtime `const` parameter of ones.
  std::string almost =
      "constant() {value = [1.0, 1.0, 1.0000001]} : "
      "f32[1, 1, 3, 1, 1]";
  const std::string cases[] = {
      WithConst("constant() {value = 2.0} : f32[1, 1, 3, 1, 1]"),
      WithConst(almost),
      WithConst("constant() {value = 0.0} : f32[1, 1, 3, 1, 1]"),
      absl::StrReplaceAll(
          WithConst("constant() {value = 1.0} : f32[1, 1, 3, 1, 1]"),
          {{"mul(%kr", "add(%kr"}, {"mul(%c, %vr", "add(%c, %vr"}}),
      absl::StrReplaceAll(
          kRepeat, {{"%mask: f32[2, 1, 1, 7])",
                     "%mask: f32[2, 1, 1, 7], %c: f32[1, 1, 3, 1, 1] const)"},
                    {"  %c = CONST\n", ""}}),
  };
  for (const std::string& text : cases) {
    EXPECT_EQ(MatmulsReadingInPlace(text, "attention-repeat-kv"), 0) << text;
    Module m = Parse(text);
    ASSERT_TRUE(RunPipeline(m, "attention-repeat-kv").ok());
    EXPECT_EQ(CountOps(*m.graphs()[0], "reshape"), 4) << text;
  }
}

TEST(AttentionRepeatKvTest, LeavesMatmulsOutsideAttention) {
  // A repeated K in a matmul that feeds no softmax.
  const std::string text = R"(
graph @g(%q: f32[1, 4, 5, 8], %k: f32[1, 2, 7, 8]) -> f32[1, 4, 5, 7] {
  %kr = reshape(%k) {shape = [1, 2, 1, 7, 8]}
  %c = constant() {value = 1.0} : f32[1, 1, 2, 1, 1]
  %ke = mul(%kr, %c)
  %kf = reshape(%ke) {shape = [1, 4, 7, 8]}
  %s = matmul(%q, %kf) {transpose_b = true}
  return %s
}
)";
  EXPECT_EQ(MatmulsReadingInPlace(text, "attention-repeat-kv"), 0);
}

TEST(AttentionRepeatKvTest, TheBlockFusesAsOneAttentionGroup) {
  const std::string text =
      WithConst("constant() {value = 1.0} : f32[1, 1, 3, 1, 1]");
  Module m = Parse(text);
  ASSERT_TRUE(RunPipeline(m, "O2").ok());
  const Graph& g = *m.graphs()[0];
  // One attention group and nothing else: no copy of K or V beside it.
  EXPECT_EQ(CountOps(g, "fusion"), 1);
  EXPECT_EQ(CountOps(g, "mul"), 0);
  const Op* fusion = nullptr;
  for (const auto& op : g.ops()) {
    if (op->kind() == "fusion") fusion = op.get();
  }
  ASSERT_NE(fusion, nullptr);
  const Attribute* kind = fusion->FindAttr("kind");
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(kind->as_string(), "attention");
  // The fused op reads K and V as given (or reshaped views of them).
  for (int i = 0; i < fusion->num_operands(); ++i) {
    const Value* x = fusion->operand(i);
    while (x->defining_op() != nullptr &&
           x->defining_op()->kind() == "reshape") {
      x = x->defining_op()->operand(0);
    }
    EXPECT_TRUE(x->is_param()) << i;
  }
}

}  // namespace
}  // namespace hgc
