#include "microkernels/kernel_cache.h"

#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "microkernels/brgemm_dispatch.h"
#include "support/cpu_features.h"

namespace hgc {
namespace microkernels {
namespace {

// The f32 kernel family the dispatcher picks on this CPU.
Isa F32Isa() { return *SelectBrgemmIsa(BrgemmDataType::kF32); }

TEST(KernelCacheTest, SameDescriptorSameKernel) {
  BrgemmKernelCache cache;
  const BrgemmDesc d =
      MakeBrgemmDesc(F32Isa(), BrgemmDataType::kF32, 6, 64, 64);
  auto k1 = cache.Get(d);
  auto k2 = cache.Get(d);
  ASSERT_TRUE(k1.ok() && k2.ok());
  EXPECT_EQ(k1->get(), k2->get());
  BrgemmDesc other = d;
  other.accumulate = true;
  auto k3 = cache.Get(other);
  ASSERT_TRUE(k3.ok());
  EXPECT_NE(k3->get(), k1->get());
  EXPECT_EQ(cache.size(), 2u);
}

TEST(KernelCacheTest, ThreadsShareOneKernelPerDescriptor) {
  BrgemmKernelCache cache;
  constexpr int kThreads = 8;
  std::vector<const BrgemmKernel*> got(kThreads * 4);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 4; ++i) {
        // Four descriptors, every thread asks for each.
        const BrgemmDesc d =
            MakeBrgemmDesc(F32Isa(), BrgemmDataType::kF32, 1 + i, 32, 8);
        auto k = cache.Get(d);
        got[t * 4 + i] = k.ok() ? k->get() : nullptr;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < 4; ++i) {
      ASSERT_NE(got[t * 4 + i], nullptr);
      EXPECT_EQ(got[t * 4 + i], got[i]) << "thread " << t << " desc " << i;
    }
  }
  EXPECT_EQ(cache.size(), 4u);
}

// Descriptor i of a family of distinct ones.
BrgemmDesc Distinct(int i) {
  return MakeBrgemmDesc(F32Isa(), BrgemmDataType::kF32, 4, 16, 1 + i);
}

TEST(KernelCacheTest, KeepsTheRecentKernelsAndFreesOlderUnheldOnes) {
  BrgemmKernelCache cache(/*keep_recent=*/3);
  std::weak_ptr<const BrgemmKernel> first;
  {
    auto k = cache.Get(Distinct(0));
    ASSERT_TRUE(k.ok());
    first = *k;
  }
  // Nobody holds it, but it is among the last three requests.
  EXPECT_FALSE(first.expired());
  EXPECT_EQ(cache.size(), 1u);
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(cache.Get(Distinct(i)).ok());
  EXPECT_TRUE(first.expired());
  EXPECT_EQ(cache.size(), 3u);
  // Asked for again, it is generated again and works.
  auto again = cache.Get(Distinct(0));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->desc(), Distinct(0));
}

TEST(KernelCacheTest, HeldKernelsStayTheSameObject) {
  BrgemmKernelCache cache(/*keep_recent=*/2);
  auto held = cache.Get(Distinct(0));
  ASSERT_TRUE(held.ok());
  // Many more kernels than the cache keeps, enough to trigger sweeps.
  for (int i = 1; i <= 200; ++i) ASSERT_TRUE(cache.Get(Distinct(i)).ok());
  EXPECT_EQ(cache.size(), 3u);
  auto again = cache.Get(Distinct(0));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), held->get());
}

TEST(KernelCacheTest, ErrorsAreReturnedNotCached) {
  BrgemmKernelCache cache;
  const Isa f32 = F32Isa();
  BrgemmDesc bad = MakeBrgemmDesc(f32, BrgemmDataType::kF32, 1, 1, 1);
  bad.lda = 0;
  EXPECT_EQ(cache.Get(bad).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache.size(), 0u);
  SetMaxIsa(Isa::kNone);
  auto capped = cache.Get(MakeBrgemmDesc(f32, BrgemmDataType::kF32, 1, 1, 1));
  ResetMaxIsa();
  EXPECT_EQ(capped.status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace microkernels
}  // namespace hgc
