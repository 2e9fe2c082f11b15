// A process-wide, thread-safe map from BrgemmDesc to generated kernel.
//
// While anything holds a kernel (a compiled graph, a GemmDriver), the same
// descriptor yields the same kernel object (the first one generated).
// Besides those, the cache itself keeps the kernels of its most recent
// requests (keep_recent of them), so that a graph compiled again after the
// last one using a kernel is gone finds it still there; other kernels are
// freed with their last holder. A long-lived process that compiles graphs
// of ever new shapes (one per sequence length, say) thus keeps the code of
// the kernels it still runs, not of every kernel it ever made.
//
// Failures are not cached, so a later call under a different ISA cap can
// succeed. Generation happens outside the lock, so threads creating
// different kernels do not wait for each other; two threads racing on one
// descriptor may both generate, and one result is kept.
#ifndef HGC_MICROKERNELS_KERNEL_CACHE_H_
#define HGC_MICROKERNELS_KERNEL_CACHE_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "microkernels/brgemm_desc.h"
#include "microkernels/brgemm_kernel.h"

namespace hgc {
namespace microkernels {

class BrgemmKernelCache {
 public:
  // Kernels the cache keeps alive on its own: those of its last
  // kDefaultKeepRecent requests (a few MiB of code at most).
  static constexpr size_t kDefaultKeepRecent = 512;

  explicit BrgemmKernelCache(size_t keep_recent = kDefaultKeepRecent);
  BrgemmKernelCache(const BrgemmKernelCache&) = delete;
  BrgemmKernelCache& operator=(const BrgemmKernelCache&) = delete;

  // The process-wide cache (never destroyed, so kernels outlive static
  // destructors that might still call them).
  static BrgemmKernelCache& Global();

  // The kernel for `desc`, generating it on first use. Errors as
  // BrgemmKernel::Create; FailedPrecondition also when a cached kernel's
  // ISA is above the current cap.
  absl::StatusOr<std::shared_ptr<const BrgemmKernel>> Get(
      const BrgemmDesc& desc) ABSL_LOCKS_EXCLUDED(mu_);

  // Number of cached kernels still alive (held by the cache or others).
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Keeps `kernel` among the recent ones, dropping the oldest.
  void KeepRecent(std::shared_ptr<const BrgemmKernel> kernel)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops the entries of freed kernels once the map has doubled.
  void SweepIfGrown() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<BrgemmDesc, std::weak_ptr<const BrgemmKernel>> map_
      ABSL_GUARDED_BY(mu_);
  // A ring of the last requests' kernels; next_recent_ is the oldest.
  std::vector<std::shared_ptr<const BrgemmKernel>> recent_ ABSL_GUARDED_BY(mu_);
  size_t next_recent_ ABSL_GUARDED_BY(mu_) = 0;
  size_t sweep_at_ ABSL_GUARDED_BY(mu_) = 64;
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_KERNEL_CACHE_H_
