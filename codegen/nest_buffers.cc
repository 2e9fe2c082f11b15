#include "codegen/nest_buffers.h"

#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/tensor.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {

int ValueBuffer(LowerState& state, tile::Nest& nest, const Value* v) {
  return nest.AddFrameBuffer(state.refs.at(v), v->name(), v->type().ToString());
}

ConstantBinder NestConstantBinder(tile::Nest& nest) {
  auto bound = std::make_shared<absl::flat_hash_map<const Op*, int>>();
  return
      [&nest, bound](const Op& constant, Tensor value) -> absl::StatusOr<int> {
        if (auto it = bound->find(&constant); it != bound->end()) {
          return it->second;
        }
        const Value* v = constant.result();
        const int index = nest.FrameIndex(
            nest.AddLiteral(std::move(value), v->name(),
                            absl::StrCat(v->type().ToString(), " literal")));
        (*bound)[&constant] = index;
        return index;
      };
}

absl::Status PlaceNestBuffers(LowerState& state, tile::Nest& nest,
                              int num_threads) {
  using tile::Buffer;
  for (size_t i = 0; i < nest.buffers().size(); ++i) {
    const Buffer& b = nest.buffers()[i];
    const int buffer = static_cast<int>(i);
    switch (b.pending) {
      case Buffer::Pending::kPlaced:
        break;
      case Buffer::Pending::kArena:
        nest.PlaceFrameBuffer(buffer,
                              BufferRef::Arena(state.AllocArena(b.bytes)));
        break;
      case Buffer::Pending::kConstantSlot: {
        HGC_ASSIGN_OR_RETURN(Tensor slot,
                             Tensor::Create(TensorType(DType::kU8, {b.bytes})));
        nest.PlaceFrameBuffer(
            buffer, BufferRef::Constant(state.AddConstant(std::move(slot))));
        break;
      }
      case Buffer::Pending::kLiteral: {
        const int64_t slot = state.AddConstant(nest.TakeLiteral(buffer));
        nest.PlaceFrameBuffer(buffer, BufferRef::Constant(slot));
        break;
      }
    }
  }
  for (size_t i = 0; i < nest.buffers().size(); ++i) {
    const Buffer& b = nest.buffers()[i];
    if (b.kind != Buffer::Kind::kPerThread) continue;
    int64_t stride = 0;
    const int64_t offset = state.AllocPerThread(b.bytes, num_threads, &stride);
    nest.PlacePerThread(static_cast<int>(i), offset, stride);
  }
  return absl::OkStatus();
}

}  // namespace codegen
}  // namespace hgc
