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

}  // namespace microkernels
}  // namespace hgc

#endif  // HGC_MICROKERNELS_BRGEMM_TEST_UTIL_H_
