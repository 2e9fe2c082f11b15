// The dims and strides a match describes, checked against the views the
// body's reshapes and transposes give; attention_attrs_check.cc walks the
// chains those views come from.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/attention_attrs_internal.h"
#include "analysis/op_predicates.h"

namespace hgc {
namespace attention_attrs {
namespace {

using strided_view::View;

// The products of r's dims from each index to the end (suffix[r.size()]
// is 1).
std::vector<int64_t> SuffixProducts(const std::vector<int64_t>& r) {
  std::vector<int64_t> suffix(r.size() + 1, 1);
  for (size_t i = r.size(); i-- > 0;) suffix[i] = suffix[i + 1] * r[i];
  return suffix;
}

// The first index from `from` whose trailing batch dims hold `extent`
// elements.
std::optional<size_t> SplitAt(const std::vector<int64_t>& suffix,
                              int64_t extent, size_t from) {
  for (size_t t = from; t < suffix.size(); ++t) {
    if (suffix[t] == extent) return t;
  }
  return std::nullopt;
}

// How the logical (batch, head) strides of one operand must step over the
// scores' batch dims r: dims before `p` make the batch, dims [p, g) the
// head index (the kv head for K and V), dims from g the query group (over
// which K and V are shared: stride 0).
struct BatchSplit {
  std::vector<int64_t> r, suffix;
  size_t p = 0, g = 0;
};

// Checks `st` (an operand's strides over r) against the described batch
// and head strides; a logical extent of 1 has stride 0.
absl::Status CheckBatchStrides(const char* name, const BatchSplit& split,
                               const std::vector<int64_t>& st, int64_t sb,
                               int64_t sh) {
  const std::vector<int64_t>& suffix = split.suffix;
  if (suffix[0] == suffix[split.p] && sb != 0) {
    return Bad(absl::StrCat(name, ": a batch stride over one batch"));
  }
  if (suffix[split.p] == suffix[split.g] && sh != 0) {
    return Bad(absl::StrCat(name, ": a head stride over one head"));
  }
  for (size_t i = 0; i < split.r.size(); ++i) {
    if (split.r[i] == 1) continue;
    const int64_t base = i < split.p ? sb : sh;
    const int64_t mult = i < split.p   ? suffix[i + 1] / suffix[split.p]
                         : i < split.g ? suffix[i + 1] / suffix[split.g]
                                       : 0;
    const bool ok = mult == 0 ? st[i] == 0
                              : st[i] % mult == 0 && st[i] / mult == base;
    if (!ok) {
      return Bad(absl::StrCat(name, ": the body steps ", st[i],
                              " elements over the scores' batch dim ", i,
                              ", which the batch and head strides do not "
                              "give"));
    }
  }
  return absl::OkStatus();
}

// Checks the described operand `d` against `x`, the body's view of a
// matmul operand whose last two dims are (seq, features), or (features,
// seq) when `features_first`.
absl::Status CheckOperand(const char* name, const View& x, bool features_first,
                          const StridedOperand& d, const BatchSplit& split) {
  if (d.param != x.param) {
    return Bad(absl::StrCat(name, ": the body reads parameter ",
                            x.param->index(), ", not ", d.param->index()));
  }
  const size_t rank = x.shape.size(), n = split.r.size();
  const int64_t seq = x.strides[rank - (features_first ? 1 : 2)];
  const int64_t features = x.strides[rank - (features_first ? 2 : 1)];
  if (d.offset != x.offset || d.strides[2] != seq ||
      d.strides[3] != features) {
    return Bad(absl::StrCat(name, ": the body reads offset ", x.offset,
                            ", row stride ", seq, ", column stride ",
                            features));
  }
  // Batch strides aligned with r (numpy broadcasting).
  std::vector<int64_t> st(n, 0);
  const size_t xb = rank - 2;
  for (size_t t = n - xb; t < n; ++t) {
    const size_t i = t - (n - xb);
    if (x.shape[i] != 1) st[t] = x.strides[i];
  }
  return CheckBatchStrides(name, split, st, d.strides[0], d.strides[1]);
}

}  // namespace

absl::Status CheckDims(const AttentionMatch& m, const View& q, const View& k,
                       const View& v, const View& o) {
  const Shape& s = m.qk->result()->type().shape;
  const Shape& os = m.pv->result()->type().shape;
  if (s.size() < 2 || os.size() != s.size() ||
      !std::equal(s.begin(), s.end() - 2, os.begin())) {
    return Bad("V broadcasts P·V beyond the scores' batch dims");
  }
  const size_t n = s.size() - 2;
  for (const View* x : {&q, &k, &v}) {
    if (x->shape.size() < 2 || x->shape.size() - 2 > n) {
      return Bad("a matmul operand of rank 1");
    }
  }
  const bool ta = BoolAttr(*m.qk, "transpose_a");
  const int64_t head_dim = q.shape[q.shape.size() - (ta ? 2 : 1)];
  if (m.seq_q != s[n] || m.seq_kv != s[n + 1] || m.head_dim != head_dim ||
      m.head_dim_v != os[n + 1]) {
    return Bad(absl::StrCat("match_dims: the body has seq_q ", s[n],
                            ", seq_kv ", s[n + 1], ", head_dim ", head_dim,
                            ", head_dim_v ", os[n + 1]));
  }
  BatchSplit split;
  split.r.assign(s.begin(), s.begin() + n);
  split.suffix = SuffixProducts(split.r);
  const std::optional<size_t> p = SplitAt(split.suffix, m.heads, 0);
  if (!p.has_value() || split.suffix[0] / split.suffix[*p] != m.batch ||
      m.heads % m.group != 0) {
    return Bad(absl::StrCat(
        "match_dims: batch ", m.batch, ", heads ", m.heads, " and group ",
        m.group, " do not split the scores' batch dims (",
        split.suffix[0], " elements)"));
  }
  const std::optional<size_t> g = SplitAt(split.suffix, m.group, *p);
  if (!g.has_value()) {
    return Bad(absl::StrCat("match_dims: group ", m.group,
                            " is not made of trailing batch dims"));
  }
  split.p = *p;
  split.g = n;
  HGC_RETURN_IF_ERROR(CheckOperand("match_q", q, ta, m.q, split));
  StridedOperand out{o.param, m.out_offset, m.out_strides};
  HGC_RETURN_IF_ERROR(CheckOperand("match_out", o, false, out, split));
  split.g = *g;
  HGC_RETURN_IF_ERROR(CheckOperand(
      "match_k", k, !BoolAttr(*m.qk, "transpose_b"), m.k, split));
  return CheckOperand("match_v", v, BoolAttr(*m.pv, "transpose_b"), m.v,
                      split);
}

}  // namespace attention_attrs
}  // namespace hgc
