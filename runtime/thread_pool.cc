#include "runtime/thread_pool.h"

#include <immintrin.h>

#include <chrono>
#include <thread>

namespace hgc {
namespace {

// How long a worker spins for the next run before parking: long enough to
// cover the gap between the steps of one execution, short enough that an
// idle pool does not burn a core.
constexpr auto kSpinTime = std::chrono::microseconds(200);

inline void CpuRelax() { _mm_pause(); }

// Waits for `done()` by spinning, then yielding the core: when the machine
// has more runnable threads than cores, the thread we wait for may be
// waiting for this core, and a pure spin would hold it for a whole
// scheduler time slice.
template <typename Done>
void SpinThenYield(Done done) {
  for (int spins = 0; !done(); ++spins) {
    if (spins < 2000) {
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace

ThreadPool::ThreadPool(int num_threads)
    : num_threads_(num_threads < 1 ? 1 : num_threads) {
  workers_.reserve(num_threads_ - 1);
  for (int t = 1; t < num_threads_; ++t) {
    workers_.emplace_back([this, t] { WorkerLoop(t); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(park_mutex_);
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  park_cv_.notify_all();
  for (std::thread& w : workers_) w.join();
}

void ThreadPool::Run(absl::FunctionRef<void(int)> fn) {
  if (num_threads_ == 1) {
    fn(0);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  task_ = &fn;
  pending_.store(num_threads_ - 1, std::memory_order_relaxed);
  {
    // Publishing under park_mutex_ closes the race with a worker that is
    // between checking the generation and waiting on the condition.
    std::lock_guard<std::mutex> lock(park_mutex_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  if (parked_.load(std::memory_order_acquire) > 0) park_cv_.notify_all();
  fn(0);
  SpinThenYield(
      [&] { return pending_.load(std::memory_order_acquire) == 0; });
  task_ = nullptr;
}

void ThreadPool::WaitForWork(uint64_t seen_generation) {
  auto spin_until = std::chrono::steady_clock::now() + kSpinTime;
  int polls = 0;
  while (generation_.load(std::memory_order_acquire) == seen_generation) {
    if (++polls < 2000) {
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
    if (polls % 64 != 0) continue;
    if (std::chrono::steady_clock::now() < spin_until) continue;
    std::unique_lock<std::mutex> lock(park_mutex_);
    parked_.fetch_add(1, std::memory_order_acq_rel);
    park_cv_.wait(lock, [&] {
      return generation_.load(std::memory_order_acquire) != seen_generation;
    });
    parked_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::WorkerLoop(int thread_id) {
  uint64_t seen = 0;
  for (;;) {
    WaitForWork(seen);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    (*task_)(thread_id);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::Barrier() {
  if (num_threads_ == 1) return;
  uint64_t phase = barrier_phase_.load(std::memory_order_acquire);
  if (barrier_count_.fetch_add(1, std::memory_order_acq_rel) ==
      num_threads_ - 1) {
    barrier_count_.store(0, std::memory_order_relaxed);
    barrier_phase_.fetch_add(1, std::memory_order_acq_rel);
    return;
  }
  SpinThenYield(
      [&] { return barrier_phase_.load(std::memory_order_acquire) != phase; });
}

void ThreadPool::BarrierCallback(void* ctx) {
  static_cast<ThreadPool*>(ctx)->Barrier();
}

}  // namespace hgc
