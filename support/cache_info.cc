#include "support/cache_info.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace hgc {
namespace {

// "48K" / "2048K" / "2M" from sysfs; 0 when unreadable.
int64_t ReadSysfsSize(int index) {
  const std::string path = "/sys/devices/system/cpu/cpu0/cache/index" +
                           std::to_string(index) + "/size";
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return 0;
  long long value = 0;
  char unit = 0;
  const int n = std::fscanf(f, "%lld%c", &value, &unit);
  std::fclose(f);
  if (n < 1 || value <= 0) return 0;
  if (unit == 'K') return value << 10;
  if (unit == 'M') return value << 20;
  return value;
}

int64_t Positive(long v) { return v > 0 ? static_cast<int64_t>(v) : 0; }

CacheInfo Read() {
  CacheInfo info;
  info.l1d_bytes = Positive(sysconf(_SC_LEVEL1_DCACHE_SIZE));
  info.l2_bytes = Positive(sysconf(_SC_LEVEL2_CACHE_SIZE));
  // sysfs index0 is the L1 data cache and index2 the L2 on x86 Linux.
  if (info.l1d_bytes == 0) info.l1d_bytes = ReadSysfsSize(0);
  if (info.l2_bytes == 0) info.l2_bytes = ReadSysfsSize(2);
  if (info.l1d_bytes == 0) info.l1d_bytes = int64_t{32} << 10;
  if (info.l2_bytes == 0) info.l2_bytes = int64_t{1} << 20;
  return info;
}

}  // namespace

const CacheInfo& HostCacheInfo() {
  static const CacheInfo info = Read();
  return info;
}

}  // namespace hgc
