#include "support/aligned_buffer.h"

#include <sys/mman.h>

#include <cstdlib>

namespace hgc {

std::shared_ptr<uint8_t> AllocateBuffer(int64_t bytes) {
  if (bytes < 0) return nullptr;
  size_t align = bytes >= kHugePageThreshold ? kHugePageBytes : 64;
  size_t size = (static_cast<size_t>(bytes) + align - 1) / align * align;
  if (size == 0) size = align;
  void* memory = std::aligned_alloc(align, size);
  if (memory == nullptr) return nullptr;
  // Advice only: without THP the buffer simply keeps 4 KiB pages.
  if (align == kHugePageBytes) (void)madvise(memory, size, MADV_HUGEPAGE);
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(memory), std::free);
}

}  // namespace hgc
