// MatchAttention on the QDQ (int8) forms frameworks export: Q, K and V
// stored as u8 or s8 and read through a per-tensor dequantize (ONNX
// Runtime's extra quantize, dequantize pairs around a transpose too), and
// P quantized and dequantized before P·V; and what it refuses. Each match
// also goes through the attributes and must come back the same.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/attention_attrs.h"
#include "analysis/attention_match.h"
#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::Parse;
using Strides = std::array<int64_t, 4>;

std::vector<std::string> Names(const std::vector<const Op*>& ops) {
  std::vector<std::string> out;
  for (const Op* op : ops) out.push_back(op->result()->name());
  return out;
}

// Parses `text` and matches its first graph, which must match; the match
// encoded as attributes must decode with the same quantization roles.
class Matched {
 public:
  explicit Matched(const std::string& text) : module_(Parse(text)) {
    const Graph& graph = *module_.graphs()[0];
    absl::StatusOr<AttentionMatch> m = MatchAttention(graph);
    EXPECT_TRUE(m.ok()) << m.status();
    if (!m.ok()) return;
    match_ = *m;
    absl::StatusOr<AttentionMatch> decoded =
        DecodeAttentionMatch(EncodeAttentionMatch(match_, graph), graph);
    EXPECT_TRUE(decoded.ok()) << decoded.status();
    if (!decoded.ok()) return;
    EXPECT_EQ(decoded->q_quant, match_.q_quant);
    EXPECT_EQ(decoded->k_quant, match_.k_quant);
    EXPECT_EQ(decoded->v_quant, match_.v_quant);
    EXPECT_EQ(decoded->q_ops, match_.q_ops);
    EXPECT_EQ(decoded->prob_ops, match_.prob_ops);
    EXPECT_EQ(EncodeAttentionMatch(*decoded, graph),
              EncodeAttentionMatch(match_, graph));
  }
  const AttentionMatch& operator*() const { return match_; }
  const AttentionMatch* operator->() const { return &match_; }

 private:
  Module module_;
  AttentionMatch match_;
};

// Expects MatchAttention to refuse `text` with a message holding `what`.
void ExpectRefused(const std::string& text, const std::string& what) {
  Module module = Parse(text);
  absl::Status s = MatchAttention(*module.graphs()[0]).status();
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), what)) << s;
}

TEST(AttentionMatchQdqTest, DequantizedOperandsAndQuantizedP) {
  Matched m(R"(
graph @g(%q: u8[2, 3, 5, 8], %k: s8[2, 3, 7, 8], %v: s8[2, 3, 7, 4],
         %mask: f32[2, 1, 1, 7]) -> f32[2, 5, 12] {
  %qd = dequantize(%q) {scale = 0.03125, zero_point = 32}
  %kd = dequantize(%k) {scale = 0.0625, zero_point = 0}
  %vd = dequantize(%v) {scale = 0.25, zero_point = -4}
  %s = matmul(%qd, %kd) {transpose_b = true}
  %c = constant() {value = 0.125} : f32[]
  %t = mul(%s, %c)
  %m = add(%t, %mask)
  %p = softmax(%m) {axis = -1}
  %pq = quantize(%p) {scale = 0.0039215686, zero_point = 0, to = u8}
  %pd = dequantize(%pq) {scale = 0.0039215686, zero_point = 0}
  %o = matmul(%pd, %vd)
  %ot = transpose(%o) {perm = [0, 2, 1, 3]}
  %r = reshape(%ot) {shape = [2, 5, 12]}
  return %r
}
)");
  // The parameters as stored, the strides as for f32 ones.
  EXPECT_EQ(m->q.param->name(), "q");
  EXPECT_EQ(m->q.param->type().dtype, DType::kU8);
  EXPECT_EQ(m->k.param->type().dtype, DType::kS8);
  EXPECT_EQ(m->q.strides, (Strides{120, 40, 8, 1}));
  EXPECT_EQ(m->k.strides, (Strides{168, 56, 8, 1}));
  EXPECT_EQ(m->v.strides, (Strides{84, 28, 4, 1}));
  EXPECT_EQ(m->out_strides, (Strides{60, 4, 12, 1}));
  EXPECT_EQ(Names(m->q_quant), (std::vector<std::string>{"qd"}));
  EXPECT_EQ(Names(m->k_quant), (std::vector<std::string>{"kd"}));
  EXPECT_EQ(Names(m->v_quant), (std::vector<std::string>{"vd"}));
  EXPECT_EQ(Names(m->prob_ops), (std::vector<std::string>{"pq", "pd"}));
  EXPECT_TRUE(m->q_ops.empty());
  EXPECT_EQ(DequantizeOf(m->q_quant).scale, 0.03125f);
  EXPECT_EQ(DequantizeOf(m->q_quant).zero_point, 32);
  EXPECT_EQ(DequantizeOf(m->k_quant).zero_point, 0);
  EXPECT_EQ(DequantizeOf(m->v_quant).scale, 0.25f);
  EXPECT_EQ(DequantizeOf(m->v_quant).zero_point, -4);
  EXPECT_EQ(DequantizeOf({}).scale, 1.0f);
}

// ONNX Runtime's form: dequantize, transpose, quantize back, dequantize;
// the pair changes nothing, so K is read from the parameter through the
// transpose's strides. Q keeps a scale after its dequantize.
TEST(AttentionMatchQdqTest, QuantizeDequantizePairsAroundATranspose) {
  Matched m(R"(
graph @g(%q: s8[2, 5, 3, 8], %k: u8[2, 7, 3, 8], %v: s8[2, 7, 3, 4])
    -> f32[2, 3, 5, 4] {
  %qd = dequantize(%q) {scale = 0.5, zero_point = 1}
  %qt = transpose(%qd) {perm = [0, 2, 1, 3]}
  %qq = quantize(%qt) {scale = 0.5, zero_point = 1, to = s8}
  %qd2 = dequantize(%qq) {scale = 0.5, zero_point = 1}
  %c = constant() {value = 0.35} : f32[]
  %qs = mul(%qd2, %c)
  %kd = dequantize(%k) {scale = 0.0625, zero_point = 128}
  %kt = transpose(%kd) {perm = [0, 2, 3, 1]}
  %kq = quantize(%kt) {scale = 0.0625, zero_point = 128, to = u8}
  %kd2 = dequantize(%kq) {scale = 0.0625, zero_point = 128}
  %vd = dequantize(%v) {scale = 0.25}
  %vt = transpose(%vd) {perm = [0, 2, 1, 3]}
  %vq = quantize(%vt) {scale = 0.25, to = s8}
  %vd2 = dequantize(%vq) {scale = 0.25}
  %s = matmul(%qs, %kd2)
  %p = softmax(%s)
  %o = matmul(%p, %vd2)
  return %o
}
)");
  EXPECT_EQ(m->q.strides, (Strides{120, 8, 24, 1}));
  EXPECT_EQ(m->k.strides, (Strides{168, 8, 24, 1}));
  EXPECT_EQ(m->v.strides, (Strides{84, 4, 12, 1}));
  EXPECT_EQ(Names(m->q_quant), (std::vector<std::string>{"qd", "qq", "qd2"}));
  EXPECT_EQ(Names(m->k_quant), (std::vector<std::string>{"kd", "kq", "kd2"}));
  EXPECT_EQ(Names(m->v_quant), (std::vector<std::string>{"vd", "vq", "vd2"}));
  EXPECT_EQ(Names(m->q_ops), (std::vector<std::string>{"qs"}));
  EXPECT_EQ(DequantizeOf(m->k_quant).zero_point, 128);
  EXPECT_TRUE(m->prob_ops.empty());
}

// The dequantize after the relabels, and P's pair between casts.
TEST(AttentionMatchQdqTest, DequantizeAfterATransposeAndCastsAroundP) {
  Matched m(R"(
graph @g(%q: f32[2, 3, 5, 8], %k: s8[2, 3, 7, 8], %v: u8[2, 3, 4, 7])
    -> f32[2, 3, 5, 4] {
  %kt = transpose(%k) {perm = [0, 1, 3, 2]}
  %kd = dequantize(%kt) {scale = 0.0625}
  %vt = transpose(%v) {perm = [0, 1, 3, 2]}
  %vd = dequantize(%vt) {scale = 0.125, zero_point = 100}
  %s = matmul(%q, %kd)
  %p = softmax(%s)
  %pq = quantize(%p) {scale = 0.0078125, zero_point = 0, to = s8}
  %pd = dequantize(%pq) {scale = 0.0078125, zero_point = 0}
  %pb = cast(%pd) {to = bf16}
  %pf = cast(%pb) {to = f32}
  %o = matmul(%pf, %vd)
  return %o
}
)");
  EXPECT_EQ(m->q.param->type().dtype, DType::kF32);
  EXPECT_TRUE(m->q_quant.empty());
  EXPECT_EQ(Names(m->k_quant), (std::vector<std::string>{"kd"}));
  EXPECT_EQ(Names(m->v_quant), (std::vector<std::string>{"vd"}));
  EXPECT_EQ(m->k.strides, (Strides{168, 56, 8, 1}));
  EXPECT_EQ(m->v.strides, (Strides{84, 28, 1, 7}));
  EXPECT_EQ(Names(m->prob_ops),
            (std::vector<std::string>{"pq", "pd", "pb", "pf"}));
}

// A block whose K is s8[2, 3, 7, 8] read through `k_ops`, ending in
// `k_value`; V is `v_value`.
std::string WithK(const std::string& k_ops, const std::string& k_value,
                  const std::string& v_value = "%v") {
  return absl::StrCat(R"(
graph @g(%q: f32[2, 3, 5, 8], %k: s8[2, 3, 7, 8], %v: f32[2, 3, 7, 8])
    -> f32[2, 3, 5, 8] {
)",
                      k_ops, "  %s = matmul(%q, ", k_value,
                      R"() {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, )",
                      v_value, R"()
  return %o
}
)");
}

// Intel Neural Compressor's form quantizes the scores themselves before
// the scale and the mask: the pair is two more score ops; a per-axis
// quantize of the scores is not one.
TEST(AttentionMatchQdqTest, QuantizedScoresAreScoreOps) {
  const std::string text = R"(
graph @g(%q: u8[1, 2, 5, 8], %k: s8[1, 2, 7, 8], %v: s8[1, 2, 7, 8],
         %mask: f32[1, 1, 1, 7]) -> f32[1, 2, 5, 8] {
  %qd = dequantize(%q) {scale = 0.03125, zero_point = 128}
  %kd = dequantize(%k) {scale = 0.0625, zero_point = 0}
  %vd = dequantize(%v) {scale = 0.25, zero_point = 0}
  %s = matmul(%qd, %kd) {transpose_b = true}
  %sq = quantize(%s) {SCALE, zero_point = 0, to = s8}
  %sd = dequantize(%sq) {scale = 0.1, zero_point = 0}
  %c = constant() {value = 8.0} : f32[]
  %t = div(%sd, %c)
  %m = add(%t, %mask)
  %p = softmax(%m) {axis = -1}
  %pq = quantize(%p) {scale = 0.0039215686, zero_point = 0, to = u8}
  %pd = dequantize(%pq) {scale = 0.0039215686, zero_point = 0}
  %o = matmul(%pd, %vd)
  return %o
}
)";
  auto with_scale = [&](const std::string& scale) {
    std::string t = text;
    t.replace(t.find("SCALE"), 5, scale);
    return t;
  };
  Matched m(with_scale("scale = 0.1"));
  EXPECT_EQ(Names(m->score_ops),
            (std::vector<std::string>{"sq", "sd", "t", "m"}));
  EXPECT_EQ(Names(m->prob_ops), (std::vector<std::string>{"pq", "pd"}));
  ExpectRefused(
      with_scale("scale = [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], axis = 3"),
      "quantize between the scores and softmax");
}

TEST(AttentionMatchQdqTest, RefusesAPerAxisDequantize) {
  ExpectRefused(WithK("  %kd = dequantize(%k) {scale = [0.5, 0.25, 0.5], "
                      "zero_point = [0, 0, 0], axis = 1}\n",
                      "%kd"),
                "%kd (dequantize) is not a per-tensor dequantize");
}

TEST(AttentionMatchQdqTest, RefusesAPairWithAnotherScale) {
  ExpectRefused(WithK("  %kd = dequantize(%k) {scale = 0.5}\n"
                      "  %kq = quantize(%kd) {scale = 0.25, to = s8}\n"
                      "  %kd2 = dequantize(%kq) {scale = 0.25}\n",
                      "%kd2"),
                "%kq (quantize) is not a per-tensor quantize with the first "
                "dequantize's scale");
  // Or another type.
  ExpectRefused(WithK("  %kd = dequantize(%k) {scale = 0.5}\n"
                      "  %kq = quantize(%kd) {scale = 0.5, to = u8}\n"
                      "  %kd2 = dequantize(%kq) {scale = 0.5}\n",
                      "%kd2"),
                "%kq (quantize) is not a per-tensor quantize");
}

TEST(AttentionMatchQdqTest, RefusesADequantizeAlsoReadElsewhere) {
  // %kd is K and V at once.
  ExpectRefused(WithK("  %kd = dequantize(%k) {scale = 0.5}\n", "%kd", "%kd"),
                "%kd is used outside the attention chain");
}

TEST(AttentionMatchQdqTest, RefusesAScaleBeforeTheLastDequantize) {
  // The pair would round the scaled values: it is no identity then.
  ExpectRefused(R"(
graph @g(%q: s8[2, 5, 8], %k: f32[2, 7, 8], %v: f32[2, 7, 8])
    -> f32[2, 5, 8] {
  %qd = dequantize(%q) {scale = 0.5}
  %c = constant() {value = 2.0} : f32[]
  %qs = mul(%qd, %c)
  %qq = quantize(%qs) {scale = 0.5, to = s8}
  %qd2 = dequantize(%qq) {scale = 0.5}
  %s = matmul(%qd2, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
}
)",
                "mul %qs scales Q before its last dequantize");
}

TEST(AttentionMatchQdqTest, RefusesAQuantizedPWithoutItsDequantize) {
  ExpectRefused(R"(
graph @g(%q: f32[2, 5, 8], %k: f32[2, 7, 8], %v: f32[2, 7, 8])
    -> f32[2, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %pq = quantize(%p) {scale = 0.0078125, to = u8}
  %pf = cast(%pq) {to = f32}
  %o = matmul(%pf, %v)
  return %o
}
)",
                "%pq (quantize) between softmax and P·V is not followed by "
                "a per-tensor dequantize");
  ExpectRefused(R"(
graph @g(%q: f32[2, 5, 8], %k: f32[2, 7, 8], %v: f32[2, 7, 8])
    -> f32[2, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %pq = quantize(%p) {scale = 0.0078125, to = u8}
  %pd = dequantize(%pq) {scale = 0.00390625}
  %o = matmul(%pd, %v)
  return %o
}
)",
                "with its scale and zero point");
}

// The output quantized for the next int8 matmul, after the transpose and
// reshape: the last out op; the attributes list it too.
TEST(AttentionMatchQdqTest, QuantizedOutput) {
  Matched m(R"(
graph @g(%q: u8[2, 3, 5, 8], %k: s8[2, 3, 7, 8], %v: s8[2, 3, 7, 4])
    -> u8[2, 5, 12] {
  %qd = dequantize(%q) {scale = 0.03125, zero_point = 32}
  %kd = dequantize(%k) {scale = 0.0625, zero_point = 0}
  %vd = dequantize(%v) {scale = 0.25, zero_point = -4}
  %s = matmul(%qd, %kd) {transpose_b = true}
  %p = softmax(%s) {axis = -1}
  %pq = quantize(%p) {scale = 0.0039215686, zero_point = 0, to = u8}
  %pd = dequantize(%pq) {scale = 0.0039215686, zero_point = 0}
  %o = matmul(%pd, %vd)
  %ot = transpose(%o) {perm = [0, 2, 1, 3]}
  %r = reshape(%ot) {shape = [2, 5, 12]}
  %rq = quantize(%r) {scale = 0.05, zero_point = 128, to = u8}
  return %rq
}
)");
  EXPECT_EQ(Names(m->out_ops), (std::vector<std::string>{"rq"}));
  EXPECT_EQ(m->out_strides, (Strides{60, 4, 12, 1}));
}

// A quantize after P·V must be the last elementwise op and per-tensor.
TEST(AttentionMatchQdqTest, RefusesAQuantizedOutputCastOrPerAxis) {
  ExpectRefused(R"(
graph @g(%q: f32[2, 5, 8], %k: f32[2, 7, 8], %v: f32[2, 7, 8])
    -> f32[2, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  %oq = quantize(%o) {scale = 0.0078125, to = u8}
  %of = cast(%oq) {to = f32}
  return %of
}
)",
                "a quantize after P·V must be per-tensor and after the casts");
  ExpectRefused(R"(
graph @g(%q: f32[2, 5, 8], %k: f32[2, 7, 8], %v: f32[2, 7, 8])
    -> u8[2, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  %oq = quantize(%o) {scale = [0.1, 0.2, 0.1, 0.2, 0.1, 0.2, 0.1, 0.2], axis = 2, to = u8}
  return %oq
}
)",
                "a quantize after P·V must be per-tensor and after the casts");
}

}  // namespace
}  // namespace hgc
