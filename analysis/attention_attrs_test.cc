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

}  // namespace
}  // namespace hgc
