// Aligned memory for tensors, arenas and packed weights.
//
// Buffers of at least 1 MiB are rounded up to whole 2 MiB pages, aligned to
// 2 MiB and offered to the kernel for transparent huge pages
// (madvise(MADV_HUGEPAGE), which Debian's default "madvise" THP mode
// honours): a streamed weight panel or activation block then costs a few
// TLB entries instead of one per 4 KiB page, and the hardware prefetchers,
// which stop at page boundaries, run on across it.
#ifndef HGC_SUPPORT_ALIGNED_BUFFER_H_
#define HGC_SUPPORT_ALIGNED_BUFFER_H_

#include <cstdint>
#include <memory>

namespace hgc {

inline constexpr int64_t kHugePageBytes = int64_t{2} << 20;
// Size from which AllocateBuffer uses huge pages (at most half of the last
// page is wasted).
inline constexpr int64_t kHugePageThreshold = kHugePageBytes / 2;

// At least `bytes` (>= 0) bytes, 64-byte aligned (2 MiB for big buffers),
// not initialised; nullptr when out of memory. Freed by the shared_ptr.
std::shared_ptr<uint8_t> AllocateBuffer(int64_t bytes);

// Size from which AllocateZeroedBuffer maps fresh pages instead of
// clearing heap memory.
inline constexpr int64_t kLazyZeroThreshold = int64_t{64} << 10;

// The same, all zero. A buffer of kLazyZeroThreshold or more is fresh
// anonymous memory (4 KiB-aligned below kHugePageThreshold), whose pages
// the kernel zeroes on first touch: creating a weight-sized tensor (a
// constant slot, filled later by SetConstants) costs no time until it is
// written, instead of a memset that faults in every page up front.
std::shared_ptr<uint8_t> AllocateZeroedBuffer(int64_t bytes);

}  // namespace hgc

#endif  // HGC_SUPPORT_ALIGNED_BUFFER_H_
