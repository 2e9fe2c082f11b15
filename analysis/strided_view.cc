#include "analysis/strided_view.h"

#include "analysis/graph_utils.h"

namespace hgc {
namespace strided_view {

View Contiguous(const Value* v) {
  View view;
  view.param = v;
  view.shape.assign(v->type().shape.begin(), v->type().shape.end());
  view.strides.assign(view.shape.size(), 0);
  int64_t stride = 1;
  for (size_t i = view.shape.size(); i-- > 0;) {
    view.strides[i] = stride;
    stride *= view.shape[i];
  }
  return view;
}

std::optional<View> Reshape(const View& view, const std::vector<int64_t>& shape) {
  std::vector<int64_t> old_dims, old_strides;
  for (size_t i = 0; i < view.shape.size(); ++i) {
    if (view.shape[i] == 1) continue;
    old_dims.push_back(view.shape[i]);
    old_strides.push_back(view.strides[i]);
  }
  View out = view;
  out.shape = shape;
  out.strides.assign(shape.size(), 0);
  const size_t old_n = old_dims.size(), new_n = shape.size();
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < new_n && oi < old_n) {
    int64_t np = shape[ni], op = old_dims[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= new_n) return std::nullopt;
        np *= shape[nj++];
      } else {
        if (oj >= old_n) return std::nullopt;
        op *= old_dims[oj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k) {
      if (old_strides[k] != old_dims[k + 1] * old_strides[k + 1]) {
        return std::nullopt;
      }
    }
    out.strides[nj - 1] = old_strides[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) {
      out.strides[k - 1] = out.strides[k] * shape[k];
    }
    ni = nj++;
    oi = oj++;
  }
  // Trailing dims of size 1: any stride.
  for (size_t k = ni; k < new_n; ++k) out.strides[k] = 1;
  return out;
}

std::optional<View> Forward(const View& operand, const Op& relabel) {
  const Shape& out = relabel.result()->type().shape;
  if (relabel.kind_id() == OpKind::kReshape) {
    return Reshape(operand, std::vector<int64_t>(out.begin(), out.end()));
  }
  if (relabel.kind_id() != OpKind::kTranspose) return std::nullopt;
  const std::vector<int64_t> perm = TransposePermOf(relabel);
  View t = operand;
  for (size_t i = 0; i < perm.size(); ++i) {
    t.shape[i] = operand.shape[perm[i]];
    t.strides[i] = operand.strides[perm[i]];
  }
  return t;
}

std::optional<View> Backward(const View& result, const Op& relabel) {
  const Shape& in = relabel.operand(0)->type().shape;
  if (relabel.kind_id() == OpKind::kReshape) {
    return Reshape(result, std::vector<int64_t>(in.begin(), in.end()));
  }
  if (relabel.kind_id() != OpKind::kTranspose) return std::nullopt;
  const std::vector<int64_t> perm = TransposePermOf(relabel);
  View t = result;
  t.shape.assign(in.begin(), in.end());
  for (size_t i = 0; i < perm.size(); ++i) t.strides[perm[i]] = result.strides[i];
  return t;
}

std::optional<int64_t> MergeDims(const std::vector<int64_t>& sizes,
                                 const std::vector<int64_t>& strides,
                                 size_t lo, size_t hi) {
  std::optional<int64_t> inner;
  int64_t expected = 0;
  for (size_t i = hi; i-- > lo;) {
    if (sizes[i] == 1) continue;
    if (!inner.has_value()) {
      inner = strides[i];
    } else if (strides[i] != expected) {
      return std::nullopt;
    }
    expected = strides[i] * sizes[i];
  }
  return inner.value_or(0);
}

}  // namespace strided_view
}  // namespace hgc
