// ThreadPool: runs one function on N threads at once (the caller being
// thread 0), for the compiled graph's parallel steps, either on hgc's own
// persistent workers or on the caller's OpenMP runtime (runtime/threading.h).
//
// Own pool:
//   - Workers are created once. Each takes as its CPU affinity the whole set
//     of CPUs the process may use (ProcessCpus below), never the creating
//     thread's: a thread that OpenMP has bound to one core (OMP_PROC_BIND)
//     would otherwise hand that single core to every worker. The scheduler
//     places workers within the set; no worker is pinned to one CPU, so
//     workers never contend with an OpenMP thread bound to the same CPU
//     when another one is free.
//   - Waiting is short spinning, then sleeping: idle workers, the caller
//     waiting for them and threads in a barrier spin for kSpinMicros (a
//     step of a small graph follows the previous one within microseconds),
//     yielding the CPU every few polls (Linux may stack a woken worker on
//     its waker's CPU and keep the two there while another CPU idles; a
//     spinner that never yields then starves the thread it waits for),
//     then block on a futex, so an idle pool costs no CPU and leaves the
//     cores to any other runtime of the process (oneDNN's OpenMP threads).
//   - Runs never create threads or allocate. Runs from several callers are
//     serialized.
// OpenMP (Threading::kOpenMP): Run is `#pragma omp parallel num_threads(N)`;
//   OpenMP may give a smaller team (nested regions, thread limits), so
//   functions get the team size with their thread id. Barrier is
//   `#pragma omp barrier`. Runs from several callers proceed concurrently,
//   each on its own team.
#ifndef HGC_RUNTIME_THREAD_POOL_H_
#define HGC_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "runtime/threading.h"

namespace hgc {

// The CPUs this process may run on, ascending. OpenMP narrows the affinity
// of the threads it binds (libgomp binds the initial thread to its first
// place when the library loads, libomp at its first parallel region), and
// /proc/self/status reports the main thread's (possibly narrowed) mask, so
// no single query gives the process's set. This is the union of: the
// calling thread's affinity; the main thread's (`Cpus_allowed_list` of
// /proc/self/status); and, when OpenMP binds threads, the CPUs of every
// OpenMP place (the OpenMP runtime derives its places from the affinity
// the process started with). All three lie within the process's own set,
// so the union never widens what the user allowed (taskset, cgroups).
// The caller's affinity is left as it was.
std::vector<int> ProcessCpus();

class ThreadPool {
 public:
  // How long waiting threads spin before they sleep.
  static constexpr int kSpinMicros = 50;

  // A pool of `num_threads` (>= 1) threads counting the caller. When the
  // system refuses to create a thread, the pool keeps the threads it has
  // (num_threads() says how many) and start_status() says why.
  explicit ThreadPool(int num_threads,
                      Threading threading = Threading::kOwnPool);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  Threading threading() const { return threading_; }
  // OK, or ResourceExhausted when fewer threads than asked were created.
  const absl::Status& start_status() const { return start_status_; }
  // The CPUs the own pool's workers may run on (empty when the affinity
  // could not be determined or set; the workers then inherit it).
  const std::vector<int>& worker_cpus() const { return worker_cpus_; }

  // Calls fn(thread_id, team_size) once for every thread_id in
  // [0, team_size), in parallel, and returns when all calls have returned.
  // team_size is num_threads() on the own pool and at most num_threads()
  // with OpenMP.
  void Run(absl::FunctionRef<void(int thread_id, int team_size)> fn);

  // Inside a Run: returns when every thread of the run has arrived. Used by
  // steps that span several dependent loops (coarse-grain MLP fusion).
  void Barrier();

  // C-callable form of Barrier for generated code: `ctx` is the pool.
  static void BarrierCallback(void* ctx);

 private:
  void WorkerLoop(int thread_id);
  void RunOpenMP(absl::FunctionRef<void(int, int)> fn);

  int num_threads_;
  const Threading threading_;
  absl::Status start_status_;
  std::vector<int> worker_cpus_;
  std::vector<std::thread> workers_;

  std::mutex run_mutex_;  // one Run at a time (own pool)
  // The current run's function; valid while a run is in progress.
  const absl::FunctionRef<void(int, int)>* task_ = nullptr;
  std::atomic<bool> stop_{false};

  // Futex words (32-bit) and the number of threads asleep on each, so that
  // a waker skips the system call when nobody sleeps.
  std::atomic<uint32_t> generation_{0};  // bumped per run: wakes workers
  std::atomic<int> workers_asleep_{0};
  std::atomic<uint32_t> pending_{0};  // workers still running this run
  std::atomic<int> caller_asleep_{0};
  std::atomic<uint32_t> barrier_count_{0};
  std::atomic<uint32_t> barrier_phase_{0};
  std::atomic<int> barrier_asleep_{0};
};

}  // namespace hgc

#endif  // HGC_RUNTIME_THREAD_POOL_H_
