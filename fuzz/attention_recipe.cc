// The Generator's Attention recipe (fuzz/generator_blocks.h) and its parts:
// an attention block with the shapes, layouts, scalings, masks and score
// ops exporters write, drawn in one fixed order. GraphKind's comment
// (fuzz/graph_generator.h) says what it makes.
#include <cmath>
#include <cstdint>
#include <vector>

#include "fuzz/generator_blocks.h"

namespace hgc {
namespace generator_internal {

// One more score op as exports write them: a scale given at run time (a
// scalar input or a per-head tensor), tanh soft-capping, a penalty
// subtracted, or a min cap.
Value* Generator::ExtraScoreOp(Value* s, int64_t b, int64_t h, int64_t sq,
                               int64_t skv) {
  const DType sd = s->type().dtype;
  auto scalar = [&](double value) {
    return Op("constant", {}, {{"value", Attribute::Float(value)}},
              {TensorType(sd)});
  };
  switch (rng_.Int(0, 3)) {
    case 0: {
      Value* scale = rng_.Chance(0.5) ? Input(TensorType(sd))
                                      : Input(TensorType(sd, {1, h, 1, 1}));
      return Op(rng_.Chance(0.5) ? "mul" : "div", {s, scale});
    }
    case 1: {
      Value* cap = scalar(rng_.Chance(0.5) ? 50.0 : 1.5);
      Value* u = cap == nullptr ? nullptr : Op("div", {s, cap});
      Value* t = u == nullptr ? nullptr : Op("tanh", {u});
      return t == nullptr ? nullptr : Op("mul", {t, cap});
    }
    case 2: {
      Value* penalty = Input(TensorType(sd, {b, 1, sq, skv}));
      return Op("sub", {s, penalty});
    }
    default: {
      Value* cap = scalar(0.5);
      return cap == nullptr ? nullptr : Op("min", {s, cap});
    }
  }
}

AttentionShape Generator::RandomAttentionShape() {
  static const std::vector<int64_t> kSeq = {1, 3, 7, 16, 33, 64};
  static const std::vector<int64_t> kHead = {8, 16, 32, 64, 24};
  AttentionShape a;
  const int64_t b = rng_.Int(1, 2), h = rng_.Int(1, 4);
  a.b = b;
  a.h = h;
  a.sq = rng_.Pick(kSeq);
  // Now and then more keys than one key block takes (the online softmax).
  a.skv = rng_.Chance(0.05) ? 700 : rng_.Chance(0.6) ? a.sq : rng_.Pick(kSeq);
  a.dh = rng_.Pick(kHead);
  a.dv = rng_.Chance(0.8) ? a.dh : rng_.Pick(kHead);
  a.d = rng_.Chance(0.7)    ? DType::kF32
        : rng_.Chance(0.75) ? DType::kBF16
                            : DType::kF16;
  a.bshd = rng_.Chance(0.25);  // inputs as [B, S, H, D]
  a.mqa = rng_.Chance(0.15);   // one K/V head for all
  // Grouped-query heads by a reshape: pairs of Q heads stacked along S
  // onto one K/V head ([B, H / 2, 2 S, D]), the scores in that shape.
  a.gqa = !a.mqa && h % 2 == 0 && rng_.Chance(0.25);
  a.kvh = a.mqa ? 1 : a.gqa ? h / 2 : h;
  a.score_heads = a.gqa ? a.kvh : h;
  a.score_rows = a.gqa ? 2 * a.sq : a.sq;
  return a;
}

Value* Generator::AttentionInput(const AttentionShape& a, int64_t heads,
                                 int64_t seq, int64_t dim) {
  if (!a.bshd) return Input(TensorType(a.d, {a.b, heads, seq, dim}));
  Value* v = Input(TensorType(a.d, {a.b, seq, heads, dim}));
  return Op("transpose", {v}, {{"perm", Attribute::IntList({0, 2, 1, 3})}});
}

Value* Generator::AttentionQuery(const AttentionShape& a, bool* q_transposed) {
  // Q stored [D, S] (read with transpose_a) now and then.
  *q_transposed = !a.gqa && rng_.Chance(0.15);
  Value* q = *q_transposed ? Input(TensorType(a.d, {a.b, a.h, a.dh, a.sq}))
                           : AttentionInput(a, a.h, a.sq, a.dh);
  if (a.gqa && q != nullptr) {
    q = Op("reshape", {q},
           {{"shape", Attribute::IntList({a.b, a.kvh, 2 * a.sq, a.dh})}});
  }
  return q;
}

Value* Generator::ScaleQuery(Value* q, DType d, double scale) {
  if (rng_.Chance(0.2)) {
    // Q scaled by a literal or by a scalar given at run time.
    Value* c = rng_.Chance(0.3)
                   ? Input(TensorType(d))
                   : Op("constant", {}, {{"value", Attribute::Float(scale)}},
                        {TensorType(d)});
    if (c == nullptr) return nullptr;
    q = Op(rng_.Chance(0.8) ? "mul" : "div", {q, c});
    if (q == nullptr) return nullptr;
  }
  return q;
}

Value* Generator::MaybeScaleK(Value* k, DType d, double scale) {
  // K (or Kᵀ) scaled now and then: by sqrt(scale) as torch's SDPA export
  // writes it (attention-k-scale moves it onto the scores), or by a
  // runtime scalar or a literal above 1 (which stay where they are).
  if (k == nullptr || !rng_.Chance(0.2)) return k;
  const int form = static_cast<int>(rng_.Int(0, 3));
  Value* c = form == 2
                 ? Input(TensorType(d))
                 : Op("constant", {},
                      {{"value",
                        Attribute::Float(form == 3 ? 2.0 : std::sqrt(scale))}},
                      {TensorType(d)});
  if (c == nullptr) return nullptr;
  return rng_.Chance(0.5) ? Op("mul", {k, c}) : Op("mul", {c, k});
}

Value* Generator::AttentionScores(const AttentionShape& a, Value* q,
                                  bool q_transposed, double scale) {
  AttrMap qk_attrs;
  if (q_transposed) qk_attrs["transpose_a"] = Attribute::Bool(true);
  const int kform = static_cast<int>(rng_.Int(0, 2));
  if (kform == 0) {
    Value* k = MaybeScaleK(AttentionInput(a, a.kvh, a.skv, a.dh), a.d, scale);
    qk_attrs["transpose_b"] = Attribute::Bool(true);
    return Op("matmul", {q, k}, qk_attrs);
  }
  if (kform == 1) {
    Value* k = AttentionInput(a, a.kvh, a.skv, a.dh);
    Value* kt = MaybeScaleK(
        Op("transpose", {k}, {{"perm", Attribute::IntList({0, 1, 3, 2})}}), a.d,
        scale);
    return Op("matmul", {q, kt}, qk_attrs);
  }
  Value* kt = Input(TensorType(a.d, {a.b, a.kvh, a.dh, a.skv}));
  return Op("matmul", {q, kt}, qk_attrs);
}

Value* Generator::ScaleScores(Value* s, DType sd, int64_t dh, double scale) {
  if (rng_.Chance(0.7)) {
    Value* c = Op(
        "constant", {},
        {{"value", Attribute::Float(rng_.Chance(0.5) ? scale : std::sqrt(dh))}},
        {TensorType(sd)});
    if (c == nullptr) return nullptr;
    s = Op(rng_.Chance(0.7) ? "mul" : "div", {s, c});
    if (s == nullptr) return nullptr;
  }
  return s;
}

Value* Generator::MaskScores(Value* s, const AttentionShape& a, DType sd) {
  switch (rng_.Int(0, 4)) {
    case 0:
      return s;
    case 1:
    case 2: {
      Shape ms = rng_.Chance(0.6) ? Shape{a.b, 1, 1, a.skv}
                                  : Shape{1, 1, a.score_rows, a.skv};
      Value* mask = rng_.Chance(0.7) ? Input(TensorType(sd, ms))
                                     : Const(TensorType(sd, ms));
      return Op("add", {s, mask});
    }
    case 3: {
      Value* cond =
          Input(TensorType(DType::kBool, {1, 1, a.score_rows, a.skv}));
      Value* neg =
          Op("constant", {},
             {{"value", Attribute::Float(rng_.Chance(0.5) ? -1e9 : -3.0e38)}},
             {TensorType(sd)});
      if (neg == nullptr) return nullptr;
      return Op("select", {cond, s, neg});
    }
    default: {
      Value* floor = Input(TensorType(sd, {a.b, 1, 1, a.skv}));
      return Op("max", {s, floor});
    }
  }
}

Value* Generator::ArrangeAttentionOutput(Value* o, const AttentionShape& a) {
  if (rng_.Chance(0.1)) {
    // O as [B, H, D, S]: rows that are not contiguous.
    Value* t =
        Op("transpose", {o}, {{"perm", Attribute::IntList({0, 1, 3, 2})}});
    if (t != nullptr) o = t;
  } else if (rng_.Chance(0.5)) {
    Value* t =
        Op("transpose", {o}, {{"perm", Attribute::IntList({0, 2, 1, 3})}});
    if (t == nullptr) return o;
    o = t;
    if (rng_.Chance(0.7)) {
      Value* r = Op("reshape", {o},
                    {{"shape", Attribute::IntList({a.b, a.sq, a.h * a.dv})}});
      if (r != nullptr) o = r;
    }
  }
  if (a.d != DType::kF32 && rng_.Chance(0.3)) {
    Value* c = Op("cast", {o}, {{"to", Attribute::Type(DType::kF32)}});
    if (c != nullptr) o = c;
  }
  return o;
}

Value* Generator::Attention() {
  const AttentionShape a = RandomAttentionShape();
  const DType d = a.d;
  bool q_transposed = false;
  Value* q = AttentionQuery(a, &q_transposed);
  // V stored [D, S] (read with transpose_b) now and then.
  const bool v_transposed = rng_.Chance(0.1);
  Value* v = v_transposed ? Input(TensorType(d, {a.b, a.kvh, a.dv, a.skv}))
                          : AttentionInput(a, a.kvh, a.skv, a.dv);
  if (q == nullptr || v == nullptr) return nullptr;
  const double scale = 1.0 / std::sqrt(static_cast<double>(a.dh));
  q = ScaleQuery(q, d, scale);
  if (q == nullptr) return nullptr;
  Value* s = AttentionScores(a, q, q_transposed, scale);
  if (s == nullptr) return nullptr;
  if (d != DType::kF32 && rng_.Chance(0.5)) {
    s = Op("cast", {s}, {{"to", Attribute::Type(DType::kF32)}});
    if (s == nullptr) return nullptr;
  }
  const DType sd = s->type().dtype;
  s = ScaleScores(s, sd, a.dh, scale);
  if (s == nullptr) return nullptr;
  if (rng_.Chance(0.3)) {
    s = ExtraScoreOp(s, a.b, a.score_heads, a.score_rows, a.skv);
    if (s == nullptr) return nullptr;
  }
  s = MaskScores(s, a, sd);
  if (s == nullptr) return nullptr;
  Value* p = rng_.Chance(0.5) ? Softmax(s, -1, false) : Softmax(s, 3);
  if (p == nullptr) return nullptr;
  if (p->type().dtype != d) {
    p = Op("cast", {p}, {{"to", Attribute::Type(d)}});
    if (p == nullptr) return nullptr;
  }
  Value* o = Op("matmul", {p, v},
                v_transposed ? AttrMap{{"transpose_b", Attribute::Bool(true)}}
                             : AttrMap{});
  if (o == nullptr) return nullptr;
  if (a.gqa) {
    o = Op("reshape", {o},
           {{"shape", Attribute::IntList({a.b, a.h, a.sq, a.dv})}});
    if (o == nullptr) return nullptr;
  }
  return ArrangeAttentionOutput(o, a);
}

}  // namespace generator_internal
}  // namespace hgc
