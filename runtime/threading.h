// How a compiled graph runs its parallel steps.
#ifndef HGC_RUNTIME_THREADING_H_
#define HGC_RUNTIME_THREADING_H_

namespace hgc {

enum class Threading {
  // hgc's own persistent pool of worker threads (runtime/thread_pool.h).
  kOwnPool,
  // The caller's OpenMP runtime: each parallel step is an
  // `omp parallel num_threads(N)` region and its barriers are OpenMP
  // barriers, so hgc shares the threads (and the binding) of a framework
  // that already runs on OpenMP.
  kOpenMP,
};

inline const char* ThreadingName(Threading threading) {
  return threading == Threading::kOpenMP ? "openmp" : "pool";
}

}  // namespace hgc

#endif  // HGC_RUNTIME_THREADING_H_
