// MatchAttention on each form frameworks export, and what it refuses. Each
// match also goes through the attributes the attention-fusion pass writes
// (analysis/attention_attrs.h) and must come back the same.
#include "analysis/attention_match.h"

#include <string>
#include <vector>

#include "analysis/attention_attrs.h"
#include "gtest/gtest.h"
#include "passes/test_util.h"

namespace hgc {
namespace {

using pass_test::Parse;
using Strides = std::array<int64_t, 4>;

std::vector<std::string> Kinds(const std::vector<const Op*>& ops) {
  std::vector<std::string> out;
  for (const Op* op : ops) out.push_back(op->kind());
  return out;
}

void ExpectSameOperand(const StridedOperand& a, const StridedOperand& b) {
  EXPECT_EQ(a.param, b.param);
  EXPECT_EQ(a.offset, b.offset);
  EXPECT_EQ(a.strides, b.strides);
}

// Every field of `a` and `b` alike.
void ExpectSameMatch(const AttentionMatch& a, const AttentionMatch& b) {
  EXPECT_EQ(std::vector<int64_t>({a.batch, a.heads, a.group, a.seq_q,
                                  a.seq_kv, a.head_dim, a.head_dim_v}),
            std::vector<int64_t>({b.batch, b.heads, b.group, b.seq_q,
                                  b.seq_kv, b.head_dim, b.head_dim_v}));
  ExpectSameOperand(a.q, b.q);
  ExpectSameOperand(a.k, b.k);
  ExpectSameOperand(a.v, b.v);
  EXPECT_EQ(a.q_ops, b.q_ops);
  EXPECT_EQ(a.qk, b.qk);
  EXPECT_EQ(a.score_ops, b.score_ops);
  EXPECT_EQ(a.softmax, b.softmax);
  EXPECT_EQ(a.prob_ops, b.prob_ops);
  EXPECT_EQ(a.pv, b.pv);
  EXPECT_EQ(a.out_ops, b.out_ops);
  EXPECT_EQ(a.out_offset, b.out_offset);
  EXPECT_EQ(a.out_strides, b.out_strides);
  EXPECT_EQ(a.result, b.result);
}

// Parses `text` and matches its first graph, which must match; the match
// encoded as attributes must decode to itself.
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
    if (decoded.ok()) ExpectSameMatch(match_, *decoded);
  }
  const AttentionMatch& operator*() const { return match_; }
  const AttentionMatch* operator->() const { return &match_; }

 private:
  Module module_;
  AttentionMatch match_;
};

void ExpectDims(const AttentionMatch& m, int64_t batch, int64_t heads,
                int64_t group, int64_t seq_q, int64_t seq_kv, int64_t d,
                int64_t dv) {
  EXPECT_EQ(m.batch, batch);
  EXPECT_EQ(m.heads, heads);
  EXPECT_EQ(m.group, group);
  EXPECT_EQ(m.seq_q, seq_q);
  EXPECT_EQ(m.seq_kv, seq_kv);
  EXPECT_EQ(m.head_dim, d);
  EXPECT_EQ(m.head_dim_v, dv);
}

absl::Status Refused(const std::string& text) {
  Module module = Parse(text);
  return MatchAttention(*module.graphs()[0]).status();
}

TEST(AttentionMatchTest, Textbook) {
  Matched m(R"(
graph @g(%q: f32[2, 3, 5, 8], %k: f32[2, 3, 7, 8], %v: f32[2, 3, 7, 4],
         %mask: f32[2, 1, 1, 7]) -> f32[2, 3, 5, 4] {
  %s = matmul(%q, %k) {transpose_b = true}
  %c = constant() {value = 0.125} : f32[]
  %t = mul(%s, %c)
  %m = add(%t, %mask)
  %p = softmax(%m) {axis = -1}
  %o = matmul(%p, %v)
  return %o
}
)");
  ExpectDims(*m, 2, 3, 1, 5, 7, 8, 4);
  EXPECT_EQ(m->q.param->name(), "q");
  EXPECT_EQ(m->q.strides, (Strides{120, 40, 8, 1}));
  EXPECT_EQ(m->k.strides, (Strides{168, 56, 8, 1}));
  EXPECT_EQ(m->v.strides, (Strides{84, 28, 4, 1}));
  EXPECT_EQ(m->v.param->name(), "v");
  EXPECT_EQ(m->out_strides, (Strides{60, 20, 4, 1}));
  EXPECT_EQ(m->out_offset, 0);
  EXPECT_TRUE(m->q_ops.empty());
  EXPECT_EQ(Kinds(m->score_ops), (std::vector<std::string>{"mul", "add"}));
  EXPECT_TRUE(m->prob_ops.empty());
  EXPECT_TRUE(m->out_ops.empty());
  EXPECT_EQ(m->qk->result()->name(), "s");
  EXPECT_EQ(m->softmax->result()->name(), "p");
  EXPECT_EQ(m->pv->result()->name(), "o");
  EXPECT_EQ(m->result->name(), "o");
}

TEST(AttentionMatchTest, ExplicitTransposeOfKAndNoScale) {
  Matched m(R"(
graph @g(%q: f32[1, 2, 4, 8], %k: f32[1, 2, 4, 8], %v: f32[1, 2, 4, 8]) -> f32[1, 2, 4, 8] {
  %kt = transpose(%k) {perm = [0, 1, 3, 2]}
  %s = matmul(%q, %kt)
  %p = softmax(%s) {axis = 3}
  %o = matmul(%p, %v)
  return %o
}
)");
  ExpectDims(*m, 1, 2, 1, 4, 4, 8, 8);
  // Batch 1: the batch stride is never stepped, so it is 0.
  EXPECT_EQ(m->k.strides, (Strides{0, 32, 8, 1}));
  EXPECT_TRUE(m->score_ops.empty());
}

TEST(AttentionMatchTest, KAlreadyTransposed) {
  Matched m(R"(
graph @g(%q: f32[2, 2, 3, 8], %kt: f32[2, 2, 8, 5], %v: f32[2, 2, 5, 8]) -> f32[2, 2, 3, 8] {
  %s = matmul(%q, %kt)
  %c = constant() {value = 3.0} : f32[]
  %t = div(%s, %c)
  %p = softmax(%t)
  %o = matmul(%p, %v)
  return %o
}
)");
  ExpectDims(*m, 2, 2, 1, 3, 5, 8, 8);
  EXPECT_EQ(m->k.param->name(), "kt");
  EXPECT_EQ(m->k.strides, (Strides{80, 40, 1, 5}));
  EXPECT_EQ(Kinds(m->score_ops), std::vector<std::string>{"div"});
}

TEST(AttentionMatchTest, BshdInputsAndBshdOutput) {
  // Q, K, V as [B, S, H, D]; the output back to [B, S, H * D]; Q scaled
  // first, and casts around softmax and after P.V.
  Matched m(R"(
graph @g(%q: f32[2, 5, 3, 8], %k: f32[2, 7, 3, 8], %v: f32[2, 7, 3, 8]) -> bf16[2, 5, 24] {
  %qt = transpose(%q) {perm = [0, 2, 1, 3]}
  %c = constant() {value = 0.5} : f32[]
  %qs = mul(%c, %qt)
  %kt = transpose(%k) {perm = [0, 2, 3, 1]}
  %vt = transpose(%v) {perm = [0, 2, 1, 3]}
  %s = matmul(%qs, %kt)
  %sb = cast(%s) {to = bf16}
  %p = softmax(%sb) {axis = -1}
  %pf = cast(%p) {to = f32}
  %o = matmul(%pf, %vt)
  %ot = transpose(%o) {perm = [0, 2, 1, 3]}
  %or = reshape(%ot) {shape = [2, 5, 24]}
  %ob = cast(%or) {to = bf16}
  return %ob
}
)");
  ExpectDims(*m, 2, 3, 1, 5, 7, 8, 8);
  EXPECT_EQ(m->q.strides, (Strides{120, 8, 24, 1}));
  EXPECT_EQ(m->k.strides, (Strides{168, 8, 24, 1}));
  EXPECT_EQ(m->v.strides, (Strides{168, 8, 24, 1}));
  EXPECT_EQ(m->out_strides, (Strides{120, 8, 24, 1}));
  EXPECT_EQ(Kinds(m->q_ops), std::vector<std::string>{"mul"});
  EXPECT_EQ(Kinds(m->score_ops), std::vector<std::string>{"cast"});
  EXPECT_EQ(Kinds(m->prob_ops), std::vector<std::string>{"cast"});
  EXPECT_EQ(Kinds(m->out_ops), std::vector<std::string>{"cast"});
  EXPECT_EQ(m->result->name(), "ob");
}

TEST(AttentionMatchTest, FusedQkvProjection) {
  // One [B, S, 3 * H * D] projection seen as 3 * H heads of Q = K = V.
  Matched m(R"(
graph @g(%qkv: f32[2, 4, 48]) -> f32[2, 4, 48] {
  %r = reshape(%qkv) {shape = [2, 4, 3, 2, 8]}
  %t = transpose(%r) {perm = [0, 2, 3, 1, 4]}
  %h = reshape(%t) {shape = [2, 6, 4, 8]}
  %s = matmul(%h, %h) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %h)
  %ot = transpose(%o) {perm = [0, 2, 1, 3]}
  %y = reshape(%ot) {shape = [2, 4, 48]}
  return %y
}
)");
  ExpectDims(*m, 2, 6, 1, 4, 4, 8, 8);
  for (const StridedOperand* x : {&m->q, &m->k, &m->v}) {
    EXPECT_EQ(x->param->name(), "qkv");
    EXPECT_EQ(x->offset, 0);
    EXPECT_EQ(x->strides, (Strides{192, 8, 48, 1}));
  }
  EXPECT_EQ(m->out_strides, (Strides{192, 8, 48, 1}));
}

TEST(AttentionMatchTest, SelectAndMaxMasks) {
  Matched m(R"(
graph @g(%q: f32[1, 2, 6, 8], %k: f32[1, 2, 6, 8], %v: f32[1, 2, 6, 8],
         %causal: bool[6, 6], %fill: f32[1, 1, 6, 6]) -> f32[1, 2, 6, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %ninf = constant() {value = -1e30} : f32[]
  %a = select(%causal, %s, %ninf)
  %b = select(%causal, %fill, %a)
  %floor = constant() {value = -1e4} : f32[]
  %c = max(%b, %floor)
  %p = softmax(%c)
  %o = matmul(%p, %v)
  return %o
}
)");
  ExpectDims(*m, 1, 2, 1, 6, 6, 8, 8);
  EXPECT_EQ(Kinds(m->score_ops),
            (std::vector<std::string>{"select", "select", "max"}));
}

TEST(AttentionMatchTest, ScalesGivenAtRunTime) {
  // A runtime scalar and a per-head tensor: side operands like a mask.
  Matched m(R"(
graph @g(%q: f32[1, 2, 6, 8], %k: f32[1, 2, 6, 8], %v: f32[1, 2, 6, 8],
         %scale: f32[], %per_head: f32[1, 2, 1, 1]) -> f32[1, 2, 6, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %a = mul(%scale, %s)
  %b = div(%a, %per_head)
  %p = softmax(%b)
  %o = matmul(%p, %v)
  return %o
}
)");
  ExpectDims(*m, 1, 2, 1, 6, 6, 8, 8);
  EXPECT_EQ(Kinds(m->score_ops), (std::vector<std::string>{"mul", "div"}));
}

TEST(AttentionMatchTest, GroupedQueryByBatchBroadcast) {
  Matched m(R"(
graph @g(%q: f32[2, 2, 3, 5, 8], %k: f32[2, 2, 1, 5, 8], %v: f32[2, 2, 1, 5, 8]) -> f32[2, 2, 3, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
}
)");
  ExpectDims(*m, 2, 6, 3, 5, 5, 8, 8);
  EXPECT_EQ(m->q.strides, (Strides{240, 40, 8, 1}));
  EXPECT_EQ(m->k.strides, (Strides{80, 40, 8, 1}));
  EXPECT_EQ(m->v.strides, (Strides{80, 40, 8, 1}));
}

TEST(AttentionMatchTest, GroupedQueryByReshape) {
  Matched m(R"(
graph @g(%q: f32[2, 6, 5, 8], %k: f32[2, 2, 5, 8], %v: f32[2, 2, 5, 8]) -> f32[2, 6, 5, 8] {
  %qg = reshape(%q) {shape = [2, 2, 3, 5, 8]}
  %kg = reshape(%k) {shape = [2, 2, 1, 5, 8]}
  %vg = reshape(%v) {shape = [2, 2, 1, 5, 8]}
  %s = matmul(%qg, %kg) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %vg)
  %y = reshape(%o) {shape = [2, 6, 5, 8]}
  return %y
}
)");
  ExpectDims(*m, 2, 6, 3, 5, 5, 8, 8);
  EXPECT_EQ(m->k.strides, (Strides{80, 40, 8, 1}));
  EXPECT_EQ(m->out_strides, (Strides{240, 40, 8, 1}));
}

TEST(AttentionMatchTest, MultiQuery) {
  Matched m(R"(
graph @g(%q: f32[2, 4, 5, 8], %k: f32[2, 1, 5, 8], %v: f32[5, 8]) -> f32[2, 4, 5, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
}
)");
  ExpectDims(*m, 2, 4, 4, 5, 5, 8, 8);
  EXPECT_EQ(m->k.strides, (Strides{40, 0, 8, 1}));
  EXPECT_EQ(m->v.strides, (Strides{0, 0, 8, 1}));
}

TEST(AttentionMatchTest, KSharedByAllHeadsButVNot) {
  // K broadcast over the heads while V is not: no query group, but K's head
  // stride is 0.
  Matched m(R"(
graph @g(%q: f32[2, 3, 4, 8], %k: f32[2, 1, 4, 8], %v: f32[2, 3, 4, 8]) -> f32[2, 3, 4, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
}
)");
  ExpectDims(*m, 2, 3, 1, 4, 4, 8, 8);
  EXPECT_EQ(m->k.strides, (Strides{32, 0, 8, 1}));
  EXPECT_EQ(m->v.strides, (Strides{96, 32, 8, 1}));
}

TEST(AttentionMatchTest, ThreeDimensional) {
  Matched m(R"(
graph @g(%q: f32[6, 1, 8], %k: f32[6, 9, 8], %v: f32[6, 9, 8]) -> f32[6, 1, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
}
)");
  ExpectDims(*m, 6, 1, 1, 1, 9, 8, 8);
  EXPECT_EQ(m->k.strides[0], 72);
}

TEST(AttentionMatchTest, RefusesWhatDoesNotFit) {
  // An op other than an elementwise one before softmax.
  absl::Status s = Refused(R"(
graph @g(%q: f32[1, 2, 4, 8], %k: f32[1, 2, 4, 8], %v: f32[1, 2, 4, 8]) -> f32[1, 2, 4, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %e = transpose(%s) {perm = [0, 1, 3, 2]}
  %p = softmax(%e)
  %o = matmul(%p, %v)
  return %o
}
)");
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(s.message().find("transpose"), std::string::npos) << s;
  // softmax over another axis.
  EXPECT_TRUE(absl::IsUnimplemented(Refused(R"(
graph @g(%q: f32[1, 2, 4, 8], %k: f32[1, 2, 4, 8], %v: f32[1, 2, 4, 8]) -> f32[1, 2, 4, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s) {axis = 2}
  %o = matmul(%p, %v)
  return %o
}
)")));
  // A score op whose other operand is computed (the scores squared), and
  // the scores read twice.
  EXPECT_TRUE(absl::IsUnimplemented(Refused(R"(
graph @g(%q: f32[1, 2, 4, 8], %k: f32[1, 2, 4, 8], %v: f32[1, 2, 4, 8]) -> f32[1, 2, 4, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %t = mul(%s, %s)
  %p = softmax(%t)
  %o = matmul(%p, %v)
  return %o
}
)")));
  EXPECT_TRUE(absl::IsUnimplemented(Refused(R"(
graph @g(%q: f32[1, 2, 4, 8], %k: f32[1, 2, 4, 8], %v: f32[1, 2, 4, 8]) -> f32[1, 2, 4, 4] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  %x = add(%s, %p)
  return %x
}
)")));
  // An extra op the block does not use; no softmax at all.
  EXPECT_TRUE(absl::IsUnimplemented(Refused(R"(
graph @g(%q: f32[1, 2, 4, 8], %k: f32[1, 2, 4, 8], %v: f32[1, 2, 4, 8]) -> f32[1, 2, 4, 8] {
  %s = matmul(%q, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  %dead = exp(%q)
  return %o
}
)")));
  EXPECT_TRUE(absl::IsUnimplemented(Refused(R"(
graph @g(%q: f32[4, 8], %k: f32[8, 4]) -> f32[4, 4] {
  %s = matmul(%q, %k)
  return %s
}
)")));
  // A reshape that strides cannot express (merging the heads and the
  // sequence of a transposed Q).
  s = Refused(R"(
graph @g(%q: f32[1, 4, 2, 8], %k: f32[1, 8, 8], %v: f32[1, 8, 8]) -> f32[1, 8, 8] {
  %qt = transpose(%q) {perm = [0, 2, 1, 3]}
  %qr = reshape(%qt) {shape = [1, 8, 8]}
  %s = matmul(%qr, %k) {transpose_b = true}
  %p = softmax(%s)
  %o = matmul(%p, %v)
  return %o
}
)");
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  EXPECT_NE(s.message().find("strides"), std::string::npos) << s;
}

}  // namespace
}  // namespace hgc
