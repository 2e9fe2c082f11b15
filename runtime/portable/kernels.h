// The portable kernels one by one: a function per op family (defined in
// runtime/portable/*.cc) and the small helpers they share. Most callers
// want runtime/portable/evaluate.h, which checks an op against the op
// registry before calling its kernel; the reference's error bounds
// (reference/op_bounds_internal.h) use the helpers directly.
#ifndef HGC_RUNTIME_PORTABLE_KERNELS_H_
#define HGC_RUNTIME_PORTABLE_KERNELS_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "ir/op_kind.h"
#include "ir/tensor.h"

namespace hgc {
namespace portable {

// The graph walks (EvaluateGraph here, the reference's
// InterpretWithErrorBounds) share these.
// For each value of `graph`, the last op that reads it (nullptr for the
// graph's results, which live to the end): a walk drops a value then.
absl::flat_hash_map<const Value*, const Op*> LastUses(const Graph& graph);
// How errors name op number `index` of a graph: "%name = kind", or
// "op N (kind)" for an unnamed result.
std::string OpContext(const Op& op, int index);

// What a kernel sees. By the time a kernel runs, the operands, attributes
// and result type have passed the op registry's inference (EvaluateOp
// re-runs it for every op), so kernels may rely on the registry's checks:
// arity, dtypes, attribute kinds and values, shapes.
struct KernelArgs {
  OpKind kind;
  const AttrMap& attrs;
  absl::Span<const Tensor> operands;
  const TensorType& result_type;
  int64_t max_bytes;

  const Tensor& operand(int i) const { return operands[i]; }
  absl::string_view kind_name() const { return OpKindName(kind); }
  // The attribute as written, or nullptr.
  const Attribute* Find(absl::string_view name) const {
    auto it = attrs.find(name);
    return it == attrs.end() ? nullptr : &it->second;
  }
  int64_t GetInt(absl::string_view name, int64_t default_value) const {
    const Attribute* a = Find(name);
    return a ? a->as_int() : default_value;
  }
  double GetFloat(absl::string_view name, double default_value) const {
    const Attribute* a = Find(name);
    return a ? a->as_number() : default_value;
  }
  bool GetBool(absl::string_view name, bool default_value) const {
    const Attribute* a = Find(name);
    return a ? a->as_bool() : default_value;
  }
};

using KernelFn = absl::StatusOr<Tensor> (*)(const KernelArgs&);

// The reference functions that ir/op_kinds.def's math rows name beside
// <cmath>'s.
inline double RefSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double RefRsqrt(double x) { return 1.0 / std::sqrt(x); }

// elementwise.cc
absl::StatusOr<Tensor> EvalUnary(const KernelArgs& args);    // relu ... abs
absl::StatusOr<Tensor> EvalBinary(const KernelArgs& args);   // add ... min
absl::StatusOr<Tensor> EvalCompare(const KernelArgs& args);  // equal ...
absl::StatusOr<Tensor> EvalSelect(const KernelArgs& args);
// gelu of one value in double (approximate "tanh" with `tanh_form`), as
// EvalGelu computes it.
double Gelu(double x, bool tanh_form);
absl::StatusOr<Tensor> EvalGelu(const KernelArgs& args);
absl::StatusOr<Tensor> EvalClamp(const KernelArgs& args);
absl::StatusOr<Tensor> EvalCast(const KernelArgs& args);
// matmul.cc
absl::StatusOr<Tensor> EvalMatmul(const KernelArgs& args);
// reduce.cc
absl::StatusOr<Tensor> EvalReduce(const KernelArgs& args);  // reduce_*
absl::StatusOr<Tensor> EvalSoftmax(const KernelArgs& args);
absl::StatusOr<Tensor> EvalLayernorm(const KernelArgs& args);
// shape.cc
absl::StatusOr<Tensor> EvalReshape(const KernelArgs& args);
absl::StatusOr<Tensor> EvalTranspose(const KernelArgs& args);
absl::StatusOr<Tensor> EvalConstant(const KernelArgs& args);
// concat_slice.cc
absl::StatusOr<Tensor> EvalConcat(const KernelArgs& args);
absl::StatusOr<Tensor> EvalSlice(const KernelArgs& args);
// quant.cc
absl::StatusOr<Tensor> EvalQuantize(const KernelArgs& args);
absl::StatusOr<Tensor> EvalDequantize(const KernelArgs& args);

// ---------------------------------------------------------------------------
// Helpers (common.cc).

// A zero-filled result tensor; ResourceExhausted above `max_bytes`.
absl::StatusOr<Tensor> NewTensor(const TensorType& type, int64_t max_bytes);

// A zero-initialized scratch array of `count` T, held to the same cap as
// tensors; ResourceExhausted instead of an abort when it cannot be had.
template <typename T>
absl::StatusOr<std::unique_ptr<T[]>> AllocScratch(int64_t count,
                                                  int64_t max_bytes) {
  if (count < 0 || count > max_bytes / static_cast<int64_t>(sizeof(T))) {
    return absl::ResourceExhaustedError(
        absl::StrCat("scratch buffer of ", count, " x ", sizeof(T),
                     " bytes exceeds the limit of ", max_bytes, " bytes"));
  }
  std::unique_ptr<T[]> p(new (std::nothrow) T[count > 0 ? count : 1]());
  if (p == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory allocating ", count, " x ", sizeof(T),
                     " bytes of scratch"));
  }
  return p;
}

// Element i of an integer or bool tensor, exactly.
int64_t LoadInt(const Tensor& t, int64_t i);
// Element i as a double (exact for every dtype).
inline double LoadDouble(const Tensor& t, int64_t i) { return t.GetDouble(i); }

// Stores `v` into an integer tensor modulo 2^bits (two's complement wrap);
// for bool, v != 0.
void StoreWrapped(Tensor& t, int64_t i, int64_t v);

// The smallest / largest value of an integer dtype.
int64_t IntMin(DType dtype);
int64_t IntMax(DType dtype);

// A tensor viewed as [outer, mid, inner] around dimension `axis` (softmax,
// layernorm and reductions walk rows of `mid` elements `inner` apart).
struct Split {
  int64_t outer = 1, mid = 1, inner = 1;
};
Split SplitAt(const Shape& shape, int64_t axis);

// Strides (in elements) with which an operand of shape `operand`, broadcast
// numpy-style to `out`, is read at each dimension of `out`: the operand's
// row-major stride, or 0 where the operand has no such dimension or size 1.
Shape BroadcastStrides(absl::Span<const int64_t> operand,
                       absl::Span<const int64_t> out);

// Walks the elements of `dims` in row-major order while tracking, for up to
// kMaxOperands operands, the element offset given by per-dimension strides.
// O(1) amortized per step, no allocation per step.
class StridedWalker {
 public:
  static constexpr int kMaxOperands = 3;
  explicit StridedWalker(absl::Span<const int64_t> dims);
  // Adds an operand read with `strides` (one per dimension of `dims`);
  // returns its index for offset().
  int AddOperand(absl::Span<const int64_t> strides);
  int64_t offset(int k) const { return offsets_[k]; }
  // Advances to the next element (wrapping to the first after the last).
  void Next() {
    for (int d = static_cast<int>(dims_.size()) - 1; d >= 0; --d) {
      if (++index_[d] < dims_[d]) {
        for (int k = 0; k < num_operands_; ++k) offsets_[k] += strides_[k][d];
        return;
      }
      index_[d] = 0;
      for (int k = 0; k < num_operands_; ++k) {
        offsets_[k] -= strides_[k][d] * (dims_[d] - 1);
      }
    }
  }

 private:
  Shape dims_;
  Shape index_;
  std::array<Shape, kMaxOperands> strides_;
  std::array<int64_t, kMaxOperands> offsets_{};
  int num_operands_ = 0;
};

}  // namespace portable
}  // namespace hgc

#endif  // HGC_RUNTIME_PORTABLE_KERNELS_H_
