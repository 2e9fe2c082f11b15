// attention-transposes: which transposed blocks are rewritten, into what,
// that the values stay the same, and that attention-fusion then takes
// them; golden files are in testdata/attention/.
#include "passes/attention_transposes.h"

#include <string>

#include "absl/strings/str_replace.h"
#include "analysis/graph_utils.h"
#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::CountOps;
using pass_test::ExpectBitIdentical;
using pass_test::Parse;
using pass_test::RunPipeline;

// The number of attention groups O2 makes in the first graph.
int AttentionGroupsAtO2(const std::string& text) {
  Module m = Parse(text);
  EXPECT_TRUE(RunPipeline(m, "O2").ok());
  int n = 0;
  for (const auto& op : m.graphs()[0]->ops()) {
    const Attribute* kind = op->FindAttr("kind");
    n += op->kind() == "fusion" && kind->as_string() == "attention";
  }
  return n;
}

// The number of blocks the pass rewrites in the first graph of `text`.
int Rewritten(const std::string& text) {
  Module m = Parse(text);
  absl::StatusOr<int> n = UntransposeAttention(*m.graphs()[0]);
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() ? *n : -1;
}

// Checks that after the pass the first graph's softmax is over the last
// axis and feeds (through casts) operand 0 of a matmul without
// transpose_a.
void ExpectCanonical(const std::string& text) {
  Module m = Parse(text);
  ASSERT_TRUE(RunPipeline(m, "attention-transposes").ok());
  const Graph& g = *m.graphs()[0];
  const Op* softmax = nullptr;
  for (const auto& op : g.ops()) {
    if (op->kind() == "softmax") softmax = op.get();
  }
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(SoftmaxAxis(*softmax), softmax->result()->type().rank() - 1);
  const Value* p = softmax->result();
  for (;;) {
    const Op* user = nullptr;
    for (const auto& op : g.ops()) {
      for (const Value* x : op->operands()) {
        if (x == p) user = op.get();
      }
    }
    ASSERT_NE(user, nullptr);
    if (user->kind() == "cast") {
      p = user->result();
      continue;
    }
    ASSERT_EQ(user->kind(), "matmul") << PrintModule(m);
    EXPECT_EQ(user->operand(0), p);
    const Attribute* ta = user->FindAttr("transpose_a");
    EXPECT_TRUE(ta == nullptr || !ta->as_bool());
    break;
  }
}

// JAX's einsum with the operands in the order (V, P): Oᵀ = Vᵀ·Pᵀ over
// [B, S, H, D] operands, transposed back to [B, S, H, D].
constexpr char kJaxVP[] = R"(
graph @g(%q: f32[2, 13, 3, 24], %k: f32[2, 13, 3, 24], %v: f32[2, 13, 3, 24])
    -> f32[2, 13, 3, 24] {
  %qt = transpose(%q) {perm = [0, 2, 1, 3]}
  %kt = transpose(%k) {perm = [0, 2, 3, 1]}
  %s = matmul(%qt, %kt)
  %p = softmax(%s) {axis = -1}
  %vt = transpose(%v) {perm = [0, 2, 3, 1]}
  %pt = transpose(%p) {perm = [0, 1, 3, 2]}
  %ot = matmul(%vt, %pt)
  %o = transpose(%ot) {perm = [0, 3, 1, 2]}
  return %o
})";

TEST(AttentionTransposesTest, RewritesVTimesPTransposed) {
  EXPECT_EQ(Rewritten(kJaxVP), 1);
  ExpectCanonical(kJaxVP);
  ExpectBitIdentical(kJaxVP, "attention-transposes,dce");
  EXPECT_EQ(AttentionGroupsAtO2(kJaxVP), 1);
  // The result keeps its name; P·V's product is named as its own value.
  Module m = Parse(kJaxVP);
  ASSERT_TRUE(RunPipeline(m, "attention-transposes").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(CountOps(g, "transpose"), 5);
  EXPECT_EQ(g.results()[0]->name(), "o");
  EXPECT_EQ(g.results()[0]->defining_op()->operand(0)->name(), "ot");
}

TEST(AttentionTransposesTest, RewritesVTimesPTransposedByFlags) {
  // The same with the matmul's flags: matmul(V, P) {transpose_a,
  // transpose_b} = Vᵀ·Pᵀ, and with Vᵀ as an operand and Pᵀ by flag; and
  // Pᵀ transposed back by an op before a plain P·V.
  const std::string flags = R"(
graph @g(%q: f32[2, 3, 13, 24], %k: f32[2, 3, 13, 24], %v: f32[2, 3, 13, 20])
    -> f32[2, 3, 13, 20] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %ot = matmul(%v, %p) {transpose_a = true, transpose_b = true}
  %o = transpose(%ot) {perm = [0, 1, 3, 2]}
  return %o
})";
  EXPECT_EQ(Rewritten(flags), 1);
  ExpectCanonical(flags);
  ExpectBitIdentical(flags, "attention-transposes,dce");
  EXPECT_EQ(AttentionGroupsAtO2(flags), 1);
  const std::string mixed = R"(
graph @g(%q: f32[2, 3, 13, 24], %k: f32[2, 3, 13, 24], %vt: f32[2, 3, 20, 13])
    -> f32[2, 3, 13, 20] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %ot = matmul(%vt, %p) {transpose_b = true}
  %o = transpose(%ot) {perm = [0, 1, 3, 2]}
  return %o
})";
  EXPECT_EQ(Rewritten(mixed), 1);
  ExpectCanonical(mixed);
  ExpectBitIdentical(mixed, "attention-transposes,dce");
  EXPECT_EQ(AttentionGroupsAtO2(mixed), 1);
  const std::string flipped = R"(
graph @g(%q: f32[2, 3, 13, 24], %k: f32[2, 3, 13, 24], %v: f32[2, 3, 13, 20])
    -> f32[2, 3, 13, 20] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %pt = transpose(%p) {perm = [0, 1, 3, 2]}
  %o = matmul(%pt, %v) {transpose_a = true}
  return %o
})";
  EXPECT_EQ(Rewritten(flipped), 1);
  ExpectCanonical(flipped);
  ExpectBitIdentical(flipped, "attention-transposes,dce");
}

// Key-major scores: Sᵀ = K·Qᵀ [B, H, Sk, Sq], a scale, a key mask
// [B, 1, Sk, 1], a per-(query, key) bias [1, H, Sk, Sq] and a bool mask
// given as [Sq] rows, softmax over the keys (axis 2), then Pᵀ·V (P_OP).
constexpr char kKeyMajor[] = R"(
graph @g(%q: f32[2, 3, 11, 24], %k: f32[2, 3, 13, 24], %v: f32[2, 3, 13, 20],
         %mask: f32[2, 1, 13, 1], %bias: f32[1, 3, 13, 11], %keep: bool[11])
    -> f32[2, 3, 11, 20] {
  %s = matmul(%k, %q) {transpose_b = true}
  %c = constant() {value = 0.2} : f32[]
  %t = mul(%c, %s)
  %m = add(%t, %mask)
  %b = add(%m, %bias)
  %lowest = constant() {value = -1e30} : f32[]
  %w = select(%keep, %b, %lowest)
  %p = softmax(%w) {axis = 2}
  P_OP
  return %o
})";

std::string KeyMajor(const std::string& p_op) {
  return absl::StrReplaceAll(kKeyMajor, {{"P_OP", p_op}});
}

TEST(AttentionTransposesTest, RewritesKeyMajorScores) {
  const std::string forms[] = {
      KeyMajor("%o = matmul(%p, %v) {transpose_a = true}"),
      KeyMajor("%pt = transpose(%p) {perm = [0, 1, 3, 2]}\n"
               "  %o = matmul(%pt, %v)"),
      // With the probabilities rounded to bf16 on their way.
      KeyMajor("%pb = cast(%p) {to = bf16}\n"
               "  %pf = cast(%pb) {to = f32}\n"
               "  %o = matmul(%pf, %v) {transpose_a = true}"),
      // Key-major P and Oᵀ = Vᵀ·P: both transposed forms.
      KeyMajor("%ot = matmul(%v, %p) {transpose_a = true}\n"
               "  %o = transpose(%ot) {perm = [0, 1, 3, 2]}"),
  };
  for (const std::string& text : forms) {
    SCOPED_TRACE(text);
    EXPECT_EQ(Rewritten(text), 1);
    ExpectCanonical(text);
    ExpectBitIdentical(text, "attention-transposes,dce");
    EXPECT_EQ(AttentionGroupsAtO2(text), 1);
  }
  // The scores are Q·Kᵀ; the key mask a reshape to [2, 1, 1, 13] (the same
  // order), the bias a transpose, the bool rows a column [11, 1], the
  // scalars as they were.
  Module m = Parse(forms[0]);
  ASSERT_TRUE(RunPipeline(m, "attention-transposes").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(CountOps(g, "reshape"), 2);
  EXPECT_EQ(CountOps(g, "transpose"), 1);
  for (const auto& op : g.ops()) {
    if (op->kind() == "matmul" && op->result()->name() == "s") {
      EXPECT_EQ(op->operand(0)->name(), "q");
      EXPECT_EQ(op->operand(1)->name(), "k");
      EXPECT_TRUE(op->FindAttr("transpose_b")->as_bool());
      EXPECT_EQ(op->result()->type().shape, (Shape{2, 3, 11, 13}));
    }
  }
}

TEST(AttentionTransposesTest, TransposesLiteralSideOperands) {
  // A literal mask in the key-major scores: a splat is declared again in
  // the new shape, a table of differing values is transposed.
  for (const char* mask : {"0.5", "[0.0, -1.0, -2.0, -3.0, -4.0, -5.0]"}) {
    const std::string text = absl::StrReplaceAll(R"(
graph @g(%q: f32[1, 2, 3, 8], %k: f32[1, 2, 2, 8], %v: f32[1, 2, 2, 8])
    -> f32[1, 2, 3, 8] {
  %s = matmul(%k, %q) {transpose_b = true}
  %c = constant() {value = MASK} : f32[2, 3]
  %m = add(%s, %c)
  %p = softmax(%m) {axis = -2}
  %o = matmul(%p, %v) {transpose_a = true}
  return %o
})",
                                                 {{"MASK", mask}});
    SCOPED_TRACE(text);
    EXPECT_EQ(Rewritten(text), 1);
    ExpectCanonical(text);
    ExpectBitIdentical(text, "attention-transposes,dce");
  }
}

TEST(AttentionTransposesTest, LeavesOtherBlocksAlone) {
  const std::string chains[] = {
      // Already the canonical form.
      R"(
graph @g(%q: f32[2, 5, 8], %k: f32[2, 5, 8], %v: f32[2, 5, 8]) -> f32[2, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
})",
      // P is also a result.
      R"(
graph @g(%q: f32[2, 5, 8], %k: f32[2, 5, 8], %v: f32[2, 5, 8])
    -> (f32[2, 8, 5], f32[2, 5, 5]) {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %ot = matmul(%v, %p) {transpose_a = true, transpose_b = true}
  return %ot, %p
})",
      // Pᵀ's transpose also moves the batch dim.
      R"(
graph @g(%q: f32[2, 5, 8], %k: f32[2, 5, 8], %v: f32[5, 8, 2]) -> f32[5, 8, 5] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %pt = transpose(%p) {perm = [2, 0, 1]}
  %ot = matmul(%v, %pt)
  return %ot
})",
      // Key-major scores, but P·V contracts over the queries.
      R"(
graph @g(%q: f32[2, 5, 8], %k: f32[2, 5, 8], %v: f32[2, 5, 8]) -> f32[2, 5, 8] {
  %s = matmul(%k, %q) {transpose_b = true}
  %p = softmax(%s) {axis = 1}
  %o = matmul(%p, %v)
  return %o
})",
      // Key-major scores whose mask grows them.
      R"(
graph @g(%q: f32[5, 8], %k: f32[5, 8], %v: f32[5, 8], %mask: f32[2, 5, 5])
    -> f32[2, 5, 8] {
  %s = matmul(%k, %q) {transpose_b = true}
  %m = add(%s, %mask)
  %p = softmax(%m) {axis = 1}
  %o = matmul(%p, %v) {transpose_a = true}
  return %o
})",
      // Softmax over another axis.
      R"(
graph @g(%q: f32[2, 5, 8], %k: f32[2, 5, 8], %v: f32[5, 2, 8]) -> f32[5, 5, 8] {
  %s = matmul(%k, %q) {transpose_b = true}
  %p = softmax(%s) {axis = 0}
  %pt = transpose(%p) {perm = [1, 2, 0]}
  %o = matmul(%pt, %v)
  return %o
})",
  };
  for (const std::string& text : chains) {
    EXPECT_EQ(Rewritten(text), 0) << text;
  }
}

}  // namespace
}  // namespace hgc
