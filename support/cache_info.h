// The data cache sizes of the CPU the process runs on, read once at first
// use (sysconf, then sysfs), for choosing block sizes.
#ifndef HGC_SUPPORT_CACHE_INFO_H_
#define HGC_SUPPORT_CACHE_INFO_H_

#include <cstdint>

namespace hgc {

struct CacheInfo {
  int64_t l1d_bytes = 0;  // per core
  int64_t l2_bytes = 0;   // per core (or per the cores sharing it)
};

// Sizes this machine reports; 32 KiB and 1 MiB where it reports none (a
// VM may hide them).
const CacheInfo& HostCacheInfo();

}  // namespace hgc

#endif  // HGC_SUPPORT_CACHE_INFO_H_
