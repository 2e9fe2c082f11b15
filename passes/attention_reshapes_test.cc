// attention-reshapes: which blocks are rebuilt, in which shape, that the
// values stay bit-identical, and that attention-fusion then takes them;
// golden files are in testdata/attention/.
#include "passes/attention_reshapes.h"

#include <string>
#include <vector>

#include "analysis/graph_utils.h"
#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::ExpectBitIdentical;
using pass_test::Optimize;
using pass_test::Parse;
using pass_test::RunPipeline;
using Dims = std::vector<int64_t>;

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

// Whether a reshape is left between the scores matmul and P·V after the
// pass: walks back from softmax through the operand that has the op's
// shape and is computed, and forward through single readers.
bool ChainHasReshapeAfterPass(const std::string& text) {
  Module m = Parse(text);
  EXPECT_TRUE(RunPipeline(m, "attention-reshapes").ok());
  const Graph& g = *m.graphs()[0];
  const Op* softmax = nullptr;
  for (const auto& op : g.ops()) {
    if (op->kind() == "softmax") softmax = op.get();
  }
  EXPECT_NE(softmax, nullptr);
  if (softmax == nullptr) return true;
  for (const Value* cur = softmax->operand(0);;) {
    const Op* def = cur->defining_op();
    if (def == nullptr) return true;
    if (def->kind() == "matmul") break;
    if (def->kind() == "reshape") return true;
    const Value* next = nullptr;
    for (const Value* x : def->operands()) {
      if (x->defining_op() != nullptr && x->type() == def->result()->type() &&
          x->defining_op()->kind() != "constant") {
        next = x;
      }
    }
    if (next == nullptr) return true;
    cur = next;
  }
  UseInfo uses(g);
  for (const Value* cur = softmax->result();;) {
    if (uses.Users(cur).size() != 1) return true;
    const Op* user = uses.Users(cur)[0];
    if (user->kind() == "matmul") return false;
    if (user->kind() == "reshape") return true;
    cur = user->result();
  }
}

TEST(RegroupBatchDimsTest, SplitsAlwaysMergesOnlyWholeRuns) {
  // Splitting: full dims split, broadcast dims stay broadcast.
  EXPECT_EQ(RegroupBatchDims({8}, {8}, {2, 4}), (Dims{2, 4}));
  EXPECT_EQ(RegroupBatchDims({1}, {8}, {2, 4}), (Dims{1, 1}));
  // Missing leading dims are broadcast.
  EXPECT_EQ(RegroupBatchDims({}, {8}, {2, 4}), (Dims{1, 1}));
  EXPECT_EQ(RegroupBatchDims({3}, {2, 3}, {2, 3}), (Dims{1, 3}));
  // Merging: only when the run is all full or all broadcast.
  EXPECT_EQ(RegroupBatchDims({2, 4}, {2, 4}, {8}), (Dims{8}));
  EXPECT_EQ(RegroupBatchDims({1, 1}, {2, 4}, {8}), (Dims{1}));
  EXPECT_EQ(RegroupBatchDims({2, 1}, {2, 4}, {8}), std::nullopt);
  EXPECT_EQ(RegroupBatchDims({1, 4}, {2, 4}, {8}), std::nullopt);
  // Runs are independent: [2, 3, 4] -> [6, 2, 2].
  EXPECT_EQ(RegroupBatchDims({2, 3, 1}, {2, 3, 4}, {6, 2, 2}),
            (Dims{6, 1, 1}));
  // Unit dims come and go.
  EXPECT_EQ(RegroupBatchDims({8, 1}, {8, 1}, {1, 2, 4}), (Dims{1, 2, 4}));
  EXPECT_EQ(RegroupBatchDims({1, 8}, {1, 8}, {8}), (Dims{8}));
  // Mismatched element counts, or more dims than `from`.
  EXPECT_EQ(RegroupBatchDims({8}, {8}, {2, 2}), std::nullopt);
  EXPECT_EQ(RegroupBatchDims({1, 8}, {8}, {8}), std::nullopt);
}

// HF CLIP: a 3-D bmm, each mask added in a 4-D view, softmax in 3-D.
constexpr char kClip[] = R"(
graph @clip(%q: f32[4, 7, 64], %k: f32[4, 7, 64], %v: f32[4, 7, 64],
            %causal: f32[2, 1, 7, 7], %pad: f32[2, 1, 1, 7]) -> f32[4, 7, 64] {
  %c = constant() {value = 0.125} : f32[]
  %qs = mul(%q, %c)
  %s = matmul(%qs, %k) {transpose_b = true}
  %s4 = reshape(%s) {shape = [2, 2, 7, 7]}
  %m1 = add(%s4, %causal)
  %s3 = reshape(%m1) {shape = [4, 7, 7]}
  %s4b = reshape(%s3) {shape = [2, 2, 7, 7]}
  %m2 = add(%s4b, %pad)
  %s3b = reshape(%m2) {shape = [4, 7, 7]}
  %p = softmax(%s3b) {axis = -1}
  %o = matmul(%p, %v)
  return %o
}
)";

TEST(AttentionReshapesTest, ClipIsRebuiltInTheMasksShape) {
  std::string out = Optimize(kClip, "attention-reshapes");
  EXPECT_NE(out.find("%s = matmul(%0, %1) {transpose_b = true} : "
                     "f32[2, 2, 7, 7]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%m2 = add(%m1, %pad) : f32[2, 2, 7, 7]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%p = softmax(%m2) : f32[2, 2, 7, 7]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%o = reshape(%3) {shape = [4, 7, 64]}"),
            std::string::npos)
      << out;
  EXPECT_FALSE(ChainHasReshapeAfterPass(kClip));
  ExpectBitIdentical(kClip, "attention-reshapes");
  EXPECT_EQ(AttentionGroupsAtO2(kClip), 1);
}

// BLOOM: baddbmm-style 3-D scores with an ALiBi bias [B·H, 1, S], a 4-D
// mask for softmax, 3-D again for P·V.
constexpr char kBloom[] = R"(
graph @bloom(%q: f32[8, 16, 32], %kt: f32[8, 32, 16], %v: f32[8, 16, 32],
             %alibi: f32[8, 1, 16], %keep: bool[2, 1, 16, 16]) -> f32[2, 4, 16, 32] {
  %s = matmul(%q, %kt)
  %c = constant() {value = 0.125} : f32[]
  %t = mul(%s, %c)
  %m = add(%alibi, %t)
  %m4 = reshape(%m) {shape = [2, 4, 16, 16]}
  %minv = constant() {value = -3.4028234663852886e38} : f32[]
  %w = select(%keep, %m4, %minv)
  %p = softmax(%w) {axis = -1}
  %p3 = reshape(%p) {shape = [8, 16, 16]}
  %o = matmul(%p3, %v)
  %y = reshape(%o) {shape = [2, 4, 16, 32]}
  return %y
}
)";

TEST(AttentionReshapesTest, BloomSplitsTheBias) {
  std::string out = Optimize(kBloom, "attention-reshapes");
  EXPECT_NE(out.find("reshape(%alibi) {shape = [2, 4, 1, 16]}"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%w = select(%keep, %m, %minv) : f32[2, 4, 16, 16]"),
            std::string::npos)
      << out;
  EXPECT_FALSE(ChainHasReshapeAfterPass(kBloom));
  ExpectBitIdentical(kBloom, "attention-reshapes");
  EXPECT_EQ(AttentionGroupsAtO2(kBloom), 1);
}

TEST(AttentionReshapesTest, CastsScalesAndBroadcastOperands) {
  // Merged-shape score ops (a per-(B·H) constant scale, a [S] bias), a cast
  // round trip of P around the reshape, K shared by every head (MQA).
  constexpr char kText[] = R"(
graph @g(%q: f32[6, 5, 16], %k: f32[1, 9, 16], %v: f32[1, 9, 16],
         %bias: f32[9], %mask: f32[2, 1, 5, 9]) -> f32[6, 5, 16] {
  %s = matmul(%q, %k) {transpose_b = true}
  %c = constant() {value = [0.5, 0.25, 0.125, 1.0, 2.0, 4.0]} : f32[6, 1, 1]
  %t = mul(%s, %c)
  %b = add(%t, %bias)
  %s4 = reshape(%b) {shape = [2, 3, 5, 9]}
  %m = add(%s4, %mask)
  %p = softmax(%m) {axis = 3}
  %h = cast(%p) {to = bf16}
  %h3 = reshape(%h) {shape = [6, 5, 9]}
  %f = cast(%h3) {to = f32}
  %o = matmul(%f, %v)
  return %o
}
)";
  std::string out = Optimize(kText, "attention-reshapes");
  // The constant is re-declared, the [S] bias and K / V stay as they are.
  EXPECT_NE(out.find("constant() {value = [0.5, 0.25, 0.125, 1.0, 2.0, 4.0]} : "
                     "f32[2, 3, 1, 1]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%b = add(%t, %bias) : f32[2, 3, 5, 9]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(", %k) {transpose_b = true} : f32[2, 3, 5, 9]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%f = cast(%h) {to = f32} : f32[2, 3, 5, 9]"),
            std::string::npos)
      << out;
  EXPECT_FALSE(ChainHasReshapeAfterPass(kText));
  ExpectBitIdentical(kText, "attention-reshapes");
}

TEST(AttentionReshapesTest, ScoresReadTwice) {
  // max(s, s) reads the scores through both operands: both take the new
  // value, and nothing of the old chain survives.
  constexpr char kText[] = R"(
graph @g(%q: f32[4, 5, 8], %k: f32[4, 5, 8], %v: f32[4, 5, 8],
         %mask: f32[2, 1, 1, 5]) -> f32[4, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %s4 = reshape(%s) {shape = [2, 2, 5, 5]}
  %d = max(%s4, %s4)
  %m = add(%d, %mask)
  %m3 = reshape(%m) {shape = [4, 5, 5]}
  %p = softmax(%m3) {axis = -1}
  %o = matmul(%p, %v)
  return %o
}
)";
  Module m = Parse(kText);
  ASSERT_TRUE(RunPipeline(m, "attention-reshapes").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(pass_test::CountOps(g, "matmul"), 2);
  EXPECT_EQ(pass_test::CountOps(g, "max"), 1);
  EXPECT_EQ(pass_test::CountOps(g, "reshape"), 4) << PrintModule(m);
  EXPECT_FALSE(ChainHasReshapeAfterPass(kText));
  ExpectBitIdentical(kText, "attention-reshapes");
}

// diffusers' 3-D attention: heads split out of [B, S, H·D] and merged
// with the batch as [B·H, S, D] for bmm, merged back after. No reshape is
// in the chain, but the operands come from [B, H] and the result goes
// back to it: the block is rebuilt in [B, H], so that the merged views
// (which no stride describes after the transpose) need no copies.
constexpr char kDiffusers3d[] = R"(
graph @diffusers(%q: f32[2, 7, 24], %k: f32[2, 7, 24], %v: f32[2, 7, 24])
    -> f32[2, 7, 24] {
  %q4 = reshape(%q) {shape = [2, 7, 3, 8]}
  %qt = transpose(%q4) {perm = [0, 2, 1, 3]}
  %q3 = reshape(%qt) {shape = [6, 7, 8]}
  %k4 = reshape(%k) {shape = [2, 7, 3, 8]}
  %kt = transpose(%k4) {perm = [0, 2, 1, 3]}
  %k3 = reshape(%kt) {shape = [6, 7, 8]}
  %v4 = reshape(%v) {shape = [2, 7, 3, 8]}
  %vt = transpose(%v4) {perm = [0, 2, 1, 3]}
  %v3 = reshape(%vt) {shape = [6, 7, 8]}
  %s = matmul(%q3, %k3) {transpose_b = true}
  %c = constant() {value = 0.35355339059327373} : f32[]
  %t = mul(%s, %c)
  %p = softmax(%t) {axis = -1}
  %o3 = matmul(%p, %v3)
  %o4 = reshape(%o3) {shape = [2, 3, 7, 8]}
  %ot = transpose(%o4) {perm = [0, 2, 1, 3]}
  %o = reshape(%ot) {shape = [2, 7, 24]}
  return %o
}
)";

TEST(AttentionReshapesTest, MergedHeadOperandsAreSplitBack) {
  std::string out = Optimize(kDiffusers3d, "attention-reshapes");
  EXPECT_NE(out.find("%s = matmul(%qt, %kt) {transpose_b = true} : "
                     "f32[2, 3, 7, 7]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%p = softmax(%t) : f32[2, 3, 7, 7]"), std::string::npos)
      << out;
  ExpectBitIdentical(kDiffusers3d, "attention-reshapes");
  EXPECT_EQ(AttentionGroupsAtO2(kDiffusers3d), 1);
}

// DeepSeek's MLA: rows S·H of [B, S·H, T] scores split as [B, S, H, T]
// around a mask; the scores are the sum of two products. Rebuilt over
// [B, S] with H rows: K and V (and the second product's K) broadcast over
// S, the second product rebuilt beside the first.
constexpr char kMla[] = R"(
graph @mla(%qn: f32[2, 12, 8], %kn: f32[2, 5, 8], %qp: f32[2, 12, 4],
           %kp: f32[2, 5, 4], %v: f32[2, 5, 6], %mask: f32[2, 3, 1, 5])
    -> f32[2, 12, 6] {
  %s1 = matmul(%qn, %kn) {transpose_b = true}
  %s2 = matmul(%qp, %kp) {transpose_b = true}
  %s = add(%s1, %s2)
  %t4 = reshape(%s) {shape = [2, 3, 4, 5]}
  %m4 = add(%t4, %mask)
  %m = reshape(%m4) {shape = [2, 12, 5]}
  %p = softmax(%m) {axis = -1}
  %o = matmul(%p, %v)
  return %o
}
)";

TEST(AttentionReshapesTest, RowsSplitAroundAMask) {
  std::string out = Optimize(kMla, "attention-reshapes");
  EXPECT_NE(out.find("%s1 = matmul(%0, %1) {transpose_b = true} : "
                     "f32[2, 3, 4, 5]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("reshape(%kn) {shape = [2, 1, 5, 8]}"), std::string::npos)
      << out;
  EXPECT_NE(out.find("%s2 = matmul(%2, %3) {transpose_b = true} : "
                     "f32[2, 3, 4, 5]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("%p = softmax(%m4) : f32[2, 3, 4, 5]"), std::string::npos)
      << out;
  EXPECT_FALSE(ChainHasReshapeAfterPass(kMla));
  ExpectBitIdentical(kMla, "attention-reshapes");
  EXPECT_EQ(AttentionGroupsAtO2(kMla), 1);
}

TEST(AttentionReshapesTest, BlocksThatStayAsTheyAre) {
  // Each graph must print the same after the pass.
  const std::vector<std::string> graphs = {
      // The reshape changes the last dims: softmax over 8 of 16 keys.
      R"(
graph @last_dim(%q: f32[4, 8, 32], %k: f32[4, 16, 32], %v: f32[4, 8, 8, 32])
    -> f32[4, 8, 2, 32] {
  %s = matmul(%q, %k) {transpose_b = true}
  %s4 = reshape(%s) {shape = [4, 8, 2, 8]}
  %p = softmax(%s4) {axis = -1}
  %o = matmul(%p, %v)
  return %o
}
)",
      // [12] seen as [2, 6] and as [3, 4]: no shape both merge from.
      R"(
graph @crossed(%q: f32[12, 4, 8], %k: f32[12, 4, 8], %v: f32[12, 4, 8],
               %m1: f32[2, 1, 1, 4], %m2: f32[3, 1, 1, 4]) -> f32[12, 4, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %a = reshape(%s) {shape = [2, 6, 4, 4]}
  %b = add(%a, %m1)
  %c = reshape(%b) {shape = [3, 4, 4, 4]}
  %d = add(%c, %m2)
  %e = reshape(%d) {shape = [12, 4, 4]}
  %p = softmax(%e) {axis = -1}
  %o = matmul(%p, %v)
  return %o
}
)",
      // The 4-D scores are returned too.
      R"(
graph @shared(%q: f32[8, 4, 8], %k: f32[8, 4, 8], %v: f32[8, 4, 8],
              %mask: f32[2, 1, 1, 4]) -> (f32[8, 4, 8], f32[2, 4, 4, 4]) {
  %s = matmul(%q, %k) {transpose_b = true}
  %s4 = reshape(%s) {shape = [2, 4, 4, 4]}
  %m = add(%s4, %mask)
  %m3 = reshape(%m) {shape = [8, 4, 4]}
  %p = softmax(%m3) {axis = -1}
  %o = matmul(%p, %v)
  return %o, %s4
}
)",
      // Softmax over another axis.
      R"(
graph @axis(%q: f32[8, 4, 8], %k: f32[8, 4, 8], %v: f32[2, 4, 4, 8])
    -> f32[2, 4, 4, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %s4 = reshape(%s) {shape = [2, 4, 4, 4]}
  %p = softmax(%s4) {axis = 2}
  %o = matmul(%p, %v)
  return %o
}
)",
      // A transpose is no score op attention-fusion takes.
      R"(
graph @transposed(%q: f32[8, 4, 8], %k: f32[8, 4, 8], %v: f32[2, 4, 4, 8])
    -> f32[2, 4, 4, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %s4 = reshape(%s) {shape = [2, 4, 4, 4]}
  %t = transpose(%s4) {perm = [0, 1, 3, 2]}
  %p = softmax(%t) {axis = -1}
  %o = matmul(%p, %v)
  return %o
}
)",
  };
  for (const std::string& text : graphs) {
    Module m = Parse(text);
    const std::string before = PrintModule(m);
    absl::StatusOr<bool> changed = AttentionReshapesPass().Run(m);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed) << before;
    EXPECT_EQ(PrintModule(m), before);
  }
}

TEST(AttentionReshapesTest, EveryBlockOfAGraph) {
  // Two fairseq-style blocks, the second reading the first's output as Q.
  constexpr char kText[] = R"(
graph @two(%q: f32[6, 5, 8], %k: f32[6, 5, 8], %v: f32[6, 5, 8],
           %kpm: bool[2, 1, 1, 5]) -> f32[6, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %s4 = reshape(%s) {shape = [2, 3, 5, 5]}
  %ninf = constant() {value = -1e30} : f32[]
  %w = select(%kpm, %ninf, %s4)
  %w3 = reshape(%w) {shape = [6, 5, 5]}
  %p = softmax(%w3) {axis = -1}
  %o = matmul(%p, %v)
  %s2 = matmul(%o, %k) {transpose_b = true}
  %s24 = reshape(%s2) {shape = [2, 3, 5, 5]}
  %w2 = select(%kpm, %ninf, %s24)
  %w23 = reshape(%w2) {shape = [6, 5, 5]}
  %p2 = softmax(%w23) {axis = -1}
  %o2 = matmul(%p2, %v)
  return %o2
}
)";
  Module m = Parse(kText);
  absl::StatusOr<int> n = MoveAttentionReshapes(*m.graphs()[0]);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 2);
  ExpectBitIdentical(kText, "attention-reshapes");
  EXPECT_EQ(AttentionGroupsAtO2(kText), 2);
}

}  // namespace
}  // namespace hgc
