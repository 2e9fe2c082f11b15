// PrimitiveExecutor's run side (baseline/primitive_executor.h): binding the
// const parameters (SetConstants) and each run's inputs and outputs to the
// planned slots, running the steps in order under the executor's OpenMP
// thread count, and the step reports. Create, the plan, is in
// primitive_executor_plan.cc.
#include "baseline/primitive_executor.h"

#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "baseline/primitive_executor_impl.h"
#include "support/status_macros.h"

namespace hgc {

using primitive_internal::OmpThreads;
using primitive_internal::RunState;
using primitive_internal::Slot;
using primitive_internal::SlotKind;

namespace {

absl::Status CheckInput(const Tensor& t, const Value* param) {
  if (t.type() != param->type()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "parameter %", param->name(), " has type ", param->type().ToString(),
        ", input has ", t.type().ToString()));
  }
  if (t.raw() == nullptr && t.num_elements() > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("input for parameter %", param->name(), " holds no data"));
  }
  return absl::OkStatus();
}

}  // namespace

PrimitiveExecutor::PrimitiveExecutor(std::unique_ptr<Impl> impl,
                                     Options options)
    : impl_(std::move(impl)), options_(options) {}

PrimitiveExecutor::~PrimitiveExecutor() = default;

absl::Status PrimitiveExecutor::RunIntoAndReleaseThreads(
    absl::Span<const Tensor> all_inputs, absl::Span<Tensor> outputs) {
  // libomp reads the blocktime when a region forks, so it is set for this
  // run's regions and restored for the next run's. Looked up at run time:
  // libgomp has no such call; there, the threads are released after the
  // run instead (OpenMP 5.0's omp_pause_resource_all ends libgomp's
  // worker threads, and the next parallel region starts new ones).
  using GetBlocktime = int (*)();
  using SetBlocktime = void (*)(int);
  static const auto get_blocktime =
      reinterpret_cast<GetBlocktime>(dlsym(RTLD_DEFAULT, "kmp_get_blocktime"));
  static const auto set_blocktime =
      reinterpret_cast<SetBlocktime>(dlsym(RTLD_DEFAULT, "kmp_set_blocktime"));
  if (get_blocktime == nullptr || set_blocktime == nullptr) {
    absl::Status status = RunInto(all_inputs, outputs);
    omp_pause_resource_all(omp_pause_soft);
    return status;
  }
  const int previous = get_blocktime();
  set_blocktime(0);
  absl::Status status = RunInto(all_inputs, outputs);
  set_blocktime(previous);
  return status;
}

absl::Status PrimitiveExecutor::SetConstants(
    absl::Span<const Tensor> all_inputs) {
  const Graph& graph = *impl_->graph;
  if (static_cast<int>(all_inputs.size()) != graph.num_params()) {
    return absl::InvalidArgumentError(
        absl::StrCat("SetConstants: expected ", graph.num_params(),
                     " tensors (one per parameter), got ", all_inputs.size()));
  }
  for (int p = 0; p < graph.num_params(); ++p) {
    const Value* param = graph.param(p);
    if (!param->is_const()) continue;
    HGC_RETURN_IF_ERROR(CheckInput(all_inputs[p], param));
    impl_->const_inputs[p] = all_inputs[p];
    const int s = impl_->param_slot[p];
    impl_->state.ptr[s] = impl_->const_inputs[p].mutable_raw();
    impl_->state.tensor[s] = &impl_->const_inputs[p];
  }
  impl_->constants_ready = false;
  OmpThreads threads(options_.num_threads);
  try {
    for (int b : impl_->dynamic_bindings) {
      auto& [mem, s] = impl_->bindings[b];
      if (impl_->slots[s].kind == SlotKind::kConstParam) {
        mem.set_data_handle(impl_->state.ptr[s]);
      }
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("oneDNN: ", e.what()));
  }
  for (const auto& step : impl_->steps) {
    HGC_RETURN_IF_ERROR(step->PrepareConstants(impl_->state, impl_->stream));
  }
  impl_->constants_ready = true;
  return absl::OkStatus();
}

absl::Status PrimitiveExecutor::BindRun(absl::Span<const Tensor> all_inputs,
                                        absl::Span<Tensor> outputs) {
  const Graph& graph = *impl_->graph;
  if (!impl_->constants_ready) {
    return absl::FailedPreconditionError(
        "the graph has const parameters: call SetConstants before Run");
  }
  if (static_cast<int>(all_inputs.size()) != graph.num_params()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", graph.num_params(),
                     " inputs (one per parameter), got ", all_inputs.size()));
  }
  const std::vector<Value*>& results = graph.results();
  if (outputs.size() != results.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", results.size(), " outputs, got ", outputs.size()));
  }
  RunState& state = impl_->state;
  for (int p = 0; p < graph.num_params(); ++p) {
    const Value* param = graph.param(p);
    if (param->is_const()) continue;
    HGC_RETURN_IF_ERROR(CheckInput(all_inputs[p], param));
    const int s = impl_->param_slot[p];
    state.ptr[s] = const_cast<uint8_t*>(all_inputs[p].raw());
    state.tensor[s] = &all_inputs[p];
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const TensorType& type = results[i]->type();
    if (outputs[i].raw() == nullptr) {
      HGC_ASSIGN_OR_RETURN(outputs[i], Tensor::Create(type));
    }
    if (outputs[i].type() != type ||
        (outputs[i].raw() == nullptr && type.NumElements() > 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("output ", i, " must be a ", type.ToString(),
                       " tensor, found ", outputs[i].type().ToString()));
    }
    state.out_ptr[i] = outputs[i].mutable_raw();
  }
  for (size_t s = 0; s < impl_->slots.size(); ++s) {
    const Slot& slot = impl_->slots[s];
    if (slot.kind == SlotKind::kIntermediate && slot.output_index >= 0) {
      state.ptr[s] = outputs[slot.output_index].mutable_raw();
      state.tensor[s] = &outputs[slot.output_index];
    }
  }
  try {
    for (int b : impl_->dynamic_bindings) {
      auto& [mem, s] = impl_->bindings[b];
      mem.set_data_handle(state.ptr[s]);
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("oneDNN: ", e.what()));
  }
  return absl::OkStatus();
}

absl::Status PrimitiveExecutor::RunInto(absl::Span<const Tensor> all_inputs,
                                        absl::Span<Tensor> outputs) {
  HGC_RETURN_IF_ERROR(BindRun(all_inputs, outputs));
  OmpThreads threads(options_.num_threads);
  for (const auto& step : impl_->steps) {
    HGC_RETURN_IF_ERROR(step->Execute(impl_->state, impl_->stream));
  }
  try {
    impl_->stream.wait();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("oneDNN: ", e.what()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> PrimitiveExecutor::Run(
    absl::Span<const Tensor> all_inputs) {
  if (impl_->outputs.empty()) {
    for (const Value* r : impl_->graph->results()) {
      HGC_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(r->type()));
      impl_->outputs.push_back(std::move(t));
    }
  }
  HGC_RETURN_IF_ERROR(RunInto(all_inputs, absl::MakeSpan(impl_->outputs)));
  return impl_->outputs;
}

std::vector<std::string> PrimitiveExecutor::Describe() const {
  std::vector<std::string> out;
  for (const StepInfo& s : step_infos_) out.push_back(s.description);
  return out;
}

int PrimitiveExecutor::num_fallbacks() const {
  return static_cast<int>(
      std::count_if(step_infos_.begin(), step_infos_.end(),
                    [](const StepInfo& s) { return s.fallback; }));
}

int PrimitiveExecutor::num_primitives() const {
  return static_cast<int>(std::count_if(
      step_infos_.begin(), step_infos_.end(), [](const StepInfo& s) {
        return !s.fallback && s.description != "copy";
      }));
}

std::string PrimitiveExecutor::Summary() const {
  std::string out = absl::StrCat(
      "primitive executor: ", step_infos_.size(), " steps, ", num_primitives(),
      " oneDNN primitives, ", num_fallbacks(), " reference fallbacks (",
      options_.num_threads, " thread", options_.num_threads == 1 ? "" : "s",
      ", post-op fusion ", options_.fuse_post_ops ? "on" : "off", ")\n");
  for (const StepInfo& s : step_infos_) {
    absl::StrAppend(&out, "  ", s.description, "  [", s.impl, "]  ",
                    s.op_label);
    if (s.fallback) absl::StrAppend(&out, "  -- ", s.fallback_reason);
    absl::StrAppend(&out, "\n");
  }
  return out;
}

}  // namespace hgc
