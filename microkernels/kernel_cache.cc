#include "microkernels/kernel_cache.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "support/cpu_features.h"

namespace hgc {
namespace microkernels {

BrgemmKernelCache::BrgemmKernelCache(size_t keep_recent)
    : recent_(keep_recent) {}

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
    if (it != map_.end()) {
      if (std::shared_ptr<const BrgemmKernel> kernel = it->second.lock()) {
        KeepRecent(kernel);
        return kernel;
      }
    }
  }
  absl::StatusOr<std::unique_ptr<BrgemmKernel>> created =
      BrgemmKernel::Create(desc);
  if (!created.ok()) return created.status();
  std::shared_ptr<const BrgemmKernel> kernel(std::move(*created));
  absl::MutexLock lock(&mu_);
  // If another thread won the race, keep its kernel: callers may already
  // hold it, and "same descriptor, same kernel" must hold.
  std::weak_ptr<const BrgemmKernel>& entry = map_[desc];
  if (std::shared_ptr<const BrgemmKernel> winner = entry.lock()) {
    kernel = std::move(winner);
  } else {
    entry = kernel;
    SweepIfGrown();
  }
  KeepRecent(kernel);
  return kernel;
}

void BrgemmKernelCache::KeepRecent(std::shared_ptr<const BrgemmKernel> kernel) {
  if (recent_.empty()) return;
  recent_[next_recent_] = std::move(kernel);
  next_recent_ = (next_recent_ + 1) % recent_.size();
}

void BrgemmKernelCache::SweepIfGrown() {
  if (map_.size() < sweep_at_) return;
  for (auto it = map_.begin(); it != map_.end();) {
    if (it->second.expired()) {
      map_.erase(it++);
    } else {
      ++it;
    }
  }
  sweep_at_ = std::max<size_t>(64, 2 * map_.size());
}

size_t BrgemmKernelCache::size() const {
  absl::MutexLock lock(&mu_);
  size_t alive = 0;
  for (const auto& entry : map_) alive += entry.second.expired() ? 0 : 1;
  return alive;
}

}  // namespace microkernels
}  // namespace hgc
