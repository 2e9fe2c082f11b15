#include "driver/tensor_text.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hgc {
namespace {

std::string FormatElement(const Tensor& t, int64_t i) {
  double v = t.GetDouble(i);
  if (t.dtype() == DType::kBool) return v != 0 ? "true" : "false";
  if (!IsFloat(t.dtype())) return absl::StrCat(static_cast<int64_t>(v));
  return absl::StrFormat("%g", v);
}

// numpy-like nested brackets: [[1, 2], [3, 4]].
void AppendNested(const Tensor& t, int dim, int64_t& index, std::string& out) {
  if (dim == static_cast<int>(t.shape().size())) {
    out += FormatElement(t, index++);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < t.shape()[dim]; ++i) {
    if (i) out += ", ";
    AppendNested(t, dim + 1, index, out);
  }
  out += ']';
}

}  // namespace

std::string DescribeTensor(const Tensor& t) {
  // As numpy prints an empty array, whatever its shape: nested brackets
  // for f32[4294967296, 0] would be gigabytes of "[], ".
  if (t.num_elements() == 0) return "[]";
  if (t.num_elements() <= kMaxPrintedElements) {
    std::string out;
    int64_t index = 0;
    AppendNested(t, 0, index, out);
    return out;
  }
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    double v = t.GetDouble(i);
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return absl::StrFormat("min %g, max %g, mean %g", lo, hi,
                         sum / static_cast<double>(t.num_elements()));
}

}  // namespace hgc
