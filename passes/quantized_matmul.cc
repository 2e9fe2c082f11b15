#include "passes/quantized_matmul.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/const_only.h"
#include "analysis/graph_utils.h"
#include "ir/builder.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// A dequantize's parameters, one entry per channel along `axis` or a single
// entry for the whole tensor.
struct QuantParams {
  std::vector<double> scales;
  std::vector<int64_t> zero_points;
  int64_t axis = -1;  // normalized; -1 when per tensor
};

std::vector<double> NumberOrList(const Attribute& a) {
  return a.is_list() ? a.as_number_list() : std::vector<double>{a.as_number()};
}

// Collapses a list whose entries are all equal to one entry.
template <typename T>
void CollapseEqual(std::vector<T>& v) {
  for (const T& x : v) {
    if (x != v.front()) return;
  }
  v.resize(1);
}

// A matmul operand that is a dequantized u8 / s8 tensor `q`, perhaps
// through a transpose of its last two dims (`swapped`: the matmul reads q
// with its transpose flag flipped).
struct Dequantized {
  Value* q;
  QuantParams params;
  bool swapped = false;
};

// Whether `op` is a transpose that swaps the last two dims only.
bool SwapsLastTwo(const Op& op) {
  if (op.kind_id() != OpKind::kTranspose) return false;
  const std::vector<int64_t> perm = TransposePermOf(op);
  const int64_t rank = static_cast<int64_t>(perm.size());
  if (rank < 2) return false;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t expected = d == rank - 2   ? rank - 1
                             : d == rank - 1 ? rank - 2
                                             : d;
    if (perm[d] != expected) return false;
  }
  return true;
}

// `v` as a dequantized u8 or s8 tensor, with the dequantize's parameters;
// nullopt otherwise.
std::optional<Dequantized> DequantizedInteger(Value* v) {
  bool swapped = false;
  if (v->defining_op() != nullptr && SwapsLastTwo(*v->defining_op())) {
    v = v->defining_op()->operand(0);
    swapped = true;
  }
  Op* dq = v->defining_op();
  if (dq == nullptr || dq->kind_id() != OpKind::kDequantize)
    return std::nullopt;
  Value* q = dq->operand(0);
  const DType dtype = q->type().dtype;
  if (dtype != DType::kU8 && dtype != DType::kS8) return std::nullopt;
  QuantParams p;
  p.scales = NumberOrList(*dq->FindAttr("scale"));
  const Attribute* zp = dq->FindAttr("zero_point");
  for (double z : zp ? NumberOrList(*zp) : std::vector<double>{0}) {
    p.zero_points.push_back(static_cast<int64_t>(z));
  }
  CollapseEqual(p.scales);
  CollapseEqual(p.zero_points);
  if (p.scales.size() > 1 || p.zero_points.size() > 1) {
    int64_t axis = dq->FindAttr("axis")->as_int();
    p.axis = axis < 0 ? axis + q->type().rank() : axis;
  }
  return Dequantized{q, std::move(p), swapped};
}

// The largest |x - zp| over the values of `dtype` and the zero points.
int64_t MaxCentered(DType dtype, const std::vector<int64_t>& zero_points) {
  const int64_t lo = dtype == DType::kU8 ? 0 : -128;
  const int64_t hi = dtype == DType::kU8 ? 255 : 127;
  int64_t m = 0;
  for (int64_t z : zero_points) {
    m = std::max({m, std::abs(lo - z), std::abs(hi - z)});
  }
  return m;
}

// `v` as the s32 value that wraps to it.
int64_t WrapS32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v));
}

// f32(sa) * f32(sb) when it rounds to a normal f32 (the dequantize rounds
// its scale to f32 and refuses 0 and inf); nullopt otherwise.
std::optional<double> CombinedScale(double sa, double sb) {
  const double s = static_cast<double>(static_cast<float>(sa)) *
                   static_cast<double>(static_cast<float>(sb));
  if (!(s >= std::numeric_limits<float>::min()) ||
      !(s <= std::numeric_limits<float>::max())) {
    return std::nullopt;
  }
  return s;
}

// Whether the f32 matmul of the dequantized values stays finite: each
// dequantized element, each product and every partial sum below FLT_MAX.
// Past it the f32 chain gives inf or NaN (inf - inf) where the exact
// integer sum, scaled once, is finite, so the rewrite would change the
// result rather than its rounding.
bool StaysFinite(double sa, int64_t max_a, double sb, int64_t max_b,
                 int64_t k) {
  const double fa = static_cast<float>(sa) * static_cast<double>(max_a);
  const double fb = static_cast<float>(sb) * static_cast<double>(max_b);
  const double limit = std::numeric_limits<float>::max();
  return fa <= limit && fb <= limit &&
         fa * fb * static_cast<double>(std::max<int64_t>(k, 1)) <= limit / 2;
}

// What one rewrite needs, checked before anything is built.
struct Plan {
  Value* a;  // u8 / s8
  Value* b;  // u8 / s8
  int64_t za;
  std::vector<int64_t> zr;     // b8's zero points: one, or one per channel
  std::vector<double> scales;  // empty: the result stays s32
  bool transpose_a, transpose_b;
  int64_t k;
};

bool AttrTrue(const Op& op, absl::string_view name) {
  const Attribute* a = op.FindAttr(name);
  return a != nullptr && a->as_bool();
}

// A matmul written on the integers with a u8 B (u8 x u8, s8 x u8), which
// no kernel computes: a * b = a * (b - 128) + 128 * rowsum(a), the same
// s32 bits (all of it wraps alike).
std::optional<Plan> PlanIntegerRewrite(const Op& matmul) {
  Value* a = matmul.operand(0);
  Value* b = matmul.operand(1);
  const DType ad = a->type().dtype;
  if (b->type().dtype != DType::kU8 || (ad != DType::kU8 && ad != DType::kS8)) {
    return std::nullopt;
  }
  Plan plan;
  plan.a = a;
  plan.b = b;
  plan.za = 0;
  plan.zr = {-128};
  plan.transpose_a = AttrTrue(matmul, "transpose_a");
  plan.transpose_b = AttrTrue(matmul, "transpose_b");
  const Shape& a_shape = a->type().shape;
  plan.k = a_shape[a_shape.size() - (plan.transpose_a ? 2 : 1)];
  return plan;
}

std::optional<Plan> PlanRewrite(const Op& matmul) {
  if (matmul.result()->type().dtype == DType::kS32) {
    return PlanIntegerRewrite(matmul);
  }
  if (matmul.result()->type().dtype != DType::kF32) return std::nullopt;
  auto a = DequantizedInteger(matmul.operand(0));
  auto b = DequantizedInteger(matmul.operand(1));
  if (!a || !b) return std::nullopt;
  const QuantParams& pa = a->params;
  const QuantParams& pb = b->params;
  // A's scale and zero point would vary along K (or per row: left alone).
  if (pa.scales.size() > 1 || pa.zero_points.size() > 1) return std::nullopt;
  Plan plan;
  plan.a = a->q;
  plan.b = b->q;
  plan.transpose_a = AttrTrue(matmul, "transpose_a") != a->swapped;
  plan.transpose_b = AttrTrue(matmul, "transpose_b") != b->swapped;
  const Shape& a_shape = plan.a->type().shape;
  const int64_t b_rank = plan.b->type().rank();
  plan.k = a_shape[a_shape.size() - (plan.transpose_a ? 2 : 1)];
  if (pb.axis >= 0 && pb.axis != b_rank - (plan.transpose_b ? 2 : 1)) {
    return std::nullopt;  // per channel along K or a batch dim
  }
  // K * max|a - za| * max|b - zb| <= 2^31 - 1, divided out (K may be
  // near 2^60).
  const int64_t max_a = MaxCentered(plan.a->type().dtype, pa.zero_points);
  const int64_t max_b = MaxCentered(plan.b->type().dtype, pb.zero_points);
  const int64_t product_bound = max_a * max_b;
  if (product_bound > 0 &&
      plan.k > std::numeric_limits<int32_t>::max() / product_bound) {
    return std::nullopt;
  }
  plan.za = pa.zero_points[0];
  const int64_t shift = plan.b->type().dtype == DType::kU8 ? 128 : 0;
  for (int64_t z : pb.zero_points) plan.zr.push_back(z - shift);
  for (double sb : pb.scales) {
    std::optional<double> s = CombinedScale(pa.scales[0], sb);
    if (!s || !StaysFinite(pa.scales[0], max_a, sb, max_b, plan.k)) {
      return std::nullopt;
    }
    plan.scales.push_back(*s);
  }
  return plan;
}

bool AllZero(const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x != 0) return false;
  }
  return true;
}

// Builds the rewrites of one graph, each before its matmul; a u8 operand
// several matmuls read gets one s8 form, an A they read one set of row
// sums, a B one set of column sums.
class Rewriter {
 public:
  explicit Rewriter(Graph& graph)
      : graph_(graph), names_(graph), const_only_(graph) {}

  // Names the values the rewrites made without one after their op's kind
  // ("cast", "cast_2", ...): --emit=loops names buffers by value.
  void NameTheRest() {
    for (const auto& op : graph_.ops()) {
      if (op->result()->name().empty()) {
        op->result()->set_name(names_.Make(op->kind()));
      }
    }
  }

  absl::Status Rewrite(Op* matmul, const Plan& plan) {
    Builder b(&graph_, matmul);
    Value* old = matmul->result();
    HGC_ASSIGN_OR_RETURN(Value * b8, AsS8(b, plan.b));
    AttrMap attrs;
    if (plan.transpose_a) attrs["transpose_a"] = Attribute::Bool(true);
    if (plan.transpose_b) attrs["transpose_b"] = Attribute::Bool(true);
    HGC_ASSIGN_OR_RETURN(
        Value * acc,
        b.Create("matmul", {plan.a, b8}, std::move(attrs), {}, matmul->loc()));
    acc->set_name(names_.Make(absl::StrCat("s32_", old->name())));
    if (plan.za != 0) {
      // - za * colsum(b8), + K * za * zr when zr != 0.
      HGC_ASSIGN_OR_RETURN(
          Value * sums,
          ColumnSums(b, b8, plan.transpose_b, const_only_.IsConstOnly(plan.b)));
      HGC_ASSIGN_OR_RETURN(Value * neg_za,
                           b.Splat(-plan.za, TensorType(DType::kS32)));
      HGC_ASSIGN_OR_RETURN(Value * term, b.Binary("mul", sums, neg_za));
      if (!AllZero(plan.zr)) {
        std::vector<int64_t> k_za_zr;
        for (int64_t z : plan.zr)
          k_za_zr.push_back(WrapS32(plan.k * plan.za * z));
        HGC_ASSIGN_OR_RETURN(Value * c, PerChannel(b, k_za_zr));
        HGC_ASSIGN_OR_RETURN(term, b.Binary("add", term, c));
      }
      HGC_ASSIGN_OR_RETURN(acc, b.Binary("add", acc, term));
      term->set_name(names_.Make(absl::StrCat("zp_", b8->name())));
    }
    if (!AllZero(plan.zr)) {
      // - zr * rowsum(a), per call when a is not constant: the row sums as
      // a times a column of ones, on the same int8 kernels (one pass over
      // a, where widening it to s32 for a reduction took two).
      HGC_ASSIGN_OR_RETURN(Value * sums, RowSums(b, plan));
      std::vector<int64_t> neg_zr;
      for (int64_t z : plan.zr) neg_zr.push_back(-z);
      HGC_ASSIGN_OR_RETURN(Value * c, PerChannel(b, neg_zr));
      HGC_ASSIGN_OR_RETURN(Value * term, b.Binary("mul", sums, c));
      term->set_name(names_.Make(absl::StrCat("zp_", plan.a->name())));
      HGC_ASSIGN_OR_RETURN(acc, b.Binary("add", acc, term));
    }
    if (plan.scales.empty()) {
      graph_.ReplaceAllUsesWith(old, TakeName(acc, old));
      return absl::OkStatus();
    }
    AttrMap dq;
    if (plan.scales.size() == 1) {
      dq["scale"] = Attribute::Float(plan.scales[0]);
    } else {
      dq["scale"] = Attribute::FloatList(plan.scales);
      dq["axis"] = Attribute::Int(-1);
    }
    HGC_ASSIGN_OR_RETURN(Value * y, b.Create("dequantize", {acc}, std::move(dq),
                                             {}, matmul->loc()));
    graph_.ReplaceAllUsesWith(old, TakeName(y, old));
    return absl::OkStatus();
  }

 private:
  // `x` (u8 or s8) as s8: itself, or x - 128 computed in s32.
  absl::StatusOr<Value*> AsS8(Builder& b, Value* x) {
    if (x->type().dtype == DType::kS8) return x;
    Value*& s8 = s8_[x];
    if (s8 != nullptr) return s8;
    HGC_ASSIGN_OR_RETURN(Value * wide, Cast(b, x, DType::kS32));
    HGC_ASSIGN_OR_RETURN(Value * c128, b.Splat(128, TensorType(DType::kS32)));
    HGC_ASSIGN_OR_RETURN(Value * shifted, b.Binary("sub", wide, c128));
    HGC_ASSIGN_OR_RETURN(s8, Cast(b, shifted, DType::kS8));
    s8->set_name(names_.Make(absl::StrCat("s8_", x->name())));
    return s8;
  }

  // b8's s32 sums over K as a [..., 1, N] row, which broadcasts against
  // the [..., M, N] product. A constant b8 is widened and reduced (a [...,
  // N, K] one over its last dim, then the two swapped), once, not per call;
  // one known only at run time is a row of ones times b8 on the int8
  // kernels (b8 packed for them as for the product), where widening it for
  // a reduction took a pass to write four times its bytes and a serial one
  // to read them back. Once per (b8, transpose_b), as the row sums are
  // once per a.
  absl::StatusOr<Value*> ColumnSums(Builder& b, Value* b8, bool transpose_b,
                                    bool constant_b) {
    Value*& sums = column_sums_[{b8, transpose_b}];
    if (sums == nullptr) {
      HGC_ASSIGN_OR_RETURN(sums,
                           BuildColumnSums(b, b8, transpose_b, constant_b));
    }
    return sums;
  }

  absl::StatusOr<Value*> BuildColumnSums(Builder& b, Value* b8,
                                         bool transpose_b, bool constant_b) {
    const int64_t rank = b8->type().rank();
    if (!constant_b) {
      const int64_t k = b8->type().shape[transpose_b ? rank - 1 : rank - 2];
      HGC_ASSIGN_OR_RETURN(Value * ones,
                           b.Splat(1, TensorType(DType::kU8, {1, k})));
      AttrMap attrs;
      if (transpose_b) attrs["transpose_b"] = Attribute::Bool(true);
      HGC_ASSIGN_OR_RETURN(Value * sums,
                           b.Create("matmul", {ones, b8}, std::move(attrs)));
      sums->set_name(names_.Make(absl::StrCat("sums_", b8->name())));
      return sums;
    }
    HGC_ASSIGN_OR_RETURN(Value * wide, Cast(b, b8, DType::kS32));
    HGC_ASSIGN_OR_RETURN(
        Value * sums,
        b.Create(
            "reduce_sum", {wide},
            {{"axes", Attribute::IntList({transpose_b ? rank - 1 : rank - 2})},
             {"keep_dims", Attribute::Bool(true)}}));
    sums->set_name(names_.Make(absl::StrCat("sums_", b8->name())));
    if (!transpose_b) return sums;
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d) perm.push_back(d);
    std::swap(perm[rank - 2], perm[rank - 1]);
    return b.Create("transpose", {sums}, {{"perm", Attribute::IntList(perm)}});
  }

  // a's row sums, [..., M, 1] s32: matmul(a, ones s8[K, 1]).
  absl::StatusOr<Value*> RowSums(Builder& b, const Plan& plan) {
    Value*& sums = row_sums_[{plan.a, plan.transpose_a}];
    if (sums != nullptr) return sums;
    HGC_ASSIGN_OR_RETURN(Value * ones,
                         b.Splat(1, TensorType(DType::kS8, {plan.k, 1})));
    AttrMap attrs;
    if (plan.transpose_a) attrs["transpose_a"] = Attribute::Bool(true);
    HGC_ASSIGN_OR_RETURN(sums,
                         b.Create("matmul", {plan.a, ones}, std::move(attrs)));
    sums->set_name(names_.Make(absl::StrCat("sums_", plan.a->name())));
    return sums;
  }

  absl::StatusOr<Value*> Cast(Builder& b, Value* x, DType to) {
    return b.Create("cast", {x}, {{"to", Attribute::Type(to)}});
  }

  // An s32 constant: a scalar, or one value per output channel [N].
  absl::StatusOr<Value*> PerChannel(Builder& b, const std::vector<int64_t>& v) {
    if (v.size() == 1) return b.Splat(v[0], TensorType(DType::kS32));
    return b.Create(
        "constant", {}, {{"value", Attribute::IntList(v)}},
        {TensorType(DType::kS32, {static_cast<int64_t>(v.size())})});
  }

  Graph& graph_;
  FreshNames names_;
  absl::flat_hash_map<Value*, Value*> s8_;
  absl::flat_hash_map<std::pair<Value*, bool>, Value*> row_sums_;
  absl::flat_hash_map<std::pair<Value*, bool>, Value*> column_sums_;
  // Of the graph as it was before the rewrites (plan operands are its
  // values).
  ConstOnlyAnalysis const_only_;
};

}  // namespace

absl::StatusOr<int> RewriteQuantizedMatmuls(Module& module) {
  int rewritten = 0;
  for (Graph* graph : TopLevelGraphs(module)) {
    Rewriter rewriter(*graph);
    bool changed = false;
    for (Op* op : graph->OpsSnapshot()) {
      if (op->kind_id() != OpKind::kMatmul) continue;
      std::optional<Plan> plan = PlanRewrite(*op);
      if (!plan) continue;
      HGC_RETURN_IF_ERROR(rewriter.Rewrite(op, *plan));
      graph->Erase(op);
      changed = true;
      ++rewritten;
    }
    if (changed) {
      EraseDeadOps(*graph);
      rewriter.NameTheRest();
    }
  }
  return rewritten;
}

}  // namespace hgc
