// Test support for the microkernels: guarded buffers and one grid case.
//
// Every buffer a case hands to a kernel ends exactly at an inaccessible page
// (a read or write past the end faults at once) and starts after a run of
// guard bytes that are checked after each call. A rows carry NaN / poison
// between K and lda, and C keeps known values between N and ldc, so reading
// or writing inside the leading-dimension gaps is caught too. Input values
// are small multiples of 1/8 so every f32 / bf16 sum is exact in any order
// and kernels are compared with the reference bit for bit.
#ifndef HGC_MICROKERNELS_BRGEMM_TEST_UTIL_H_
#define HGC_MICROKERNELS_BRGEMM_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "gtest/gtest.h"
#include "microkernels/brgemm_abi.h"
#include "microkernels/brgemm_desc.h"

namespace hgc {
namespace microkernels {

// `bytes` of memory whose end touches a PROT_NONE page and whose front is
// preceded by kGuardBytes of a fixed pattern.
class GuardedBuffer {
 public:
  static constexpr size_t kGuardBytes = 256;
  explicit GuardedBuffer(size_t bytes);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t size() const { return bytes_; }
  // True when the front guard still holds its pattern.
  bool GuardIntact() const;

 private:
  char* map_ = nullptr;
  size_t map_bytes_ = 0;
  char* data_ = nullptr;
  size_t bytes_ = 0;
};

// Runs the code under test for one call.
using BrgemmRunner = std::function<void(const BrgemmCallArgs&)>;

// Builds A, packed B and C for `desc` (its batch_kind decides pointer list
// or strided layout; strides in desc are overwritten to the test's layout
// when kStrided, so pass the desc back through `desc_out` to generate the
// kernel), runs `make_runner(desc)`'s runner once, and compares C with the
// reference, guard bytes and gaps included.
::testing::AssertionResult CheckBrgemmCase(
    BrgemmDesc desc, int64_t batch, uint32_t seed,
    const std::function<BrgemmRunner(const BrgemmDesc&)>& make_runner);

// The strides CheckBrgemmCase uses for a strided batch of `desc`.
void SetTestStrides(BrgemmDesc* desc);

// Generates `desc`'s kernel and checks it against the reference on
// batches of 0, 1 and 3 blocks (seeds from `seed` on).
::testing::AssertionResult CheckKernelOverBatches(const BrgemmDesc& desc,
                                                  uint32_t& seed);

// The N tails the kernel tests run over. 80 and 94: tile rows of 3 vectors
// (48 + 32 columns, 48 + 46 with a masked last vector).
inline constexpr int64_t kNs[] = {1, 15, 16, 17, 31, 48, 64, 65, 80, 94};

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_TEST_UTIL_H_
