#include "runtime/thread_pool.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace hgc {
namespace {

TEST(ThreadPoolTest, RunsEveryThreadIdOnce) {
  for (int n : {1, 2, 3, 4}) {
    ThreadPool pool(n);
    EXPECT_EQ(pool.num_threads(), n);
    for (int rep = 0; rep < 200; ++rep) {
      std::vector<std::atomic<int>> hits(n);
      pool.Run([&](int t) { hits[t].fetch_add(1); });
      for (int t = 0; t < n; ++t) ASSERT_EQ(hits[t].load(), 1) << n << " " << t;
    }
  }
}

TEST(ThreadPoolTest, BarrierSeparatesPhases) {
  ThreadPool pool(3);
  std::vector<int> first(3, 0), second(3, 0);
  for (int rep = 0; rep < 100; ++rep) {
    pool.Run([&](int t) {
      first[t] = rep;
      pool.Barrier();
      // After the barrier every thread's first-phase write is visible.
      int sum = 0;
      for (int v : first) sum += v;
      second[t] = sum;
      pool.Barrier();
    });
    for (int t = 0; t < 3; ++t) ASSERT_EQ(second[t], 3 * rep);
  }
}

TEST(ThreadPoolTest, RunsFromSeveralCallersAreSerialized) {
  ThreadPool pool(2);
  std::atomic<int> active{0}, max_active{0}, total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 100; ++rep) {
        pool.Run([&](int) {
          int now = active.fetch_add(1) + 1;
          int seen = max_active.load();
          while (now > seen && !max_active.compare_exchange_weak(seen, now)) {
          }
          total.fetch_add(1);
          active.fetch_sub(1);
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 100 * 2);
  EXPECT_LE(max_active.load(), 2);  // never two runs at once
}

TEST(ThreadPoolTest, IdleWorkersParkAndWakeUp) {
  ThreadPool pool(2);
  std::atomic<int> calls{0};
  pool.Run([&](int) { calls.fetch_add(1); });
  // Long enough for the worker to stop spinning and block.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  pool.Run([&](int) { calls.fetch_add(1); });
  EXPECT_EQ(calls.load(), 4);
}

}  // namespace
}  // namespace hgc
