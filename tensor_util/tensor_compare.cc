#include "tensor_util/tensor_compare.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace hgc {
namespace {

bool HasData(const Tensor& t) {
  return t.raw() != nullptr && t.num_elements() == t.type().NumElements();
}

std::string FormatValue(double v) { return absl::StrFormat("%.9g", v); }

// "[1, 2]" for row-major index `i` of `shape`.
std::string MultiIndex(const Shape& shape, int64_t i) {
  Shape index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      index[d] = i % shape[d];
      i /= shape[d];
    }
  }
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

}  // namespace

Tolerance DefaultTolerance(DType dtype) {
  switch (dtype) {
    case DType::kF32: return {1e-4, 1e-4};
    // rtol 1.6e-2 (two bf16 ulps, PyTorch's default for bf16): compiled
    // kernels sum in a different order than the reference, and a 1-ulp
    // flip of one layer's rounding can grow by a few ulps through the next.
    case DType::kBF16: return {1e-2, 1.6e-2};
    case DType::kF16: return {1e-3, 1e-3};
    // Quantized outputs: off by one where compiled f32 code, summing in
    // another order, lands a value on the other side of a rounding
    // boundary of `quantize` or `cast`.
    case DType::kS8:
    case DType::kU8: return {1, 0};
    default: return {0, 0};
  }
}

absl::StatusOr<CompareResult> CompareTensors(const Tensor& actual,
                                             const Tensor& expected,
                                             std::optional<Tolerance> tolerance,
                                             const Tensor* bound) {
  if (actual.type() != expected.type()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot compare ", actual.type().ToString(),
                     " with expected ", expected.type().ToString()));
  }
  if (!HasData(actual) || !HasData(expected)) {
    return absl::InvalidArgumentError("cannot compare a tensor without data");
  }
  if (bound != nullptr && bound->raw() == nullptr) bound = nullptr;
  // Integers may be off by the steps the bound counts (0 where no float
  // value reaches them); a bool only where its bound is 1 (a comparison of
  // values equal within rounding).
  if (bound != nullptr && (bound->dtype() != DType::kF32 ||
                           bound->shape() != expected.shape() ||
                           !HasData(*bound))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "error bound ", bound->type().ToString(), " does not fit ",
        expected.type().ToString()));
  }
  CompareResult r;
  r.type = expected.type();
  r.tolerance = tolerance.value_or(DefaultTolerance(expected.dtype()));
  r.num_elements = expected.num_elements();
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < r.num_elements; ++i) {
    const double a = actual.GetDouble(i);
    const double e = expected.GetDouble(i);
    const double b = bound != nullptr ? bound->GetDouble(i) : 0.0;
    if (b > r.max_bound) r.max_bound = b;
    bool match;
    double abs_err;
    if (std::isnan(a) || std::isnan(e)) {
      match = std::isnan(a) && std::isnan(e);
      abs_err = match ? 0 : inf;
    } else if (std::isinf(a) || std::isinf(e)) {
      match = a == e;
      abs_err = match ? 0 : inf;
    } else {
      abs_err = std::fabs(a - e);
      // Equal values always match: with rtol = inf, rtol * |0| is NaN.
      const double relative =
          e == 0 ? 0.0 : r.tolerance.rtol * std::fabs(e);
      match = abs_err == 0 || abs_err <= r.tolerance.atol + relative + b;
    }
    // An infinite bound: the reference cannot tell what a correct result
    // is here (an interval that reaches a pole or a domain's edge).
    if (b == inf) match = true;
    if (abs_err > r.max_abs_error) r.max_abs_error = abs_err;
    if (e != 0 && !std::isnan(e)) {
      // Matching infinities give 0; a non-finite mismatch gives inf.
      const double rel = std::isinf(abs_err) ? inf : abs_err / std::fabs(e);
      if (rel > r.max_rel_error) r.max_rel_error = rel;
    }
    if (!match) {
      if (r.num_mismatches == 0) {
        r.first_mismatch = i;
        r.first_actual = a;
        r.first_expected = e;
        r.first_bound = b;
      }
      ++r.num_mismatches;
    }
  }
  return r;
}

std::string CompareResult::Summary() const {
  std::string s = absl::StrCat(
      ok() ? "PASS " : "FAIL ", type.ToString(), ": max_abs_err=",
      absl::StrFormat("%.3g", max_abs_error),
      " max_rel_err=", absl::StrFormat("%.3g", max_rel_error),
      " mismatches=", num_mismatches, "/", num_elements, " (atol=",
      absl::StrFormat("%g", tolerance.atol), ", rtol=",
      absl::StrFormat("%g", tolerance.rtol),
      max_bound > 0 ? absl::StrFormat(" + bound up to %.3g", max_bound) : "",
      ")");
  if (!ok()) {
    absl::StrAppend(&s, " first mismatch at ",
                    MultiIndex(type.shape, first_mismatch),
                    ": actual=", FormatValue(first_actual),
                    " expected=", FormatValue(first_expected));
    if (max_bound > 0) {
      absl::StrAppend(&s, " bound=", absl::StrFormat("%.3g", first_bound));
    }
  }
  return s;
}

}  // namespace hgc
