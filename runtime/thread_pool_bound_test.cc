// The pool and an executable in a process whose OpenMP threads are bound
// (the test runs with OMP_PROC_BIND=close OMP_PLACES=cores): OpenMP binds
// the initial thread, which creates the pool, to a single core.
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/executable.h"
#include "runtime/thread_pool.h"

namespace hgc {
namespace {

int AffinityCount() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
  return CPU_COUNT(&set);
}

// The CPUs of OpenMP's places: the process's CPUs as OpenMP saw them.
std::set<int> OpenMPPlaceCpus() {
  std::set<int> cpus;
  for (int p = 0; p < omp_get_num_places(); ++p) {
    std::vector<int> ids(std::max(0, omp_get_place_num_procs(p)));
    omp_get_place_proc_ids(p, ids.data());
    cpus.insert(ids.begin(), ids.end());
  }
  return cpus;
}

// Work on both sides of a barrier: thread t writes its slot, then reads
// its neighbour's.
constexpr int64_t kSlots = 64;
void ShiftStep(const KernelFrame* frame) {
  int64_t* first = static_cast<int64_t*>(frame->buffers[0]);
  int64_t* second = static_cast<int64_t*>(frame->buffers[1]);
  for (int64_t i = frame->thread_id; i < kSlots; i += frame->num_threads) {
    first[i] = i * i;
  }
  frame->barrier(frame->barrier_ctx);
  for (int64_t i = frame->thread_id; i < kSlots; i += frame->num_threads) {
    second[i] = first[(i + 1) % kSlots] + 1;
  }
}

Program ShiftProgram() {
  Program p;
  p.result_types = {TensorType(DType::kS32, {2 * kSlots})};  // int64 slots
  Step step;
  step.name = "shift";
  step.fn = &ShiftStep;
  step.buffers = {BufferRef::Arena(0), BufferRef::Output(0)};
  p.steps.push_back(step);
  p.arena_bytes = kSlots * sizeof(int64_t);
  return p;
}

class BoundTest : public ::testing::TestWithParam<Threading> {};

TEST_P(BoundTest, RunsAfterAnOpenMPRegion) {
  ASSERT_NE(omp_get_proc_bind(), omp_proc_bind_false)
      << "the test expects OMP_PROC_BIND in its environment";
  // The framework's OpenMP work before hgc runs.
  std::atomic<int> omp_threads{0};
#pragma omp parallel num_threads(2)
  omp_threads.fetch_add(1);
  EXPECT_GE(omp_threads.load(), 1);

  Executable exe(ShiftProgram(), nullptr, 2, GetParam());
  std::vector<int64_t> out(kSlots);
  for (int rep = 0; rep < 200; ++rep) {
    std::fill(out.begin(), out.end(), -1);
    void* outputs[] = {out.data()};
    ASSERT_TRUE(exe.Execute({}, outputs).ok());
    for (int64_t i = 0; i < kSlots; ++i) {
      int64_t j = (i + 1) % kSlots;
      ASSERT_EQ(out[i], j * j + 1) << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Threading, BoundTest,
                         ::testing::Values(Threading::kOwnPool,
                                           Threading::kOpenMP),
                         [](const auto& info) {
                           return std::string(ThreadingName(info.param));
                         });

TEST(BoundPoolTest, WorkersAreNotNarrowedToTheCreatorsCore) {
  std::set<int> process = OpenMPPlaceCpus();
  int creator = AffinityCount();
  std::printf("OpenMP places cover %zu cpus; this thread may use %d\n",
              process.size(), creator);
  for (int cpu : ProcessCpus()) EXPECT_EQ(process.count(cpu), 1u) << cpu;
  if (process.size() < 2) {
    GTEST_SKIP() << "the process may use only one cpu: nothing to narrow";
  }
  ThreadPool pool(2);
  std::atomic<int> worker_affinity{0};
  pool.Run([&](int t, int) {
    if (t == 1) worker_affinity.store(AffinityCount());
  });
  EXPECT_EQ(worker_affinity.load(), static_cast<int>(process.size()));
  EXPECT_EQ(pool.worker_cpus(),
            std::vector<int>(process.begin(), process.end()));
  // Creating the pool left the creator's own binding alone.
  EXPECT_EQ(AffinityCount(), creator);
}

}  // namespace
}  // namespace hgc
