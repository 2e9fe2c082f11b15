#include "microkernels/kernel_cache.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "support/cpu_features.h"

namespace hgc {
namespace microkernels {

BrgemmKernelCache& BrgemmKernelCache::Global() {
  static BrgemmKernelCache* cache = new BrgemmKernelCache();
  return *cache;
}

absl::StatusOr<std::shared_ptr<const BrgemmKernel>> BrgemmKernelCache::Get(
    const BrgemmDesc& desc) {
  // The cap may have been lowered since the kernel was cached.
  if (!IsaAvailable(desc.isa)) {
    return absl::FailedPreconditionError(absl::StrCat(
        IsaName(desc.isa), " not available on this CPU (", DescribeCpu(),
        ") for ", desc.ToString()));
  }
  {
    absl::MutexLock lock(&mu_);
    auto it = map_.find(desc);
    if (it != map_.end()) return it->second;
  }
  absl::StatusOr<std::unique_ptr<BrgemmKernel>> created =
      BrgemmKernel::Create(desc);
  if (!created.ok()) return created.status();
  std::shared_ptr<const BrgemmKernel> kernel(std::move(*created));
  absl::MutexLock lock(&mu_);
  // If another thread won the race, keep its kernel: callers may already
  // hold it, and "same descriptor, same kernel" must hold.
  auto inserted = map_.try_emplace(desc, std::move(kernel));
  return inserted.first->second;
}

size_t BrgemmKernelCache::size() const {
  absl::MutexLock lock(&mu_);
  return map_.size();
}

}  // namespace microkernels
}  // namespace hgc
