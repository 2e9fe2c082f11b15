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
      pool.Run([&](int t, int team) {
        EXPECT_EQ(team, n);
        hits[t].fetch_add(1);
      });
      for (int t = 0; t < n; ++t) ASSERT_EQ(hits[t].load(), 1) << n << " " << t;
    }
  }
}

TEST(ThreadPoolTest, BarrierSeparatesPhases) {
  ThreadPool pool(3);
  std::vector<int> first(3, 0), second(3, 0);
  for (int rep = 0; rep < 100; ++rep) {
    pool.Run([&](int t, int) {
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
        pool.Run([&](int, int) {
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

TEST(ThreadPoolTest, OpenMPRunsEveryThreadIdOfTheTeamOnce) {
  for (int n : {1, 2, 3}) {
    ThreadPool pool(n, Threading::kOpenMP);
    EXPECT_EQ(pool.threading(), Threading::kOpenMP);
    for (int rep = 0; rep < 50; ++rep) {
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int> team_size{0};
      pool.Run([&](int t, int team) {
        team_size.store(team);
        hits[t].fetch_add(1);
      });
      ASSERT_GE(team_size.load(), 1);
      ASSERT_LE(team_size.load(), n);
      for (int t = 0; t < n; ++t) {
        ASSERT_EQ(hits[t].load(), t < team_size.load() ? 1 : 0)
            << n << " " << t;
      }
    }
  }
}

TEST(ThreadPoolTest, OpenMPBarrierSeparatesPhases) {
  ThreadPool pool(3, Threading::kOpenMP);
  std::vector<int> first(3, 0), second(3, 0);
  for (int rep = 1; rep <= 50; ++rep) {
    int team_size = 0;
    pool.Run([&](int t, int team) {
      if (t == 0) team_size = team;
      first[t] = rep;
      ThreadPool::BarrierCallback(&pool);
      int sum = 0;
      for (int i = 0; i < team; ++i) sum += first[i];
      second[t] = sum;
      pool.Barrier();
    });
    for (int t = 0; t < team_size; ++t) ASSERT_EQ(second[t], team_size * rep);
  }
}

TEST(ThreadPoolTest, WorkersMayUseEveryCpuOfTheProcess) {
  ThreadPool pool(2);
  std::vector<int> process = ProcessCpus();
  ASSERT_FALSE(process.empty());
  EXPECT_EQ(pool.worker_cpus(), process);
  EXPECT_TRUE(pool.start_status().ok()) << pool.start_status();
}

TEST(ThreadPoolTest, IdleWorkersParkAndWakeUp) {
  ThreadPool pool(2);
  std::atomic<int> calls{0};
  pool.Run([&](int, int) { calls.fetch_add(1); });
  // Long enough for the worker to stop spinning and block.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  pool.Run([&](int, int) { calls.fetch_add(1); });
  EXPECT_EQ(calls.load(), 4);
}

}  // namespace
}  // namespace hgc
