// Large, aligned, zero-initialised-on-demand memory for tensors, arenas and
// packed weights.
//
// Buffers of at least 2 MiB are aligned to 2 MiB and offered to the kernel
// for transparent huge pages (madvise(MADV_HUGEPAGE), which Debian's default
// "madvise" THP mode honours): GEMM operands then cost a few TLB entries
// instead of one per 4 KiB page, and their L2 set mapping no longer depends
// on which physical pages a run happened to get, which otherwise shows up
// as run-to-run swings of 20 % in multi-threaded matmuls.
#ifndef HGC_SUPPORT_ALIGNED_BUFFER_H_
#define HGC_SUPPORT_ALIGNED_BUFFER_H_

#include <cstdint>
#include <memory>

namespace hgc {

// Size from which AllocateBuffer uses huge-page alignment.
inline constexpr int64_t kHugePageBytes = int64_t{2} << 20;

// At least `bytes` (>= 0) bytes, 64-byte aligned (2 MiB for big buffers),
// not initialised; nullptr when out of memory. Freed by the shared_ptr.
std::shared_ptr<uint8_t> AllocateBuffer(int64_t bytes);

}  // namespace hgc

#endif  // HGC_SUPPORT_ALIGNED_BUFFER_H_
