#include "runtime/thread_pool.h"

#include <immintrin.h>
#include <linux/futex.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace hgc {
namespace {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
              "futex words must be plain 32-bit integers");

uint32_t* FutexAddress(std::atomic<uint32_t>& word) {
  return reinterpret_cast<uint32_t*>(&word);
}

// Sleeps while `word` holds `value` (or returns at once if it does not).
void FutexWait(std::atomic<uint32_t>& word, uint32_t value) {
  syscall(SYS_futex, FutexAddress(word), FUTEX_WAIT_PRIVATE, value, nullptr,
          nullptr, 0);
}

void FutexWakeAll(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, FutexAddress(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr,
          nullptr, 0);
}

// Waits until done(word) holds: spins for ThreadPool::kSpinMicros (giving
// the CPU up to other runnable threads every 64 polls), then sleeps on the
// futex. `asleep` counts the sleepers of `word`. The waker
// changes `word` and then reads `asleep`, the waiter counts itself in
// `asleep` and then reads `word` (both sequentially consistent), so one of
// them sees the other: no wake-up is lost.
template <typename Done>
void SpinThenSleep(std::atomic<uint32_t>& word, std::atomic<int>& asleep,
                   Done done) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::microseconds(ThreadPool::kSpinMicros);
  for (int polls = 1;; ++polls) {
    if (done(word.load(std::memory_order_acquire))) return;
    _mm_pause();
    if (polls % 64 == 0) {
      if (std::chrono::steady_clock::now() >= deadline) break;
      // The thread it waits for may share this CPU (the scheduler can
      // stack a woken thread onto its waker's CPU and leave it there):
      // let it run. Alone on the CPU, the call returns at once.
      sched_yield();
    }
  }
  asleep.fetch_add(1, std::memory_order_seq_cst);
  for (;;) {
    uint32_t value = word.load(std::memory_order_seq_cst);
    if (done(value)) break;
    FutexWait(word, value);
  }
  asleep.fetch_sub(1, std::memory_order_relaxed);
}

// Call after changing `word` (with a sequentially consistent operation).
void WakeSleepers(std::atomic<uint32_t>& word, std::atomic<int>& asleep) {
  if (asleep.load(std::memory_order_seq_cst) > 0) FutexWakeAll(word);
}

void AddCpuList(absl::string_view list, cpu_set_t* set) {
  for (absl::string_view range : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> ends =
        absl::StrSplit(absl::StripAsciiWhitespace(range), '-');
    int first = 0, last = 0;
    if (!absl::SimpleAtoi(ends.first, &first)) continue;
    last = first;
    if (!ends.second.empty() && !absl::SimpleAtoi(ends.second, &last)) continue;
    for (int cpu = first; cpu <= last && cpu < CPU_SETSIZE; ++cpu) {
      if (cpu >= 0) CPU_SET(cpu, set);
    }
  }
}

// `Cpus_allowed_list` of /proc/self/status (the main thread's affinity).
void AddMainThreadCpus(cpu_set_t* set) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return;
  char line[4096];
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    absl::string_view text(line);
    if (absl::ConsumePrefix(&text, "Cpus_allowed_list:")) {
      AddCpuList(text, set);
      break;
    }
  }
  std::fclose(f);
}

// The CPUs of every OpenMP place, when OpenMP binds threads. With libomp
// this query initializes the runtime, which binds the calling thread to
// its first place: the caller's affinity is restored afterwards.
void AddOpenMPPlaceCpus(const cpu_set_t& caller, cpu_set_t* set) {
  int places = omp_get_num_places();
  std::vector<int> ids;
  for (int p = 0; p < places; ++p) {
    int n = omp_get_place_num_procs(p);
    if (n <= 0) continue;
    ids.assign(n, -1);
    omp_get_place_proc_ids(p, ids.data());
    for (int cpu : ids) {
      if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, set);
    }
  }
  cpu_set_t now;
  CPU_ZERO(&now);
  if (sched_getaffinity(0, sizeof(now), &now) == 0 &&
      !CPU_EQUAL(&now, &caller)) {
    sched_setaffinity(0, sizeof(caller), &caller);
  }
}

}  // namespace

std::vector<int> ProcessCpus() {
  cpu_set_t set, caller;
  CPU_ZERO(&set);
  CPU_ZERO(&caller);
  if (sched_getaffinity(0, sizeof(caller), &caller) == 0) {
    CPU_OR(&set, &set, &caller);
    AddOpenMPPlaceCpus(caller, &set);
  }
  AddMainThreadCpus(&set);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

ThreadPool::ThreadPool(int num_threads, Threading threading)
    : num_threads_(num_threads < 1 ? 1 : num_threads), threading_(threading) {
  if (threading_ == Threading::kOpenMP || num_threads_ == 1) return;
  worker_cpus_ = ProcessCpus();
  cpu_set_t affinity;
  CPU_ZERO(&affinity);
  for (int cpu : worker_cpus_) CPU_SET(cpu, &affinity);
  workers_.reserve(num_threads_ - 1);
  for (int t = 1; t < num_threads_; ++t) {
    // No exception may leave the constructor: a refused thread (pids or
    // memory limit) leaves a smaller pool and a status saying so.
    try {
      workers_.emplace_back([this, t] { WorkerLoop(t); });
    } catch (const std::system_error& e) {
      start_status_ = absl::ResourceExhaustedError(absl::StrCat(
          "could not start thread ", t + 1, " of ", num_threads_, " (",
          e.what(), "); running on ", t, " thread", t == 1 ? "" : "s"));
      num_threads_ = t;
      break;
    }
    if (!worker_cpus_.empty() &&
        pthread_setaffinity_np(workers_.back().native_handle(),
                               sizeof(affinity), &affinity) != 0) {
      worker_cpus_.clear();  // the workers keep the inherited affinity
    }
  }
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_seq_cst);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  FutexWakeAll(generation_);
  for (std::thread& w : workers_) w.join();
}

void ThreadPool::Run(absl::FunctionRef<void(int, int)> fn) {
  if (num_threads_ == 1) {
    fn(0, 1);
    return;
  }
  if (threading_ == Threading::kOpenMP) {
    RunOpenMP(fn);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  task_ = &fn;
  pending_.store(num_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_seq_cst);
  WakeSleepers(generation_, workers_asleep_);
  fn(0, num_threads_);
  SpinThenSleep(pending_, caller_asleep_, [](uint32_t v) { return v == 0; });
  task_ = nullptr;
}

void ThreadPool::RunOpenMP(absl::FunctionRef<void(int, int)> fn) {
#pragma omp parallel num_threads(num_threads_)
  fn(omp_get_thread_num(), omp_get_num_threads());
}

void ThreadPool::WorkerLoop(int thread_id) {
  uint32_t seen = 0;
  for (;;) {
    SpinThenSleep(generation_, workers_asleep_,
                  [seen](uint32_t v) { return v != seen; });
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    (*task_)(thread_id, num_threads_);
    if (pending_.fetch_sub(1, std::memory_order_seq_cst) == 1) {
      WakeSleepers(pending_, caller_asleep_);
    }
  }
}

void ThreadPool::Barrier() {
  if (num_threads_ == 1) return;
  if (threading_ == Threading::kOpenMP) {
#pragma omp barrier
    return;
  }
  uint32_t phase = barrier_phase_.load(std::memory_order_acquire);
  if (barrier_count_.fetch_add(1, std::memory_order_acq_rel) ==
      static_cast<uint32_t>(num_threads_ - 1)) {
    barrier_count_.store(0, std::memory_order_relaxed);
    barrier_phase_.fetch_add(1, std::memory_order_seq_cst);
    WakeSleepers(barrier_phase_, barrier_asleep_);
    return;
  }
  SpinThenSleep(barrier_phase_, barrier_asleep_,
                [phase](uint32_t v) { return v != phase; });
}

void ThreadPool::BarrierCallback(void* ctx) {
  static_cast<ThreadPool*>(ctx)->Barrier();
}

}  // namespace hgc
