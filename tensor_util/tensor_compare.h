// Compares an actual tensor against an expected one (typically the reference
// interpreter's output), element by element, under an (atol, rtol)
// tolerance.
//
// An element matches when
//   * both are NaN, or both are the same infinity, or
//   * both are finite and |actual - expected| <= atol + rtol * |expected|
//     (numpy.isclose's rule), plus bound[i] where an error bound is given
//     (the reference interpreter's estimate of how far a correct result
//     may be from it, reference/error_bound.h; for integers a count of
//     steps, 0 where no float value reaches them; for bool 1 where the
//     answer may come out either way, a comparison of values equal within
//     rounding, else 0).
//   * the bound of the element is infinite: any value matches, NaN and
//     infinities included (the reference's way of saying that a correct
//     result may be anything there, e.g. x / y where y's interval holds 0).
// Anything else (NaN vs a number, inf vs finite, opposite infinities) is a
// mismatch. Errors are measured on the values as doubles (bf16/f16 decoded):
//   max_abs_error  max |actual - expected| over all elements (inf when a
//                  non-finite value mismatches; 0 for matching NaN/inf);
//   max_rel_error  max |actual - expected| / |expected| over elements with
//                  expected != 0 (elements expecting exactly 0 are judged by
//                  the absolute error alone and do not enter this maximum).
#ifndef HGC_TENSOR_UTIL_TENSOR_COMPARE_H_
#define HGC_TENSOR_UTIL_TENSOR_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "ir/tensor.h"

namespace hgc {

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

// Defaults per dtype: f32 1e-4/1e-4; bf16 1e-2/1e-2 (bf16 has 8 significant
// bits, one rounding is up to 2^-9 relative); f16 1e-3/1e-3 (11 bits); s32,
// s8, u8 and bool exact (0/0).
Tolerance DefaultTolerance(DType dtype);

struct CompareResult {
  TensorType type;
  Tolerance tolerance;
  int64_t num_elements = 0;
  int64_t num_mismatches = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  // The first mismatching element (row-major index), or -1.
  int64_t first_mismatch = -1;
  double first_actual = 0;
  double first_expected = 0;
  double first_bound = 0;
  // The largest element of the error bound (0 without one).
  double max_bound = 0;

  bool ok() const { return num_mismatches == 0; }
  // One line, e.g.
  //   "PASS f32[2, 3]: max_abs_err=1.19e-07 max_rel_err=2.4e-07
  //    mismatches=0/6 (atol=0.0001, rtol=0.0001)"
  // with " + bound up to B" inside the parentheses where an error bound
  // took part, and on failure also
  // " first mismatch at [1, 2]: actual=0.5 expected=0.25" (and
  // " bound=B" with a bound).
  std::string Summary() const;
};

// InvalidArgument when the types (dtype or shape) differ or a tensor holds
// no data. `tolerance` defaults to DefaultTolerance(expected.dtype()).
// `bound`, when given and holding data, is an f32 tensor of expected's
// shape added to the tolerance of each element of a floating-point
// comparison; integer and bool comparisons ignore it.
absl::StatusOr<CompareResult> CompareTensors(
    const Tensor& actual, const Tensor& expected,
    std::optional<Tolerance> tolerance = std::nullopt,
    const Tensor* bound = nullptr);

}  // namespace hgc

#endif  // HGC_TENSOR_UTIL_TENSOR_COMPARE_H_
