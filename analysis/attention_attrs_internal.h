// Shared by attention_attrs.cc (reading the attributes) and
// attention_attrs_check.cc (checking what they say against the body).
#ifndef HGC_ANALYSIS_ATTENTION_ATTRS_INTERNAL_H_
#define HGC_ANALYSIS_ATTENTION_ATTRS_INTERNAL_H_

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "analysis/attention_match.h"
#include "analysis/strided_view.h"
#include "ir/graph.h"
#include "support/status_macros.h"

namespace hgc {
namespace attention_attrs {

inline absl::Status Bad(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("attention match: ", what));
}

// Checks `m`, read from the attributes with its ops and parameters in
// `body`, against the body: the role ops' kinds and how they connect, that
// every body op has a part, the dims against the types, and the offsets and
// strides against the views the body's reshapes and transposes give.
absl::Status CheckAgainstBody(const AttentionMatch& m, const Graph& body);

// Checks the dims and the offsets and strides of `m` against q, k, v (the
// body's views of the matmul operands, from their parameters) and o (P·V's
// result seen in the body's result).
absl::Status CheckDims(const AttentionMatch& m, const strided_view::View& q,
                       const strided_view::View& k, const strided_view::View& v,
                       const strided_view::View& o);

}  // namespace attention_attrs
}  // namespace hgc

#endif  // HGC_ANALYSIS_ATTENTION_ATTRS_INTERNAL_H_
