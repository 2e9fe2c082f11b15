// A process-wide, thread-safe map from BrgemmDesc to generated kernel.
//
// The same descriptor always yields the same kernel object (the first one
// generated); failures are not cached, so a later call under a different
// ISA cap can succeed. Generation happens outside the lock, so threads
// creating different kernels do not wait for each other; two threads racing
// on one descriptor may both generate, and one result is kept.
#ifndef HGC_MICROKERNELS_KERNEL_CACHE_H_
#define HGC_MICROKERNELS_KERNEL_CACHE_H_

#include <cstddef>
#include <memory>

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
  BrgemmKernelCache() = default;
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

  // Number of cached kernels.
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<BrgemmDesc, std::shared_ptr<const BrgemmKernel>> map_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_KERNEL_CACHE_H_
