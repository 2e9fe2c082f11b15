#include "runtime/executable.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "support/aligned_buffer.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

// The barrier of a team of one: nothing to wait for.
void NoBarrier(void*) {}

}  // namespace

// Per-call memory: the arena and the pointer tables of every step, sized
// once so that executing never allocates.
struct Executable::Scratch {
  std::shared_ptr<uint8_t> arena;
  std::vector<std::vector<void*>> pointers;  // one table per step
};

Executable::Executable(Program program, std::shared_ptr<void> code_owner,
                       int num_threads, Threading threading)
    : program_(std::move(program)),
      code_owner_(std::move(code_owner)),
      pool_(num_threads, threading) {
  bool has_const = false;
  for (bool c : program_.param_is_const) has_const = has_const || c;
  constants_bound_ = !has_const;
}

Executable::~Executable() = default;

std::unique_ptr<Executable::Scratch> Executable::AcquireScratch() {
  {
    std::lock_guard<std::mutex> lock(scratch_mutex_);
    if (!free_scratch_.empty()) {
      std::unique_ptr<Scratch> s = std::move(free_scratch_.back());
      free_scratch_.pop_back();
      return s;
    }
  }
  auto scratch = std::make_unique<Scratch>();
  scratch->arena = AllocateBuffer(program_.arena_bytes);
  for (const Step& step : program_.steps) {
    scratch->pointers.emplace_back(step.buffers.size(), nullptr);
  }
  return scratch;
}

void Executable::ReleaseScratch(std::unique_ptr<Scratch> scratch) {
  std::lock_guard<std::mutex> lock(scratch_mutex_);
  free_scratch_.push_back(std::move(scratch));
}

absl::Status Executable::RunSteps(const std::vector<Step>& steps,
                                  Scratch& scratch, const void* const* inputs,
                                  void* const* outputs, double* step_seconds) {
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start =
        step_seconds != nullptr ? Clock::now() : Clock::time_point();
    // Runs on every exit from this iteration (continue included).
    absl::Cleanup timed = [&] {
      if (step_seconds == nullptr) return;
      step_seconds[s] +=
          std::chrono::duration<double>(Clock::now() - start).count();
    };
    std::vector<void*>& table = scratch.pointers[s];
    for (size_t b = 0; b < step.buffers.size(); ++b) {
      const BufferRef& ref = step.buffers[b];
      switch (ref.kind) {
        case BufferRef::Kind::kInput:
          table[b] = const_cast<void*>(inputs[ref.index]);
          break;
        case BufferRef::Kind::kOutput:
          table[b] = outputs[ref.index];
          break;
        case BufferRef::Kind::kConstant:
          table[b] = program_.constants[ref.index].mutable_raw();
          break;
        case BufferRef::Kind::kArena:
          table[b] = scratch.arena.get() + ref.offset;
          break;
      }
    }
    if (step.host) {
      absl::Status status = step.host(table.data());
      if (!status.ok()) {
        return absl::Status(
            status.code(),
            absl::StrCat("step ", step.name, ": ", status.message()));
      }
      continue;
    }
    if (step.shared) {
      pool_.Run([&](int thread_id, int team_size) {
        step.shared(table.data(), thread_id, team_size);
      });
      continue;
    }
    if (step.on_caller) {
      KernelFrame frame{table.data(), step.kernels.data(), 0, 1, &NoBarrier,
                        nullptr};
      step.fn(&frame);
      continue;
    }
    pool_.Run([&](int thread_id, int team_size) {
      KernelFrame frame{table.data(), step.kernels.data(),          thread_id,
                        team_size,    &ThreadPool::BarrierCallback, &pool_};
      step.fn(&frame);
    });
  }
  return absl::OkStatus();
}

absl::Status Executable::SetConstants(absl::Span<const Tensor> params) {
  if (params.size() != program_.param_types.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("SetConstants: expected ", program_.param_types.size(),
                     " tensors (one per parameter), got ", params.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    int64_t slot = program_.param_constant_slot[i];
    if (slot < 0) continue;
    if (params[i].type() != program_.param_types[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("constant parameter ", i, " must be ",
                       program_.param_types[i].ToString(), ", got ",
                       params[i].type().ToString()));
    }
    std::memcpy(program_.constants[slot].mutable_raw(), params[i].raw(),
                params[i].size_in_bytes());
  }
  if (!program_.init_steps.empty()) {
    Scratch init;
    init.arena = AllocateBuffer(program_.init_arena_bytes);
    for (const Step& step : program_.init_steps) {
      init.pointers.emplace_back(step.buffers.size(), nullptr);
    }
    // Half-initialized constants must not be used: until a SetConstants
    // succeeds, Execute refuses to run.
    constants_bound_ = false;
    HGC_RETURN_IF_ERROR(RunSteps(program_.init_steps, init, nullptr, nullptr));
  }
  constants_bound_ = true;
  return absl::OkStatus();
}

absl::Status Executable::Execute(absl::Span<const void* const> inputs,
                                 absl::Span<void* const> outputs) {
  return ExecuteProfiled(inputs, outputs, {});
}

absl::Status Executable::ExecuteProfiled(absl::Span<const void* const> inputs,
                                         absl::Span<void* const> outputs,
                                         absl::Span<double> step_seconds) {
  if (!step_seconds.empty() && step_seconds.size() != program_.steps.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ExecuteProfiled: expected ", program_.steps.size(),
                     " step times (one per step), got ", step_seconds.size()));
  }
  if (!constants_bound_) {
    return absl::FailedPreconditionError(
        "the graph has const parameters: call SetConstants first");
  }
  if (inputs.size() != program_.param_types.size() ||
      outputs.size() != program_.result_types.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Execute: expected ", program_.param_types.size(),
                     " inputs and ", program_.result_types.size(),
                     " outputs, got ", inputs.size(), " and ", outputs.size()));
  }
  std::unique_ptr<Scratch> scratch = AcquireScratch();
  absl::Status status =
      RunSteps(program_.steps, *scratch, inputs.data(), outputs.data(),
               step_seconds.empty() ? nullptr : step_seconds.data());
  ReleaseScratch(std::move(scratch));
  return status;
}

absl::StatusOr<std::vector<Tensor>> Executable::Execute(
    absl::Span<const Tensor> params) {
  if (params.size() != program_.param_types.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Execute: expected ", program_.param_types.size(),
                     " tensors, got ", params.size()));
  }
  std::vector<const void*> inputs;
  for (size_t i = 0; i < params.size(); ++i) {
    if (program_.param_constant_slot[i] >= 0) {
      inputs.push_back(nullptr);
      continue;
    }
    if (params[i].type() != program_.param_types[i]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter ", i, " must be ", program_.param_types[i].ToString(),
          ", got ", params[i].type().ToString()));
    }
    inputs.push_back(params[i].raw());
  }
  std::vector<Tensor> results;
  std::vector<void*> outputs;
  for (const TensorType& type : program_.result_types) {
    HGC_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(type));
    outputs.push_back(t.mutable_raw());
    results.push_back(std::move(t));
  }
  HGC_RETURN_IF_ERROR(Execute(inputs, outputs));
  return results;
}

}  // namespace hgc
