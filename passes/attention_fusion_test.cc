// attention-fusion: which blocks are outlined, what their bodies hold, and
// that numbers are preserved; golden files are in testdata/attention/.
#include "passes/attention_fusion.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "analysis/attention_attrs.h"
#include "analysis/attention_match.h"
#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::CountOps;
using pass_test::ExpectSameNumbers;
using pass_test::Parse;
using pass_test::RunPipeline;

// The match_* attributes of `op`.
AttrMap MatchAttrs(const Op& op) {
  AttrMap out;
  for (const auto& [name, value] : op.attrs()) {
    if (absl::StartsWith(name, "match_")) out[name] = value;
  }
  return out;
}

// Expects `op` (an attention group) to carry its body's match, valid.
void ExpectCarriesBodyMatch(const Op& op) {
  const Graph* body = FusionBody(op);
  ASSERT_NE(body, nullptr);
  absl::StatusOr<AttentionMatch> match = MatchAttention(*body);
  ASSERT_TRUE(match.ok()) << match.status();
  EXPECT_EQ(MatchAttrs(op), EncodeAttentionMatch(*match, *body));
  absl::Status decoded = DecodeAttentionMatch(op.attrs(), *body).status();
  EXPECT_TRUE(decoded.ok()) << decoded;
}

// Fusion ops of kind "attention" in the first graph after `pipeline`; each
// must carry its body's match (passes after attention-fusion keep it
// valid).
int AttentionGroups(const std::string& text,
                    const std::string& pipeline = "attention-fusion") {
  Module m = Parse(text);
  absl::Status s = RunPipeline(m, pipeline);
  EXPECT_TRUE(s.ok()) << s;
  int n = 0;
  for (const auto& op : m.graphs()[0]->ops()) {
    const Attribute* kind = op->FindAttr("kind");
    if (op->kind() != "fusion" || kind->as_string() != "attention") continue;
    ++n;
    ExpectCarriesBodyMatch(*op);
  }
  return n;
}

constexpr char kBshd[] = R"(
graph @g(%q: f32[2, 5, 3, 8], %k: f32[2, 5, 3, 8], %v: f32[2, 5, 3, 8]) -> f32[2, 5, 24] {
  %qt = transpose(%q) {perm = [0, 2, 1, 3]}
  %kt = transpose(%k) {perm = [0, 2, 3, 1]}
  %vt = transpose(%v) {perm = [0, 2, 1, 3]}
  %s = matmul(%qt, %kt)
  %c = constant() {value = 0.35} : f32[]
  %t = mul(%s, %c)
  %p = softmax(%t)
  %o = matmul(%p, %vt)
  %ot = transpose(%o) {perm = [0, 2, 1, 3]}
  %y = reshape(%ot) {shape = [2, 5, 24]}
  return %y
}
)";

TEST(AttentionFusionTest, OutlinesTheWholeBlock) {
  Module m = Parse(kBshd);
  ASSERT_TRUE(RunPipeline(m, "attention-fusion").ok());
  const Graph& g = *m.graphs()[0];
  ASSERT_EQ(g.ops().size(), 1u) << PrintModule(m);
  const Op& fusion = *g.ops().front();
  EXPECT_EQ(fusion.FindAttr("body")->as_symbol(), "g_attn_0");
  EXPECT_EQ(fusion.FindAttr("kind")->as_string(), "attention");
  EXPECT_EQ(fusion.num_operands(), 3);
  const Graph& body = *FusionBody(fusion);
  EXPECT_EQ(CountOps(body, "transpose"), 4);
  EXPECT_EQ(CountOps(body, "constant"), 1);
  EXPECT_EQ(CountOps(body, "reshape"), 1);
  absl::StatusOr<AttentionMatch> match = MatchAttention(body);
  ASSERT_TRUE(match.ok()) << match.status();
  EXPECT_EQ(match->out_strides, (std::array<int64_t, 4>{120, 8, 24, 1}));
  ExpectCarriesBodyMatch(fusion);
  EXPECT_EQ(fusion.FindAttr("match_out")->ToString(), "[0, 120, 8, 24, 1]");
  ExpectSameNumbers(kBshd, "attention-fusion");
  ExpectSameNumbers(kBshd, "O2");
}

TEST(AttentionFusionTest, TheMatchSurvivesPrintingParsingAndCloning) {
  Module m = Parse(kBshd);
  ASSERT_TRUE(RunPipeline(m, "attention-fusion").ok());
  const AttrMap attrs = m.graphs()[0]->ops().front()->attrs();
  Module parsed = Parse(PrintModule(m));
  const Op& op = *parsed.graphs()[0]->ops().front();
  EXPECT_EQ(op.attrs(), attrs);
  ExpectCarriesBodyMatch(op);
  Module cloned = CloneModule(parsed);
  ExpectCarriesBodyMatch(*cloned.graphs()[0]->ops().front());
}

constexpr char kHandWritten[] = R"(
graph @g(%q: f32[2, 3, 5, 8], %k: f32[2, 3, 7, 8], %v: f32[2, 3, 7, 4])
    -> f32[2, 3, 5, 4] {
  %o = fusion(%q, %k, %v) {body = @body, kind = "attention"MATCH} : f32[2, 3, 5, 4]
  return %o
}
graph @body(%q: f32[2, 3, 5, 8], %k: f32[2, 3, 7, 8], %v: f32[2, 3, 7, 4])
    -> f32[2, 3, 5, 4] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s) {axis = -1}
  %o = matmul(%p, %v)
  return %o
}
)";

TEST(AttentionFusionTest, GivesHandWrittenGroupsTheirMatch) {
  Module m = Parse(absl::StrReplaceAll(kHandWritten, {{"MATCH", ""}}));
  absl::StatusOr<bool> changed = AttentionFusionPass().Run(m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  ExpectCarriesBodyMatch(*m.graphs()[0]->ops().front());
  EXPECT_TRUE(m.notes().empty());
}

TEST(AttentionFusionTest, NotesAnInvalidMatchAndLeavesIt) {
  // Q's row stride is 8, not 16.
  const std::string text = absl::StrReplaceAll(
      kHandWritten,
      {{"MATCH",
        ", match_dims = [2, 3, 1, 5, 7, 8, 4], match_k = [1, 0, 168, 56, 8, "
        "1], match_ops = [0, 1, 2], match_out = [0, 60, 20, 4, 1], match_q = "
        "[0, 0, 120, 40, 16, 1], match_v = [2, 0, 84, 28, 4, 1]"}});
  Module m = Parse(text);
  const AttrMap before = m.graphs()[0]->ops().front()->attrs();
  absl::StatusOr<bool> changed = AttentionFusionPass().Run(m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(m.graphs()[0]->ops().front()->attrs(), before);
  ASSERT_EQ(m.notes().size(), 1u);
  EXPECT_EQ(m.notes()[0],
            "attention-fusion: @g: the attention group %o runs unfused: its "
            "attention match: match_q: the body reads offset 0, row stride 8, "
            "column stride 1");
}

TEST(AttentionFusionTest, SharedRelabelsAndLargeConstantsStayOutside) {
  // %kt is also returned, so the transpose stays outside; the causal mask
  // constant (36 elements) is an operand, the scalar scale is copied in.
  constexpr char kText[] = R"(
graph @g(%q: f32[1, 2, 6, 8], %k: f32[1, 2, 8, 6], %v: f32[1, 2, 6, 8]) -> (f32[1, 2, 6, 8], f32[1, 2, 6, 8]) {
  %kt = transpose(%k) {perm = [0, 1, 3, 2]}
  %s = matmul(%q, %kt) {transpose_b = true}
  %mask = constant() {value = [0.0, -1e9, -1e9, -1e9, -1e9, -1e9,
                               0.0, 0.0, -1e9, -1e9, -1e9, -1e9,
                               0.0, 0.0, 0.0, -1e9, -1e9, -1e9,
                               0.0, 0.0, 0.0, 0.0, -1e9, -1e9,
                               0.0, 0.0, 0.0, 0.0, 0.0, -1e9,
                               0.0, 0.0, 0.0, 0.0, 0.0, 0.0]} : f32[6, 6]
  %m = add(%s, %mask)
  %p = softmax(%m)
  %o = matmul(%p, %v)
  return %o, %kt
}
)";
  Module m = Parse(kText);
  ASSERT_TRUE(RunPipeline(m, "attention-fusion").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(CountOps(g, "transpose"), 1);
  EXPECT_EQ(CountOps(g, "constant"), 1);
  EXPECT_EQ(CountOps(g, "fusion"), 1);
  EXPECT_EQ(AttentionGroups(kText), 1);
  ExpectSameNumbers(kText, "attention-fusion");
}

TEST(AttentionFusionTest, RuntimeScalesOfQGoInside) {
  // A Q scaled by a scalar input and then by a one-element value computed
  // at run time: both scales join the block (its Q ops), the sqrt stays
  // outside; a per-feature scale (a tensor) stays outside as well, and the
  // block starts at its result.
  constexpr char kText[] = R"(
graph @g(%q: f32[1, 2, 4, 8], %k: f32[1, 2, 4, 8], %v: f32[1, 2, 4, 8],
         %scale: f32[], %d: f32[1], %w: f32[8]) -> f32[1, 2, 4, 8] {
  %r = sqrt(%d)
  %qw = mul(%q, %w)
  %q1 = mul(%scale, %qw)
  %q2 = div(%q1, %r)
  %s = matmul(%q2, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
}
)";
  Module m = Parse(kText);
  ASSERT_TRUE(RunPipeline(m, "attention-fusion").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(CountOps(g, "sqrt"), 1);
  EXPECT_EQ(CountOps(g, "mul"), 1);  // the per-feature scale
  EXPECT_EQ(CountOps(g, "div"), 0);
  const Graph* body = nullptr;
  for (const auto& op : g.ops()) {
    if (op->kind() == "fusion") body = FusionBody(*op);
  }
  ASSERT_NE(body, nullptr);
  absl::StatusOr<AttentionMatch> match = MatchAttention(*body);
  ASSERT_TRUE(match.ok()) << match.status();
  ASSERT_EQ(match->q_ops.size(), 2u);
  EXPECT_EQ(match->q_ops[0]->kind(), "mul");
  EXPECT_EQ(match->q_ops[1]->kind(), "div");
  EXPECT_EQ(AttentionGroups(kText), 1);
  ExpectSameNumbers(kText, "attention-fusion");
}

TEST(AttentionFusionTest, PartialMatchesLeaveTheRestToFusion) {
  // The scores squared before softmax (read twice) do not fit: nothing is
  // outlined as attention and O2 still computes the same numbers.
  constexpr char kText[] = R"(
graph @g(%q: f32[1, 2, 4, 8], %k: f32[1, 2, 4, 8], %v: f32[1, 2, 4, 8]) -> f32[1, 2, 4, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %e = mul(%s, %s)
  %p = softmax(%e)
  %o = matmul(%p, %v)
  return %o
}
)";
  EXPECT_EQ(AttentionGroups(kText), 0);
  EXPECT_EQ(AttentionGroups(kText, "O2"), 0);
  ExpectSameNumbers(kText, "O2");
  // The module notes why, in the matcher's words.
  Module m = Parse(kText);
  ASSERT_TRUE(RunPipeline(m, "attention-fusion").ok());
  ASSERT_EQ(m.notes().size(), 1u);
  EXPECT_EQ(m.notes()[0],
            "attention-fusion: @g: the attention block around softmax %p is "
            "not fused: attention: mul reads %s, not a parameter or scalar "
            "constant");
}

TEST(AttentionFusionTest, NotesQuantizedProbabilitiesReturned) {
  // The QDQ form returning P's quantized form: the note names it, P·V
  // being reached through its dequantize.
  Module m = Parse(R"(
graph @g(%q: u8[1, 2, 4, 8], %k: s8[1, 2, 4, 8], %v: s8[1, 2, 4, 8])
    -> (f32[1, 2, 4, 8], u8[1, 2, 4, 4]) {
  %qd = dequantize(%q) {scale = 0.02, zero_point = 128}
  %kd = dequantize(%k) {scale = 0.02, zero_point = 0}
  %vd = dequantize(%v) {scale = 0.02, zero_point = 0}
  %s = matmul(%qd, %kd) {transpose_b = true}
  %p = softmax(%s)
  %pq = quantize(%p) {scale = 0.0039215686, zero_point = 0, to = u8}
  %pd = dequantize(%pq) {scale = 0.0039215686, zero_point = 0}
  %o = matmul(%pd, %vd)
  return %o, %pq
}
)");
  ASSERT_TRUE(RunPipeline(m, "attention-fusion").ok());
  ASSERT_EQ(m.notes().size(), 1u);
  EXPECT_EQ(m.notes()[0],
            "attention-fusion: @g: the attention block around softmax %p is "
            "not fused: %pq is read by P·V %o and also by the graph's "
            "return; the attention kernel keeps P in its score tile and "
            "writes only P·V");
}

TEST(AttentionFusionTest, NotesProbabilitiesReadElsewhere) {
  // P also returned (HF's output_attentions=True) or read by another op:
  // the kernel writes only P·V, so the block stays unfused and the module
  // notes why; a fused block leaves no note.
  constexpr char kText[] = R"(
graph @g(%q: f32[1, 2, 4, 8], %k: f32[1, 2, 4, 8], %v: f32[1, 2, 4, 8])
    -> (f32[1, 2, 4, 8], f32[1, 2, 4, 4]) {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  RESULT
}
)";
  const std::string returned =
      absl::StrReplaceAll(kText, {{"RESULT", "return %o, %p"}});
  EXPECT_EQ(AttentionGroups(returned), 0);
  Module m = Parse(returned);
  ASSERT_TRUE(RunPipeline(m, "O2").ok());
  ASSERT_EQ(m.notes().size(), 1u);
  EXPECT_EQ(m.notes()[0],
            "attention-fusion: @g: the attention block around softmax %p is "
            "not fused: %p is read by P·V %o and also by the graph's return; "
            "the attention kernel keeps P in its score tile and writes only "
            "P·V");
  const std::string read =
      absl::StrReplaceAll(kText, {{"RESULT", "%n = neg(%p)\n  return %o, %n"}});
  Module m2 = Parse(read);
  ASSERT_TRUE(RunPipeline(m2, "attention-fusion").ok());
  ASSERT_EQ(m2.notes().size(), 1u);
  EXPECT_NE(m2.notes()[0].find("also by neg %n;"), std::string::npos)
      << m2.notes()[0];
  // A softmax read by no matmul is no attention block: no note.
  Module m3 = Parse(R"(
graph @g(%x: f32[4, 8], %w: f32[8, 8]) -> f32[4, 8] {
  %s = matmul(%x, %w)
  %p = softmax(%s)
  %n = neg(%p)
  return %n
})");
  ASSERT_TRUE(RunPipeline(m3, "attention-fusion").ok());
  EXPECT_TRUE(m3.notes().empty());
  Module m4 = Parse(kBshd);
  ASSERT_TRUE(RunPipeline(m4, "O2").ok());
  EXPECT_TRUE(m4.notes().empty());
}

TEST(AttentionFusionTest, DropsATailThatDoesNotFit) {
  // The reshape after P.V fits (strides); the cast to s32 after it is
  // refused by MatchAttention, so the block is retried without it.
  constexpr char kText[] = R"(
graph @g(%q: f32[1, 2, 4, 8], %k: f32[1, 2, 4, 8], %v: f32[1, 2, 4, 8]) -> s32[8, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  %r = reshape(%o) {shape = [8, 8]}
  %e = cast(%r) {to = s32}
  return %e
}
)";
  Module m = Parse(kText);
  ASSERT_TRUE(RunPipeline(m, "attention-fusion").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(CountOps(g, "fusion"), 1);
  EXPECT_EQ(CountOps(g, "cast"), 1);
  EXPECT_EQ(g.ops().front()->result()->name(), "r");
  ExpectSameNumbers(kText, "O2");
}

TEST(AttentionFusionTest, TwoBlocksAndFusionLeavesThemAlone) {
  constexpr char kText[] = R"(
graph @g(%q: f32[2, 2, 5, 8], %k: f32[2, 2, 5, 8], %v: f32[2, 2, 5, 8],
         %w: f32[8, 8] const) -> f32[2, 2, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  %o2 = matmul(%o, %w)
  %s2 = matmul(%o2, %k) {transpose_b = true}
  %p2 = softmax(%s2)
  %a = matmul(%p2, %v)
  %r = relu(%a)
  return %r
}
)";
  // Both carry a valid match after the passes O2 runs after
  // attention-fusion (fusion, mlp-fusion, DCE over every graph).
  EXPECT_EQ(AttentionGroups(kText, "O2"), 2);
  Module m = Parse(kText);
  ASSERT_TRUE(RunPipeline(m, "O2").ok());
  EXPECT_EQ(CountOps(*m.graphs()[0], "fusion"), 4) << PrintModule(m);
  ExpectSameNumbers(kText, "O2");
}

// The QDQ form: u8 / s8 Q, K and V read through per-tensor dequantizes,
// and P quantized to u8 and back.
constexpr char kQdq[] = R"(
graph @g(%q: u8[2, 2, 5, 8], %k: s8[2, 2, 6, 8], %v: s8[2, 2, 6, 8],
         %mask: f32[2, 1, 1, 6]) -> f32[2, 5, 16] {
  %qd = dequantize(%q) {scale = 0.03125, zero_point = 32}
  %kd = dequantize(%k) {scale = 0.03125, zero_point = 0}
  %vd = dequantize(%v) {scale = 0.03125, zero_point = 0}
  %s = matmul(%qd, %kd) {transpose_b = true}
  %c = constant() {value = 0.125} : f32[]
  %t = mul(%s, %c)
  %m = add(%t, %mask)
  %p = softmax(%m) {axis = -1}
  %pq = quantize(%p) {scale = 0.0039215686, zero_point = 0, to = u8}
  %pd = dequantize(%pq) {scale = 0.0039215686, zero_point = 0}
  %o = matmul(%pd, %vd)
  %ot = transpose(%o) {perm = [0, 2, 1, 3]}
  %r = reshape(%ot) {shape = [2, 5, 16]}
  return %r
}
)";

TEST(AttentionFusionTest, TakesTheQdqFormWhole) {
  Module m = Parse(kQdq);
  ASSERT_TRUE(RunPipeline(m, "attention-fusion").ok());
  const Graph& g = *m.graphs()[0];
  ASSERT_EQ(g.ops().size(), 1u) << PrintModule(m);
  const Op& fusion = *g.ops().front();
  EXPECT_EQ(fusion.attrs().at("match_q_quant").ToString(), "[0]");
  EXPECT_EQ(fusion.attrs().at("match_k_quant").ToString(), "[1]");
  EXPECT_EQ(fusion.attrs().at("match_v_quant").ToString(), "[2]");
  EXPECT_EQ(fusion.attrs().at("match_prob_ops").ToString(), "[8, 9]");
  // The group reads the integers as stored.
  EXPECT_EQ(fusion.operand(0)->name(), "q");
  // Before quantized-matmul, which would take the matmuls apart.
  EXPECT_EQ(AttentionGroups(kQdq), 1);
  EXPECT_EQ(AttentionGroups(kQdq, "O2"), 1);
  ExpectSameNumbers(kQdq, "attention-fusion");
}

TEST(AttentionFusionTest, TakesOnnxRuntimesPairsAroundATranspose) {
  constexpr char kText[] = R"(
graph @g(%q: f32[1, 2, 4, 8], %k: s8[1, 4, 2, 8], %v: f32[1, 2, 4, 8])
    -> f32[1, 2, 4, 8] {
  %kd = dequantize(%k) {scale = 0.0625, zero_point = 1}
  %kt = transpose(%kd) {perm = [0, 2, 1, 3]}
  %kq = quantize(%kt) {scale = 0.0625, zero_point = 1, to = s8}
  %kd2 = dequantize(%kq) {scale = 0.0625, zero_point = 1}
  %s = matmul(%q, %kd2) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
}
)";
  Module m = Parse(kText);
  ASSERT_TRUE(RunPipeline(m, "attention-fusion").ok());
  const Graph& g = *m.graphs()[0];
  ASSERT_EQ(g.ops().size(), 1u) << PrintModule(m);
  EXPECT_EQ(g.ops().front()->attrs().at("match_k_quant").ToString(),
            "[0, 2, 3]");
  EXPECT_EQ(AttentionGroups(kText, "O2"), 1);
  ExpectSameNumbers(kText, "attention-fusion");
}

TEST(AttentionFusionTest, QuantOpsTheBlockCannotTakeStayOutside) {
  // K's dequantize is also returned, V's is per channel: the block reads
  // both dequantized. Q's chain ends in a per-channel dequantize before a
  // pair: the block takes Q's last dequantize alone and reads the u8
  // values the quantize before it makes.
  constexpr char kText[] = R"(
graph @g(%q: u8[1, 2, 4, 8], %k: s8[1, 2, 4, 8], %v: s8[1, 2, 4, 8])
    -> (f32[1, 2, 4, 8], f32[1, 2, 4, 8]) {
  %qd = dequantize(%q) {scale = [0.5, 0.25], zero_point = [0, 0], axis = 1}
  %qt = transpose(%qd) {perm = [0, 1, 3, 2]}
  %qq = quantize(%qt) {scale = 0.5, zero_point = 3, to = u8}
  %qd2 = dequantize(%qq) {scale = 0.5, zero_point = 3}
  %kd = dequantize(%k) {scale = 0.5}
  %vd = dequantize(%v) {scale = [0.5, 0.25], zero_point = [0, 0], axis = 1}
  %s = matmul(%qd2, %kd) {transpose_a = true, transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %vd)
  return %o, %kd
}
)";
  Module m = Parse(kText);
  ASSERT_TRUE(RunPipeline(m, "attention-fusion").ok());
  const Graph& g = *m.graphs()[0];
  EXPECT_EQ(CountOps(g, "fusion"), 1) << PrintModule(m);
  EXPECT_EQ(CountOps(g, "dequantize"), 3);
  EXPECT_EQ(CountOps(g, "quantize"), 1);
  for (const auto& op : g.ops()) {
    if (op->kind() != "fusion") continue;
    EXPECT_EQ(op->attrs().at("match_q_quant").ToString(), "[0]");
    EXPECT_EQ(op->attrs().count("match_k_quant"), 0u);
    EXPECT_EQ(op->attrs().count("match_v_quant"), 0u);
  }
  EXPECT_EQ(AttentionGroups(kText), 1);
  ExpectSameNumbers(kText, "attention-fusion");
}

}  // namespace
}  // namespace hgc
