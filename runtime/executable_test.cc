#include "runtime/executable.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include "gtest/gtest.h"

// Counts every heap allocation of the process (C and C++), so the test can
// show that executing allocates nothing after the first run. Sanitizers
// own malloc themselves (and TSan's start-up calls it before anything is
// set up), so under them nothing is counted and that test is skipped.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define HGC_COUNT_ALLOCATIONS 0
#else
#define HGC_COUNT_ALLOCATIONS 1
#endif
static std::atomic<int64_t> g_allocations{0};
#if HGC_COUNT_ALLOCATIONS
extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_memalign(size_t, size_t);
extern "C" void* malloc(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(n);
}
extern "C" void* aligned_alloc(size_t alignment, size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(alignment, n);
}
#endif

namespace hgc {
namespace {

constexpr int64_t kSize = 1000;

// out[i] = x[i] + w2[i] over this thread's share; w2 is a constant slot.
void AddStep(const KernelFrame* frame) {
  const float* x = static_cast<const float*>(frame->buffers[0]);
  const float* w2 = static_cast<const float*>(frame->buffers[1]);
  float* tmp = static_cast<float*>(frame->buffers[2]);
  int64_t chunk = (kSize + frame->num_threads - 1) / frame->num_threads;
  int64_t begin = frame->thread_id * chunk;
  int64_t end = std::min(kSize, begin + chunk);
  for (int64_t i = begin; i < end; ++i) tmp[i] = x[i] + w2[i];
  // Everyone's share of tmp is done before anyone reads a neighbour's.
  frame->barrier(frame->barrier_ctx);
  float* out = static_cast<float*>(frame->buffers[3]);
  for (int64_t i = begin; i < end; ++i) out[i] = tmp[kSize - 1 - i];
}

// A program computing out = reverse(x + 2 * w), with 2 * w computed once
// by an init step.
Program MakeProgram() {
  TensorType vec(DType::kF32, {kSize});
  Program p;
  p.param_types = {vec, vec};
  p.param_is_const = {false, true};
  p.result_types = {vec};
  p.constants.push_back(*Tensor::Create(vec));  // slot 0: w
  p.constants.push_back(*Tensor::Create(vec));  // slot 1: 2 * w
  p.param_constant_slot = {-1, 0};
  Step init;
  init.name = "double_w";
  init.buffers = {BufferRef::Constant(0), BufferRef::Constant(1)};
  init.host = [](void* const* buffers) {
    const float* w = static_cast<const float*>(buffers[0]);
    float* w2 = static_cast<float*>(buffers[1]);
    for (int64_t i = 0; i < kSize; ++i) w2[i] = 2 * w[i];
    return absl::OkStatus();
  };
  p.init_steps.push_back(init);
  Step add;
  add.name = "add_reverse";
  add.fn = &AddStep;
  add.buffers = {BufferRef::Input(0), BufferRef::Constant(1),
                 BufferRef::Arena(128), BufferRef::Output(0)};
  p.steps.push_back(add);
  p.arena_bytes = 128 + kSize * sizeof(float);
  return p;
}

std::vector<Tensor> MakeParams(float x_scale) {
  TensorType vec(DType::kF32, {kSize});
  Tensor x = *Tensor::Create(vec), w = *Tensor::Create(vec);
  for (int64_t i = 0; i < kSize; ++i) {
    x.mutable_data<float>()[i] = x_scale * i;
    w.mutable_data<float>()[i] = 1.0f + i % 7;
  }
  return {x, w};
}

void ExpectResult(const float* out, float x_scale) {
  for (int64_t i = 0; i < kSize; ++i) {
    int64_t j = kSize - 1 - i;
    ASSERT_EQ(out[i], x_scale * j + 2 * (1.0f + j % 7)) << i;
  }
}

TEST(ExecutableTest, RunsInitOnceAndStepsPerCall) {
  for (int threads : {1, 2, 3}) {
    Executable exe(MakeProgram(), nullptr, threads);
    std::vector<Tensor> params = MakeParams(1.0f);
    EXPECT_EQ(exe.Execute(params).status().code(),
              absl::StatusCode::kFailedPrecondition);
    ASSERT_TRUE(exe.SetConstants(params).ok());
    std::vector<Tensor> out = *exe.Execute(params);
    ExpectResult(out[0].data<float>(), 1.0f);
  }
}

// What the last on-caller step saw: its calls, thread and team size.
std::atomic<int> g_small_calls{0};
std::thread::id g_small_thread;
int64_t g_small_team = 0;

void RecordingAddStep(const KernelFrame* frame) {
  g_small_calls.fetch_add(1);
  g_small_thread = std::this_thread::get_id();
  g_small_team = frame->num_threads;
  AddStep(frame);  // its barrier, in a team of one, returns at once
}

TEST(ExecutableTest, OnCallerStepsRunOnceOnTheCallingThread) {
  Program p = MakeProgram();
  p.steps[0].fn = &RecordingAddStep;
  p.steps[0].on_caller = true;
  Executable exe(std::move(p), nullptr, 3);
  std::vector<Tensor> params = MakeParams(2.0f);
  ASSERT_TRUE(exe.SetConstants(params).ok());
  g_small_calls = 0;
  std::vector<Tensor> out = *exe.Execute(params);
  ExpectResult(out[0].data<float>(), 2.0f);
  EXPECT_EQ(g_small_calls.load(), 1);
  EXPECT_EQ(g_small_thread, std::this_thread::get_id());
  EXPECT_EQ(g_small_team, 1);
}

TEST(ExecutableTest, ExecuteAllocatesNothingAfterTheFirstRun) {
  if (!HGC_COUNT_ALLOCATIONS) {
    GTEST_SKIP() << "allocations are not counted under a sanitizer, which "
                    "replaces malloc itself";
  }
  Executable exe(MakeProgram(), nullptr, 2);
  std::vector<Tensor> params = MakeParams(0.5f);
  ASSERT_TRUE(exe.SetConstants(params).ok());
  Tensor out = *Tensor::Create(TensorType(DType::kF32, {kSize}));
  const void* inputs[] = {params[0].raw(), nullptr};
  void* outputs[] = {out.mutable_raw()};
  ASSERT_TRUE(exe.Execute(inputs, outputs).ok());  // may allocate scratch
  int64_t before = g_allocations.load();
  for (int rep = 0; rep < 100; ++rep) ASSERT_TRUE(exe.Execute(inputs, outputs).ok());
  EXPECT_EQ(g_allocations.load() - before, 0);
  ExpectResult(out.data<float>(), 0.5f);
}

TEST(ExecutableTest, ConcurrentCallsEachGetTheirOwnScratch) {
  Executable exe(MakeProgram(), nullptr, 2);
  ASSERT_TRUE(exe.SetConstants(MakeParams(1.0f)).ok());
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      std::vector<Tensor> params = MakeParams(static_cast<float>(c + 1));
      for (int rep = 0; rep < 50; ++rep) {
        std::vector<Tensor> out = *exe.Execute(params);
        for (int64_t i = 0; i < kSize; ++i) {
          int64_t j = kSize - 1 - i;
          if (out[0].data<float>()[i] != (c + 1) * j + 2 * (1.0f + j % 7)) {
            failures.fetch_add(1);
            break;
          }
        }
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ExecutableTest, RunsOnOpenMP) {
  for (int threads : {1, 2, 3}) {
    Executable exe(MakeProgram(), nullptr, threads, Threading::kOpenMP);
    EXPECT_EQ(exe.threading(), Threading::kOpenMP);
    std::vector<Tensor> params = MakeParams(1.0f);
    ASSERT_TRUE(exe.SetConstants(params).ok());
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<Tensor> out = *exe.Execute(params);
      ExpectResult(out[0].data<float>(), 1.0f);
    }
  }
}

// A shared step runs on every thread of the pool (or of OpenMP), each
// call with its own part: here each part negates its share of the output.
void ExpectSharedStepRunsOncePerThread(Threading threading) {
  for (int threads : {1, 2, 3}) {
    Program p = MakeProgram();
    auto calls = std::make_shared<std::atomic<int>>(0);
    Step negate;
    negate.name = "negate";
    negate.buffers = {BufferRef::Output(0)};
    negate.shared = [calls](void* const* buffers, int part, int parts) {
      calls->fetch_add(1);
      float* out = static_cast<float*>(buffers[0]);
      for (int64_t i = kSize * part / parts; i < kSize * (part + 1) / parts;
           ++i) {
        out[i] = -out[i];
      }
    };
    p.steps.push_back(negate);
    Executable exe(std::move(p), nullptr, threads, threading);
    std::vector<Tensor> params = MakeParams(1.0f);
    ASSERT_TRUE(exe.SetConstants(params).ok());
    std::vector<Tensor> out = *exe.Execute(params);
    for (int64_t i = 0; i < kSize; ++i) {
      const int64_t j = kSize - 1 - i;
      ASSERT_EQ(out[0].data<float>()[i], -(1.0f * j + 2 * (1.0f + j % 7))) << i;
    }
    EXPECT_EQ(calls->load(), threads);
  }
}

TEST(ExecutableTest, SharedStepsRunOncePerThreadWithTheirPart) {
  ExpectSharedStepRunsOncePerThread(Threading::kOwnPool);
}

// (Named for OpenMP: the ThreadSanitizer run filters these out, as it
// cannot see libgomp's own synchronization.)
TEST(ExecutableTest, SharedStepsRunOnOpenMP) {
  ExpectSharedStepRunsOncePerThread(Threading::kOpenMP);
}

// A host step after the parallel step that fails: Execute returns its
// error, and the step after it does not run.
TEST(ExecutableTest, AFailingHostStepFailsExecute) {
  Program p = MakeProgram();
  std::atomic<int> later_runs{0};
  Step fail;
  fail.name = "failing_step";
  fail.host = [](void* const*) {
    return absl::InternalError("the step could not run");
  };
  p.steps.push_back(fail);
  Step later;
  later.name = "later";
  later.host = [&later_runs](void* const*) {
    later_runs.fetch_add(1);
    return absl::OkStatus();
  };
  p.steps.push_back(later);
  Executable exe(std::move(p), nullptr, 2);
  std::vector<Tensor> params = MakeParams(1.0f);
  ASSERT_TRUE(exe.SetConstants(params).ok());
  absl::StatusOr<std::vector<Tensor>> out = exe.Execute(params);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(out.status().message(),
            "step failing_step: the step could not run");
  EXPECT_EQ(later_runs.load(), 0);
}

TEST(ExecutableTest, AFailingInitStepFailsSetConstants) {
  Program p = MakeProgram();
  p.init_steps[0].host = [](void* const*) {
    return absl::ResourceExhaustedError("no memory");
  };
  Executable exe(std::move(p), nullptr, 1);
  std::vector<Tensor> params = MakeParams(1.0f);
  absl::Status status = exe.SetConstants(params);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(), "step double_w: no memory");
  // The constants are not usable: Execute refuses to run on them.
  EXPECT_EQ(exe.Execute(params).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// Each step's wall time lands in its own entry and accumulates over runs.
// A host step that sleeps gives a lower bound that holds on any machine.
TEST(ExecutableTest, ExecuteProfiledAddsEachStepsTime) {
  Program p = MakeProgram();
  Step sleepy;
  sleepy.name = "sleepy";
  sleepy.host = [](void* const*) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    return absl::OkStatus();
  };
  p.steps.push_back(sleepy);
  Executable exe(std::move(p), nullptr, 2);
  std::vector<Tensor> params = MakeParams(1.0f);
  ASSERT_TRUE(exe.SetConstants(params).ok());
  Tensor out = *Tensor::Create(TensorType(DType::kF32, {kSize}));
  const void* inputs[] = {params[0].raw(), nullptr};
  void* outputs[] = {out.mutable_raw()};
  std::vector<double> seconds(2, 0.0);
  ASSERT_TRUE(
      exe.ExecuteProfiled(inputs, outputs, absl::MakeSpan(seconds)).ok());
  ExpectResult(out.data<float>(), 1.0f);
  EXPECT_GT(seconds[0], 0.0);
  EXPECT_GE(seconds[1], 0.003);
  const double first = seconds[1];
  ASSERT_TRUE(
      exe.ExecuteProfiled(inputs, outputs, absl::MakeSpan(seconds)).ok());
  EXPECT_GE(seconds[1], first + 0.003);
  std::vector<double> wrong(1, 0.0);
  EXPECT_EQ(exe.ExecuteProfiled(inputs, outputs, absl::MakeSpan(wrong)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ExecutableTest, RejectsWrongArguments) {
  Executable exe(MakeProgram(), nullptr, 1);
  std::vector<Tensor> params = MakeParams(1.0f);
  EXPECT_FALSE(exe.SetConstants({params[0]}).ok());
  Tensor small = *Tensor::Create(TensorType(DType::kF32, {3}));
  EXPECT_FALSE(exe.SetConstants({params[0], small}).ok());
  ASSERT_TRUE(exe.SetConstants(params).ok());
  EXPECT_FALSE(exe.Execute({small, params[1]}).ok());
}

}  // namespace
}  // namespace hgc
