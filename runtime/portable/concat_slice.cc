// The portable kernels for concat and slice: exact data movement.
#include <cstring>
#include <vector>

#include "ir/ops/op_helpers.h"
#include "runtime/portable/kernels.h"
#include "support/status_macros.h"

namespace hgc {
namespace portable {

absl::StatusOr<Tensor> EvalConcat(const KernelArgs& args) {
  const Shape& shape = args.result_type.shape;
  HGC_ASSIGN_OR_RETURN(int64_t axis,
                       ConcatAxis(args.Find("axis"),
                                  static_cast<int64_t>(shape.size())));
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  // Row-major: for each index of the dims before `axis`, each operand
  // contributes one contiguous block of its dims from `axis` on.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  const int64_t element = DTypeSize(out.dtype());
  std::vector<int64_t> block_bytes;
  for (const Tensor& x : args.operands) {
    int64_t bytes = element;
    for (size_t d = axis; d < x.shape().size(); ++d) bytes *= x.shape()[d];
    block_bytes.push_back(bytes);
  }
  uint8_t* dst = out.mutable_raw();
  for (int64_t i = 0; i < outer; ++i) {
    for (size_t k = 0; k < args.operands.size(); ++k) {
      const int64_t bytes = block_bytes[k];
      if (bytes == 0) continue;
      std::memcpy(dst, args.operand(k).raw() + i * bytes, bytes);
      dst += bytes;
    }
  }
  return out;
}

namespace {

template <typename T>
void GatherFrom(const T* src, T* dst, int64_t n, StridedWalker& w) {
  for (int64_t i = 0; i < n; ++i, w.Next()) dst[i] = src[w.offset(0)];
}

}  // namespace

absl::StatusOr<Tensor> EvalSlice(const KernelArgs& args) {
  const Tensor& x = args.operand(0);
  HGC_ASSIGN_OR_RETURN(
      SliceDims dims,
      ResolveSlice(args.Find("starts"), args.Find("ends"), args.Find("axes"),
                   args.Find("steps"), x.shape()));
  if (dims.count != args.result_type.shape) {
    return absl::InternalError("slice: result type does not match its attrs");
  }
  HGC_ASSIGN_OR_RETURN(Tensor out, NewTensor(args.result_type, args.max_bytes));
  const int64_t n = out.num_elements();
  if (n == 0) return out;
  // Output dim d walks input dim d from start[d] by step[d] elements.
  const Shape in_strides = RowMajorStrides(x.shape());
  Shape strides;
  int64_t base = 0;
  for (size_t d = 0; d < in_strides.size(); ++d) {
    strides.push_back(in_strides[d] * dims.step[d]);
    base += dims.start[d] * in_strides[d];
  }
  StridedWalker w(out.shape());
  w.AddOperand(strides);
  switch (DTypeSize(x.dtype())) {
    case 1:
      GatherFrom(x.data<uint8_t>() + base, out.mutable_data<uint8_t>(), n, w);
      break;
    case 2:
      GatherFrom(x.data<uint16_t>() + base, out.mutable_data<uint16_t>(), n,
                 w);
      break;
    default:
      GatherFrom(x.data<uint32_t>() + base, out.mutable_data<uint32_t>(), n,
                 w);
      break;
  }
  return out;
}

}  // namespace portable
}  // namespace hgc
