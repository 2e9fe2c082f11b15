// The portable kernels for reshape, transpose and constant.
#include <cstring>
#include <vector>

#include "ir/ops/op_helpers.h"
#include "runtime/portable/kernels.h"
#include "support/status_macros.h"

namespace hgc {
namespace portable {
namespace {

// Copies n elements of `size` bytes, reading src at the walker's offsets.
template <typename T>
void Gather(const T* src, T* dst, int64_t n, StridedWalker& w) {
  for (int64_t i = 0; i < n; ++i, w.Next()) dst[i] = src[w.offset(0)];
}

double ConstantElement(const Attribute& a) {
  if (a.is_bool()) return a.as_bool() ? 1.0 : 0.0;
  return a.as_number();
}

}  // namespace

absl::StatusOr<Tensor> EvalReshape(const KernelArgs& args) {
  const Tensor& x = args.operand(0);
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  // Row-major order is unchanged; inference checked the element counts.
  std::memcpy(out.mutable_raw(), x.raw(), out.size_in_bytes());
  return out;
}

absl::StatusOr<Tensor> EvalTranspose(const KernelArgs& args) {
  const Tensor& x = args.operand(0);
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> perm,
                       TransposePerm(args.Find("perm"), x.shape().size()));
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  const int64_t n = out.num_elements();
  if (n == 0) return out;
  // Output dim d is input dim perm[d].
  const Shape in_strides = RowMajorStrides(x.shape());
  Shape strides;
  for (int64_t p : perm) strides.push_back(in_strides[p]);
  StridedWalker w(out.shape());
  w.AddOperand(strides);
  switch (DTypeSize(x.dtype())) {
    case 1:
      Gather(x.data<uint8_t>(), out.mutable_data<uint8_t>(), n, w);
      break;
    case 2:
      Gather(x.data<uint16_t>(), out.mutable_data<uint16_t>(), n, w);
      break;
    default:
      Gather(x.data<uint32_t>(), out.mutable_data<uint32_t>(), n, w);
      break;
  }
  return out;
}

absl::StatusOr<Tensor> EvalConstant(const KernelArgs& args) {
  const Attribute* value = args.Find("value");
  if (value == nullptr) return absl::InternalError("constant without value");
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  const int64_t n = out.num_elements();
  if (value->is_list()) {
    // Inference checked that the list has exactly n elements.
    const Attribute::List& list = value->as_list();
    for (int64_t i = 0; i < n; ++i) {
      out.SetDouble(i, ConstantElement(list[i]));
    }
    return out;
  }
  if (n == 0) return out;
  // Round once, then replicate the element's bytes.
  out.SetDouble(0, ConstantElement(*value));
  const int64_t size = DTypeSize(out.dtype());
  uint8_t* raw = out.mutable_raw();
  for (int64_t i = 1; i < n; ++i) std::memcpy(raw + i * size, raw, size);
  return out;
}

}  // namespace portable
}  // namespace hgc
