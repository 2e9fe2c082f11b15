// Executable: a compiled graph. It owns the generated code (through an
// opaque owner handle), the constant cache, and the plan of its scratch
// arena, and executes on caller-owned buffers.
//
//   - SetConstants binds the `const` parameters: it copies them into the
//     constant cache and runs the init steps (prepacking, everything that
//     depends only on constants) once, in an init arena allocated for the
//     call.
//   - Execute runs the main steps. Each call takes a scratch (the arena
//     and the steps' pointer tables) from a pool and returns it when done;
//     a new one is allocated only when none is free: on the first call,
//     and when more calls run at once than ever before. Compiled steps,
//     shared steps and the copy, pack, transpose and reduction host steps
//     allocate nothing, but a fallback step (an op the portable kernels
//     evaluate, named fallback.OP.VALUE; `hgc --stats` counts
//     them) allocates its operands and result on every run. So Execute is
//     allocation-free after the first call only for a program without
//     fallback steps. Concurrent calls are safe (each has its own scratch)
//     and share the persistent thread pool (or run on the caller's OpenMP
//     runtime, Threading::kOpenMP).
//   - A host step that fails stops the run: SetConstants and Execute
//     return the first step's error (prefixed with the step's name); the
//     outputs are then unspecified.
#ifndef HGC_RUNTIME_EXECUTABLE_H_
#define HGC_RUNTIME_EXECUTABLE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "ir/tensor.h"
#include "runtime/kernel_abi.h"
#include "runtime/thread_pool.h"
#include "runtime/threading.h"

namespace hgc {

// Where a step finds one of its buffers.
struct BufferRef {
  enum class Kind : uint8_t {
    kInput,     // graph parameter `index` (non-const)
    kOutput,    // graph result `index`
    kConstant,  // constant cache slot `index`
    kArena,     // scratch arena at byte `offset`
  };
  Kind kind = Kind::kArena;
  int64_t index = 0;
  int64_t offset = 0;

  static BufferRef Input(int64_t i) { return {Kind::kInput, i, 0}; }
  static BufferRef Output(int64_t i) { return {Kind::kOutput, i, 0}; }
  static BufferRef Constant(int64_t i) { return {Kind::kConstant, i, 0}; }
  static BufferRef Arena(int64_t offset) { return {Kind::kArena, 0, offset}; }
};

// One unit of work: compiled code run on every pool thread (or, when
// `on_caller`, on the calling thread alone as thread 0 of a team of one),
// host code run once (on the calling thread), or shared host code run on
// every pool thread, each call taking part `part` of `parts` (a copy split
// by rows). A host step returns its error; compiled and shared code cannot
// fail.
struct Step {
  std::string name;
  StepFn fn = nullptr;
  // Compiled for one thread: too little work to be worth waking the pool.
  bool on_caller = false;
  std::function<absl::Status(void* const* buffers)> host;
  std::function<void(void* const* buffers, int part, int parts)> shared;
  std::vector<BufferRef> buffers;
  std::vector<const void*> kernels;
};

// Everything codegen hands the runtime.
struct Program {
  std::vector<TensorType> param_types;
  std::vector<bool> param_is_const;
  std::vector<TensorType> result_types;
  // Constant cache slots: literal constants arrive filled; slots for const
  // parameters and init-step results arrive allocated (any contents).
  std::vector<Tensor> constants;
  // For each const parameter i, the constant slot it is copied into (-1 for
  // non-const parameters).
  std::vector<int64_t> param_constant_slot;
  std::vector<Step> init_steps;
  std::vector<Step> steps;
  int64_t arena_bytes = 0;
  // Arena bytes the init steps need (allocated only during SetConstants).
  int64_t init_arena_bytes = 0;
};

class Executable {
 public:
  // `code_owner` keeps the generated code alive as long as the executable.
  // Parallel steps run on `num_threads` threads of hgc's own pool or of the
  // caller's OpenMP runtime. When the system refuses threads the pool runs
  // on fewer (num_threads(); thread_status() says why).
  Executable(Program program, std::shared_ptr<void> code_owner, int num_threads,
             Threading threading = Threading::kOwnPool);
  ~Executable();

  const Program& program() const { return program_; }
  // What keeps the generated code alive; another Executable of the same
  // program may share it (hgc/compile_cache.h).
  const std::shared_ptr<void>& code_owner() const { return code_owner_; }
  int num_threads() const { return pool_.num_threads(); }
  Threading threading() const { return pool_.threading(); }
  const absl::Status& thread_status() const { return pool_.start_status(); }

  // Binds every const parameter from `params` (one tensor per graph
  // parameter; non-const entries are ignored and may be empty) and runs
  // the init steps. Must be called before Execute when the graph has const
  // parameters; may be called again to rebind.
  absl::Status SetConstants(absl::Span<const Tensor> params);

  // Runs the graph. `inputs` has one pointer per graph parameter (const
  // parameters' entries are ignored, may be null); `outputs` one per result,
  // each pointing at a buffer of the result type's size.
  absl::Status Execute(absl::Span<const void* const> inputs,
                       absl::Span<void* const> outputs);

  // Convenience: allocates the outputs (not allocation-free).
  absl::StatusOr<std::vector<Tensor>> Execute(absl::Span<const Tensor> params);

  // Execute, also adding each main step's wall time, as the calling thread
  // sees it (waking the pool and waiting for its slowest thread included),
  // to step_seconds[i]: one entry per program().steps entry, or none to
  // time nothing (InvalidArgument otherwise). For profiles
  // (`hgc --bench --profile`).
  absl::Status ExecuteProfiled(absl::Span<const void* const> inputs,
                               absl::Span<void* const> outputs,
                               absl::Span<double> step_seconds);

 private:
  struct Scratch;
  std::unique_ptr<Scratch> AcquireScratch();
  void ReleaseScratch(std::unique_ptr<Scratch> scratch);
  // Adds each step's wall time to step_seconds[i] when it is not null.
  absl::Status RunSteps(const std::vector<Step>& steps, Scratch& scratch,
                        const void* const* inputs, void* const* outputs,
                        double* step_seconds = nullptr);

  Program program_;
  std::shared_ptr<void> code_owner_;
  ThreadPool pool_;
  bool constants_bound_ = false;

  std::mutex scratch_mutex_;
  std::vector<std::unique_ptr<Scratch>> free_scratch_;
};

}  // namespace hgc

#endif  // HGC_RUNTIME_EXECUTABLE_H_
