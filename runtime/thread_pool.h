// ThreadPool: a persistent pool that runs one function on N threads at once
// (the caller being thread 0), for the compiled graph's parallel steps.
//
// Workers are created once and park between runs: they spin briefly (a step
// of a small graph follows the previous one within microseconds) and then
// block, so an idle pool costs no CPU. Runs never create threads or allocate.
#ifndef HGC_RUNTIME_THREAD_POOL_H_
#define HGC_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"

namespace hgc {

class ThreadPool {
 public:
  // A pool of `num_threads` (>= 1) threads counting the caller.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(thread_id) once for every thread_id in [0, num_threads), in
  // parallel, and returns when all calls have returned. Runs from several
  // caller threads are serialized.
  void Run(absl::FunctionRef<void(int)> fn);

  // Inside a Run: returns when every thread of the run has arrived. Used by
  // steps that span several dependent loops (coarse-grain MLP fusion).
  void Barrier();

  // C-callable form of Barrier for generated code: `ctx` is the pool.
  static void BarrierCallback(void* ctx);

 private:
  void WorkerLoop(int thread_id);
  void WaitForWork(uint64_t seen_generation);

  const int num_threads_;
  std::vector<std::thread> workers_;

  std::mutex run_mutex_;  // one Run at a time
  // The current run's function; valid while a run is in progress.
  const absl::FunctionRef<void(int)>* task_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};

  // Slow path for parked workers.
  std::mutex park_mutex_;
  std::condition_variable park_cv_;
  std::atomic<int> parked_{0};

  // Sense-reversing barrier.
  std::atomic<int> barrier_count_{0};
  std::atomic<uint64_t> barrier_phase_{0};
};

}  // namespace hgc

#endif  // HGC_RUNTIME_THREAD_POOL_H_
