// The match_* attributes: what EncodeAttentionMatch writes, and each rule
// DecodeAttentionMatch checks an edited attribute against. The round trip
// over every matched form is in attention_match_test.cc.
#include "analysis/attention_attrs.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "analysis/attention_match.h"
#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::Parse;

// Every role filled: a scale of Q, score ops, a round trip of P through
// bf16, and a transpose and a cast after P·V.
constexpr char kBlock[] = R"(
graph @g(%q: f32[2, 3, 5, 8], %k: f32[2, 3, 7, 8], %v: f32[2, 3, 7, 4],
         %mask: f32[2, 1, 1, 7]) -> bf16[2, 5, 3, 4] {
  %c0 = constant() {value = 0.5} : f32[]
  %qs = mul(%q, %c0)
  %s = matmul(%qs, %k) {transpose_b = true}
  %c = constant() {value = 0.125} : f32[]
  %t = mul(%s, %c)
  %m = add(%t, %mask)
  %p = softmax(%m) {axis = -1}
  %pb = cast(%p) {to = bf16}
  %pf = cast(%pb) {to = f32}
  %o = matmul(%pf, %v)
  %ot = transpose(%o) {perm = [0, 2, 1, 3]}
  %ob = cast(%ot) {to = bf16}
  return %ob
}
)";

class AttentionAttrsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    module_ = Parse(kBlock);
    absl::StatusOr<AttentionMatch> m = MatchAttention(body());
    ASSERT_TRUE(m.ok()) << m.status();
    attrs_ = EncodeAttentionMatch(*m, body());
  }
  const Graph& body() const { return *module_.graphs()[0]; }

  // Decodes the attributes after `edit`; expects an error that mentions
  // `what`.
  void ExpectRefused(const std::function<void(AttrMap&)>& edit,
                     const std::string& what) {
    AttrMap attrs = attrs_;
    edit(attrs);
    absl::StatusOr<AttentionMatch> m = DecodeAttentionMatch(attrs, body());
    ASSERT_FALSE(m.ok()) << "accepted an edit expected to fail on " << what;
    EXPECT_TRUE(absl::IsInvalidArgument(m.status())) << m.status();
    EXPECT_TRUE(absl::StrContains(m.status().message(), what)) << m.status();
  }
  // Sets element `i` of int list `name` to `value`.
  static std::function<void(AttrMap&)> SetElement(const std::string& name,
                                                  int i, int64_t value) {
    return [=](AttrMap& attrs) {
      std::vector<int64_t> v = attrs.at(name).as_int_list();
      v[i] = value;
      attrs[name] = Attribute::IntList(v);
    };
  }

  Module module_;
  AttrMap attrs_;
};

TEST_F(AttentionAttrsTest, EncodesEveryRoleByIndex) {
  std::vector<std::string> printed;
  for (const auto& [name, value] : attrs_) {
    printed.push_back(name + " = " + value.ToString());
  }
  EXPECT_EQ(printed, (std::vector<std::string>{
                         "match_dims = [2, 3, 1, 5, 7, 8, 4]",
                         "match_k = [1, 0, 168, 56, 8, 1]",
                         "match_ops = [2, 6, 9]",
                         "match_out = [0, 60, 4, 12, 1]",
                         "match_out_ops = [11]",
                         "match_prob_ops = [7, 8]",
                         "match_q = [0, 0, 120, 40, 8, 1]",
                         "match_q_ops = [1]",
                         "match_score_ops = [4, 5]",
                         "match_v = [2, 0, 84, 28, 4, 1]",
                     }));
  EXPECT_TRUE(HasAttentionMatchAttrs(attrs_));
  EXPECT_FALSE(HasAttentionMatchAttrs({{"kind", Attribute::String("x")}}));
}

TEST_F(AttentionAttrsTest, DecodesWhatItEncoded) {
  absl::StatusOr<AttentionMatch> m = DecodeAttentionMatch(attrs_, body());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->q_ops.size(), 1u);
  EXPECT_EQ(m->softmax->result()->name(), "p");
  EXPECT_EQ(m->out_ops.front()->result()->name(), "ob");
  EXPECT_EQ(m->result->name(), "ob");
  EXPECT_EQ(EncodeAttentionMatch(*m, body()), attrs_);
}

TEST_F(AttentionAttrsTest, RefusesAMissingAttribute) {
  ExpectRefused([](AttrMap& a) { a.erase("match_v"); }, "match_v is missing");
}

TEST_F(AttentionAttrsTest, RefusesAMalformedAttribute) {
  ExpectRefused([](AttrMap& a) { a["match_dims"] = Attribute::Int(2); },
                "match_dims is not a list of integers");
  ExpectRefused(
      [](AttrMap& a) { a["match_out"] = Attribute::IntList({0, 1, 2}); },
      "match_out has 3 elements, not 5");
}

TEST_F(AttentionAttrsTest, RefusesADimBelowOne) {
  ExpectRefused(SetElement("match_dims", 0, 0), "a dim below 1");
}

TEST_F(AttentionAttrsTest, RefusesAParameterOutOfRange) {
  ExpectRefused(SetElement("match_k", 0, 4), "parameter 4 out of range");
}

TEST_F(AttentionAttrsTest, RefusesAnOpOutOfRange) {
  ExpectRefused(SetElement("match_ops", 1, 12), "op 12 out of range");
  ExpectRefused(SetElement("match_score_ops", 0, -1), "op -1 out of range");
}

TEST_F(AttentionAttrsTest, RefusesAnOpInTwoRoles) {
  ExpectRefused(SetElement("match_prob_ops", 0, 6), "named in match_ops too");
}

TEST_F(AttentionAttrsTest, RefusesAnOpOfTheWrongKindInARole) {
  ExpectRefused(
      [](AttrMap& a) { a["match_ops"] = Attribute::IntList({6, 2, 9}); },
      "Q·Kᵀ is op 6 (%p = softmax)");
  ExpectRefused(SetElement("match_out_ops", 0, 10),
                "op 10 (%ot = transpose) is not a cast");
}

TEST_F(AttentionAttrsTest, RefusesRolesThatDoNotChain) {
  // A score op left out, or listed out of order.
  ExpectRefused([](AttrMap& a) { a.erase("match_score_ops"); },
                "softmax does not read Q·Kᵀ");
  ExpectRefused(
      [](AttrMap& a) { a["match_score_ops"] = Attribute::IntList({5, 4}); },
      "is not op 4");
  // P·V's operand is not the end of the prob ops.
  ExpectRefused([](AttrMap& a) { a.erase("match_prob_ops"); },
                "%p is not the plain A operand of P·V");
  ExpectRefused(
      [](AttrMap& a) { a["match_prob_ops"] = Attribute::IntList({8}); },
      "%p is not read by op 8 (%pf = cast) alone");
  ExpectRefused([](AttrMap& a) { a.erase("match_out_ops"); },
                "match_out_ops: op 11 (%ob = cast) after P·V is not listed");
  ExpectRefused([](AttrMap& a) { a.erase("match_q_ops"); },
                "match_q reads op 1 (%qs = mul), not a reshape or transpose");
}

TEST_F(AttentionAttrsTest, RefusesDimsTheTypesDoNotHave) {
  ExpectRefused(SetElement("match_dims", 3, 6), "the body has seq_q 5");
  ExpectRefused(SetElement("match_dims", 6, 8), "head_dim_v 4");
  // 6 (batch, head) pairs, but not as 3 batches of 2 heads.
  ExpectRefused(
      [](AttrMap& a) {
        a["match_dims"] = Attribute::IntList({3, 2, 1, 5, 7, 8, 4});
      },
      "do not split the scores' batch dims");
  ExpectRefused(SetElement("match_dims", 2, 2), "do not split");
}

TEST_F(AttentionAttrsTest, RefusesStridesTheBodyDoesNotRead) {
  ExpectRefused(SetElement("match_q", 4, 1), "match_q: the body reads offset 0, "
                                             "row stride 8, column stride 1");
  ExpectRefused(SetElement("match_v", 1, 4), "match_v: the body reads offset 0");
  ExpectRefused(SetElement("match_k", 3, 57),
                "match_k: the body steps 56 elements over the scores' batch "
                "dim 1");
  ExpectRefused(SetElement("match_out", 1, 61), "match_out: the body steps 60");
  // K where the body reads V.
  ExpectRefused(SetElement("match_k", 0, 2),
                "match_k: the body reads parameter 1, not 2");
}

TEST(AttentionAttrsRulesTest, RefusesAStrideOverOneHead) {
  Module module = Parse(R"(
graph @g(%q: f32[4, 5, 8], %k: f32[4, 7, 8], %v: f32[4, 7, 8]) -> f32[4, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
}
)");
  const Graph& body = *module.graphs()[0];
  absl::StatusOr<AttentionMatch> m = MatchAttention(body);
  ASSERT_TRUE(m.ok()) << m.status();
  AttrMap attrs = EncodeAttentionMatch(*m, body);
  EXPECT_EQ(attrs.at("match_q").ToString(), "[0, 0, 40, 0, 8, 1]");
  attrs["match_q"] = Attribute::IntList({0, 0, 40, 40, 8, 1});
  absl::Status s = DecodeAttentionMatch(attrs, body).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "a head stride over one head"))
      << s;
}

TEST(AttentionAttrsRulesTest, RefusesAnOpWithNoPart) {
  // A dead op in a hand-written body: the block does not describe it.
  Module module = Parse(R"(
graph @g(%q: f32[4, 5, 8], %k: f32[4, 7, 8], %v: f32[4, 7, 8]) -> f32[4, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  %dead = neg(%v)
  return %o
}
)");
  const Graph& body = *module.graphs()[0];
  AttrMap attrs = {
      {"match_dims", Attribute::IntList({4, 1, 1, 5, 7, 8, 8})},
      {"match_q", Attribute::IntList({0, 0, 40, 0, 8, 1})},
      {"match_k", Attribute::IntList({1, 0, 56, 0, 8, 1})},
      {"match_v", Attribute::IntList({2, 0, 56, 0, 8, 1})},
      {"match_out", Attribute::IntList({0, 40, 0, 8, 1})},
      {"match_ops", Attribute::IntList({0, 1, 2})}};
  absl::Status s = DecodeAttentionMatch(attrs, body).status();
  EXPECT_TRUE(absl::StrContains(
      s.message(), "op 3 (%dead = neg) has no part in the attention block"))
      << s;
  Module clean = Parse(R"(
graph @g(%q: f32[4, 5, 8], %k: f32[4, 7, 8], %v: f32[4, 7, 8]) -> f32[4, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
}
)");
  EXPECT_TRUE(DecodeAttentionMatch(attrs, *clean.graphs()[0]).ok());
}

// The QDQ form: Q (u8) dequantized then scaled, K (s8) through ONNX
// Runtime's dequantize, transpose, quantize, dequantize, V dequantized
// after a transpose, and P quantized and dequantized.
constexpr char kQdqBlock[] = R"(
graph @g(%q: u8[2, 3, 5, 8], %k: s8[2, 7, 3, 8], %v: s8[2, 3, 4, 7])
    -> f32[2, 3, 5, 4] {
  %qd = dequantize(%q) {scale = 0.03125, zero_point = 32}
  %c0 = constant() {value = 0.5} : f32[]
  %qs = mul(%qd, %c0)
  %kd = dequantize(%k) {scale = 0.0625, zero_point = -3}
  %kt = transpose(%kd) {perm = [0, 2, 3, 1]}
  %kq = quantize(%kt) {scale = 0.0625, zero_point = -3, to = s8}
  %kd2 = dequantize(%kq) {scale = 0.0625, zero_point = -3}
  %s = matmul(%qs, %kd2)
  %p = softmax(%s)
  %pq = quantize(%p) {scale = 0.00390625, zero_point = 0, to = u8}
  %pd = dequantize(%pq) {scale = 0.00390625, zero_point = 0}
  %vt = transpose(%v) {perm = [0, 1, 3, 2]}
  %vd = dequantize(%vt) {scale = 0.25, zero_point = 0}
  %o = matmul(%pd, %vd)
  return %o
}
)";

class AttentionAttrsQdqTest : public AttentionAttrsTest {
 protected:
  void SetUp() override {
    module_ = Parse(kQdqBlock);
    absl::StatusOr<AttentionMatch> m = MatchAttention(body());
    ASSERT_TRUE(m.ok()) << m.status();
    attrs_ = EncodeAttentionMatch(*m, body());
  }
  // Decodes the attributes of kQdqBlock against kQdqBlock with `from`
  // replaced by `to` (the same ops, in the same order); expects an error
  // that mentions `what`.
  void ExpectBodyRefused(const std::string& from, const std::string& to,
                         const std::string& what) {
    std::string text = kQdqBlock;
    ASSERT_TRUE(absl::StrContains(text, from)) << from;
    text.replace(text.find(from), from.size(), to);
    Module edited = Parse(text);
    absl::Status s = DecodeAttentionMatch(attrs_, *edited.graphs()[0]).status();
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), what)) << s;
  }
};

TEST_F(AttentionAttrsQdqTest, EncodesTheQuantRoles) {
  EXPECT_EQ(attrs_.at("match_q_quant").ToString(), "[0]");
  EXPECT_EQ(attrs_.at("match_k_quant").ToString(), "[3, 5, 6]");
  EXPECT_EQ(attrs_.at("match_v_quant").ToString(), "[12]");
  EXPECT_EQ(attrs_.at("match_q_ops").ToString(), "[2]");
  EXPECT_EQ(attrs_.at("match_prob_ops").ToString(), "[9, 10]");
  EXPECT_EQ(attrs_.at("match_k").ToString(), "[1, 0, 168, 8, 24, 1]");
  EXPECT_EQ(attrs_.at("match_v").ToString(), "[2, 0, 84, 28, 1, 7]");
  absl::StatusOr<AttentionMatch> m = DecodeAttentionMatch(attrs_, body());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->k_quant.size(), 3u);
  EXPECT_EQ(DequantizeOf(m->k_quant).zero_point, -3);
  EXPECT_EQ(EncodeAttentionMatch(*m, body()), attrs_);
  // An f32 block has none.
  Module f32 = Parse(kBlock);
  absl::StatusOr<AttentionMatch> plain = MatchAttention(*f32.graphs()[0]);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(
      EncodeAttentionMatch(*plain, *f32.graphs()[0]).count("match_k_quant"),
      0u);
}

TEST_F(AttentionAttrsQdqTest, RefusesAnIntegerParameterWithoutItsQuantOps) {
  ExpectRefused([](AttrMap& a) { a.erase("match_k_quant"); },
                "match_k_quant: op 6 (%kd2 = dequantize) on K's path is not "
                "listed in order");
  ExpectRefused(
      [](AttrMap& a) { a["match_k_quant"] = Attribute::IntList({5, 6}); },
      "match_k_quant: op 3 (%kd = dequantize) on K's path is not listed");
}

TEST_F(AttentionAttrsQdqTest, RefusesAListedOpOffThePath) {
  ExpectRefused(
      [](AttrMap& a) { a["match_v_quant"] = Attribute::IntList({3, 12}); },
      "op 3 is named in match_k_quant too");
  // A dequantize with no other part, listed as V's first.
  Module module = Parse(R"(
graph @g(%q: f32[4, 5, 8], %k: f32[4, 7, 8], %v: s8[4, 7, 8]) -> f32[4, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %stray = dequantize(%v) {scale = 0.5}
  %vd = dequantize(%v) {scale = 0.5}
  %o = matmul(%p, %vd)
  return %o
}
)");
  AttrMap attrs = {
      {"match_dims", Attribute::IntList({4, 1, 1, 5, 7, 8, 8})},
      {"match_q", Attribute::IntList({0, 0, 40, 0, 8, 1})},
      {"match_k", Attribute::IntList({1, 0, 56, 0, 8, 1})},
      {"match_v", Attribute::IntList({2, 0, 56, 0, 8, 1})},
      {"match_out", Attribute::IntList({0, 40, 0, 8, 1})},
      {"match_ops", Attribute::IntList({0, 1, 4})},
      {"match_v_quant", Attribute::IntList({2, 3})}};
  absl::Status s = DecodeAttentionMatch(attrs, *module.graphs()[0]).status();
  EXPECT_TRUE(absl::StrContains(
      s.message(), "match_v_quant: op 2 (%stray = dequantize) is not on V's "
                   "path"))
      << s;
  attrs["match_v_quant"] = Attribute::IntList({3});
  s = DecodeAttentionMatch(attrs, *module.graphs()[0]).status();
  EXPECT_TRUE(absl::StrContains(
      s.message(), "op 2 (%stray = dequantize) has no part"))
      << s;
}

TEST_F(AttentionAttrsQdqTest, RefusesAPerAxisDequantizeFirst) {
  ExpectBodyRefused(
      "{scale = 0.03125, zero_point = 32}",
      "{scale = [0.03125, 0.03125, 0.03125], zero_point = [32, 32, 32], "
      "axis = 1}",
      "match_q_quant: op 0 (%qd = dequantize) is not a per-tensor dequantize "
      "of a u8 or s8 parameter");
}

TEST_F(AttentionAttrsQdqTest, RefusesAPairUnlikeTheFirstDequantize) {
  ExpectBodyRefused(
      "%kq = quantize(%kt) {scale = 0.0625, zero_point = -3",
      "%kq = quantize(%kt) {scale = 0.0625, zero_point = -2",
      "match_k_quant: op 5 (%kq = quantize) is not a per-tensor quantize "
      "with the first dequantize's scale, zero point and type");
  ExpectBodyRefused(
      "%kd2 = dequantize(%kq) {scale = 0.0625",
      "%kd2 = dequantize(%kq) {scale = 0.125",
      "match_k_quant: op 6 (%kd2 = dequantize) is not a per-tensor "
      "dequantize with the first dequantize's scale and zero point");
}

TEST(AttentionAttrsRulesTest, RefusesAQuantOpReadOutsideTheChain) {
  // %kd is K and V at once: the kernel cannot dequantize it for both.
  Module module = Parse(R"(
graph @g(%q: f32[4, 5, 8], %k: s8[4, 7, 8]) -> f32[4, 5, 8] {
  %kd = dequantize(%k) {scale = 0.5}
  %s = matmul(%q, %kd) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %kd)
  return %o
}
)");
  AttrMap attrs = {
      {"match_dims", Attribute::IntList({4, 1, 1, 5, 7, 8, 8})},
      {"match_q", Attribute::IntList({0, 0, 40, 0, 8, 1})},
      {"match_k", Attribute::IntList({1, 0, 56, 0, 8, 1})},
      {"match_v", Attribute::IntList({1, 0, 56, 0, 8, 1})},
      {"match_out", Attribute::IntList({0, 40, 0, 8, 1})},
      {"match_ops", Attribute::IntList({1, 2, 3})},
      {"match_k_quant", Attribute::IntList({0})}};
  absl::Status s = DecodeAttentionMatch(attrs, *module.graphs()[0]).status();
  EXPECT_TRUE(absl::StrContains(
      s.message(),
      "match_k_quant: op 0 (%kd = dequantize) is read outside the chain"))
      << s;
}

TEST(AttentionAttrsRulesTest, RefusesAScaleOfQBeforeItsLastDequantize) {
  // The quantize after the scale rounds the scaled values: no identity.
  Module module = Parse(R"(
graph @g(%q: s8[4, 5, 8], %k: f32[4, 7, 8], %v: f32[4, 7, 8]) -> f32[4, 5, 8] {
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
)");
  AttrMap attrs = {
      {"match_dims", Attribute::IntList({4, 1, 1, 5, 7, 8, 8})},
      {"match_q", Attribute::IntList({0, 0, 40, 0, 8, 1})},
      {"match_k", Attribute::IntList({1, 0, 56, 0, 8, 1})},
      {"match_v", Attribute::IntList({2, 0, 56, 0, 8, 1})},
      {"match_out", Attribute::IntList({0, 40, 0, 8, 1})},
      {"match_ops", Attribute::IntList({5, 6, 7})},
      {"match_q_ops", Attribute::IntList({2})},
      {"match_q_quant", Attribute::IntList({0, 3, 4})}};
  absl::Status s = DecodeAttentionMatch(attrs, *module.graphs()[0]).status();
  EXPECT_TRUE(absl::StrContains(
      s.message(),
      "match_q_ops: op 2 (%qs = mul) scales Q before its last dequantize"))
      << s;
}

TEST_F(AttentionAttrsQdqTest, ChecksTheQuantizedProbabilities) {
  ExpectBodyRefused(
      "%pd = dequantize(%pq) {scale = 0.00390625, zero_point = 0}",
      "%pd = dequantize(%pq) {scale = 0.00390625, zero_point = 1}",
      "match_prob_ops: op 9 (%pq = quantize) is not followed by a per-tensor "
      "dequantize with its scale and zero point");
  ExpectRefused(
      [](AttrMap& a) { a["match_prob_ops"] = Attribute::IntList({10}); },
      "match_prob_ops: op 10 (%pd = dequantize) is not a dequantize right "
      "after a quantize");
}

}  // namespace
}  // namespace hgc
