#include "codegen/lower_state.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace hgc {
namespace codegen {

int64_t LowerState::AllocArena(int64_t bytes) {
  int64_t offset = (arena_bytes + 63) / 64 * 64;
  arena_bytes = offset + (bytes + 63) / 64 * 64;
  return offset;
}

int64_t LowerState::AllocPerThread(int64_t bytes, int num_threads,
                                   int64_t* thread_stride) {
  const int64_t slice = (bytes + 63) / 64 * 64;
  *thread_stride = num_threads > 1 ? slice + kThreadSliceGap : slice;
  return AllocArena(*thread_stride * num_threads);
}

int64_t LowerState::AddConstant(Tensor value) {
  program->constants.push_back(std::move(value));
  return static_cast<int64_t>(program->constants.size()) - 1;
}

std::string LowerState::StepName(const std::string& prefix) {
  return absl::StrCat(prefix, "_", next_step_id++);
}

}  // namespace codegen
}  // namespace hgc
