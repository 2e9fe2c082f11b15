#include "codegen/nest_buffers.h"

#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace hgc {
namespace codegen {

int ValueBuffer(LowerState& state, tile::Nest& nest, const Value* v) {
  return nest.AddFrameBuffer(state.refs.at(v), v->name(), v->type().ToString());
}

ConstantBinder NestConstantBinder(LowerState& state, tile::Nest& nest) {
  auto bound = std::make_shared<absl::flat_hash_map<const Op*, int>>();
  return [&state, &nest, bound](const Op& constant,
                                Tensor value) -> absl::StatusOr<int> {
    if (auto it = bound->find(&constant); it != bound->end()) {
      return it->second;
    }
    const Value* v = constant.result();
    const int64_t slot = state.AddConstant(std::move(value));
    const int index = nest.FrameIndex(
        nest.AddFrameBuffer(BufferRef::Constant(slot), v->name(),
                            absl::StrCat(v->type().ToString(), " literal")));
    (*bound)[&constant] = index;
    return index;
  };
}

}  // namespace codegen
}  // namespace hgc
