// Helpers shared by the portable kernels: allocation under the size cap,
// exact loads, single-rounding stores and the strided/broadcast walker.
#include <cmath>
#include <limits>

#include "runtime/portable/kernels.h"
#include "support/float16.h"

namespace hgc {
namespace portable {

absl::StatusOr<Tensor> NewTensor(const TensorType& type, int64_t max_bytes) {
  return Tensor::Create(type, max_bytes);
}

int64_t LoadInt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kS32:
      return t.data<int32_t>()[i];
    case DType::kS8:
      return t.data<int8_t>()[i];
    case DType::kU8:
      return t.data<uint8_t>()[i];
    case DType::kBool:
      return t.data<uint8_t>()[i] != 0 ? 1 : 0;
    default:
      return static_cast<int64_t>(t.GetDouble(i));
  }
}

void StoreWrapped(Tensor& t, int64_t i, int64_t v) {
  uint64_t u = static_cast<uint64_t>(v);
  switch (t.dtype()) {
    case DType::kS32:
      t.mutable_data<int32_t>()[i] =
          static_cast<int32_t>(static_cast<uint32_t>(u));
      break;
    case DType::kS8:
      t.mutable_data<int8_t>()[i] =
          static_cast<int8_t>(static_cast<uint8_t>(u));
      break;
    case DType::kU8:
      t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(u);
      break;
    case DType::kBool:
      t.mutable_data<uint8_t>()[i] = v != 0 ? 1 : 0;
      break;
    default:
      t.SetDouble(i, static_cast<double>(v));
      break;
  }
}

int64_t IntMin(DType dtype) {
  switch (dtype) {
    case DType::kS32:
      return std::numeric_limits<int32_t>::min();
    case DType::kS8:
      return -128;
    default:
      return 0;  // u8, bool
  }
}

int64_t IntMax(DType dtype) {
  switch (dtype) {
    case DType::kS32:
      return std::numeric_limits<int32_t>::max();
    case DType::kS8:
      return 127;
    case DType::kU8:
      return 255;
    default:
      return 1;  // bool
  }
}

Split SplitAt(const Shape& shape, int64_t axis) {
  Split s;
  for (int64_t d = 0; d < axis; ++d) s.outer *= shape[d];
  s.mid = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) s.inner *= shape[d];
  return s;
}

Shape BroadcastStrides(absl::Span<const int64_t> operand,
                       absl::Span<const int64_t> out) {
  Shape strides(out.size(), 0);
  int64_t stride = 1;
  size_t lead = out.size() - operand.size();
  for (size_t j = operand.size(); j-- > 0;) {
    strides[lead + j] = operand[j] == 1 ? 0 : stride;
    stride *= operand[j];
  }
  return strides;
}

StridedWalker::StridedWalker(absl::Span<const int64_t> dims)
    : dims_(dims.begin(), dims.end()), index_(dims.size(), 0) {}

int StridedWalker::AddOperand(absl::Span<const int64_t> strides) {
  strides_[num_operands_] = Shape(strides.begin(), strides.end());
  offsets_[num_operands_] = 0;
  return num_operands_++;
}

absl::flat_hash_map<const Value*, const Op*> LastUses(const Graph& graph) {
  absl::flat_hash_map<const Value*, const Op*> last_use;
  for (const auto& op : graph.ops()) {
    for (const Value* v : op->operands()) last_use[v] = op.get();
  }
  for (const Value* v : graph.results()) last_use[v] = nullptr;
  return last_use;
}

std::string OpContext(const Op& op, int index) {
  return op.num_results() >= 1 && !op.result(0)->name().empty()
             ? absl::StrCat("%", op.result(0)->name(), " = ", op.kind())
             : absl::StrCat("op ", index, " (", op.kind(), ")");
}

}  // namespace portable
}  // namespace hgc
