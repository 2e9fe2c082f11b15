#include "support/aligned_buffer.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

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

std::shared_ptr<uint8_t> AllocateZeroedBuffer(int64_t bytes) {
  if (bytes < kLazyZeroThreshold) {
    std::shared_ptr<uint8_t> b = AllocateBuffer(bytes);
    if (b != nullptr) std::memset(b.get(), 0, static_cast<size_t>(bytes));
    return b;
  }
  if (bytes < kHugePageThreshold) {
    // Whole 4 KiB pages of a mapping of its own.
    const size_t size = (static_cast<size_t>(bytes) + 4095) / 4096 * 4096;
    void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) return nullptr;
    return std::shared_ptr<uint8_t>(
        static_cast<uint8_t*>(memory),
        [size](uint8_t* p) { munmap(p, size); });
  }
  // Whole huge pages, aligned by mapping one more and starting at the
  // first 2 MiB boundary; the deleter unmaps the whole mapping.
  const size_t size = (static_cast<size_t>(bytes) + kHugePageBytes - 1) /
                      kHugePageBytes * kHugePageBytes;
  const size_t mapped = size + kHugePageBytes;
  void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  const uintptr_t start =
      (reinterpret_cast<uintptr_t>(base) + kHugePageBytes - 1) /
      kHugePageBytes * kHugePageBytes;
  auto* memory = reinterpret_cast<uint8_t*>(start);
  (void)madvise(memory, size, MADV_HUGEPAGE);
  return std::shared_ptr<uint8_t>(
      memory, [base, mapped](uint8_t*) { munmap(base, mapped); });
}

}  // namespace hgc
