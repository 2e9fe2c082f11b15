// PrimitiveExecutor::Create (baseline/primitive_executor.h): the plan. Every
// value gets a buffer slot, every op a step: the oneDNN primitive its
// builder (baseline/primitives/) makes, with the ops fused into it as
// post-ops, or else the reference interpreter's kernel; graph results are
// claimed as outputs or copied there; the remaining buffers are allocated
// and bound once.
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "baseline/primitive_executor.h"
#include "baseline/primitive_executor_impl.h"
#include "baseline/primitives/common.h"
#include "ir/op_registry.h"
#include "reference/reference_interpreter.h"
#include "support/status_macros.h"

namespace hgc {

using primitive_internal::BuildContext;
using primitive_internal::BuildOptions;
using primitive_internal::Built;
using primitive_internal::OmpThreads;
using primitive_internal::OpLabel;
using primitive_internal::RunState;
using primitive_internal::Slot;
using primitive_internal::SlotKind;
using primitive_internal::Step;

namespace {

// An op no primitive computes: the reference interpreter's kernel.
class FallbackStep : public Step {
 public:
  FallbackStep(const Op& op, std::vector<int> operand_slots, int result_slot)
      : op_(op),
        operand_slots_(std::move(operand_slots)),
        result_slot_(result_slot),
        staging_(op.num_operands()) {}

  absl::Status Execute(const RunState& state, dnnl::stream&) override {
    std::vector<Tensor> operands;
    operands.reserve(operand_slots_.size());
    for (size_t i = 0; i < operand_slots_.size(); ++i) {
      const int s = operand_slots_[i];
      const TensorType& want = op_.operand(static_cast<int>(i))->type();
      const Tensor* t = state.tensor[s];
      if (t != nullptr && t->type() == want) {
        operands.push_back(*t);
        continue;
      }
      // A reshape alias: the same bytes under the operand's type.
      if (staging_[i].type() != want || staging_[i].raw() == nullptr) {
        HGC_ASSIGN_OR_RETURN(staging_[i], Tensor::Create(want));
      }
      if (staging_[i].size_in_bytes() > 0) {
        std::memcpy(staging_[i].mutable_raw(), state.ptr[s],
                    staging_[i].size_in_bytes());
      }
      operands.push_back(staging_[i]);
    }
    absl::StatusOr<Tensor> result = EvaluateOp(op_, operands);
    if (!result.ok()) {
      return absl::Status(result.status().code(),
                          absl::StrCat(OpLabel(op_), " (reference fallback): ",
                                       result.status().message()));
    }
    if (result->size_in_bytes() > 0) {
      std::memcpy(state.ptr[result_slot_], result->raw(),
                  result->size_in_bytes());
    }
    return absl::OkStatus();
  }

 private:
  const Op& op_;
  std::vector<int> operand_slots_;
  int result_slot_;
  std::vector<Tensor> staging_;
};

// A graph result whose bytes live elsewhere (a parameter, a constant, a
// value returned twice): copied into the output.
class CopyStep : public Step {
 public:
  CopyStep(int src_slot, int output, int64_t bytes)
      : src_slot_(src_slot), output_(output), bytes_(bytes) {}
  absl::Status Execute(const RunState& state, dnnl::stream&) override {
    if (bytes_ > 0) {
      std::memcpy(state.out_ptr[output_], state.ptr[src_slot_], bytes_);
    }
    return absl::OkStatus();
  }

 private:
  int src_slot_;
  int output_;
  int64_t bytes_;
};

using OpBuilderFn = absl::StatusOr<Built> (*)(const Op&, BuildContext&);

// The primitive builder of `kind`; nullptr for the kinds that run as
// reference steps (or as views: reshape).
OpBuilderFn BuilderFor(OpKind kind) {
  using namespace primitive_internal;  // NOLINT
  switch (OpClassOf(kind)) {
    case OpClass::kMatmul:
      return BuildMatmul;
    case OpClass::kUnary:
      return BuildEltwise;
    case OpClass::kBinary:
    case OpClass::kComparison:
      return BuildBinary;
    case OpClass::kNormalization:
      return kind == OpKind::kSoftmax ? BuildSoftmax : BuildLayernorm;
    case OpClass::kReduction:
      return BuildReduce;
    case OpClass::kShape:
      return kind == OpKind::kTranspose ? BuildTranspose : nullptr;
    case OpClass::kCast:
      return BuildCast;
    case OpClass::kQuant:
      return kind == OpKind::kQuantize ? BuildQuantize : BuildDequantize;
    case OpClass::kSelect:
    case OpClass::kConstant:
    case OpClass::kFusion:
    case OpClass::kUnknown:
      return nullptr;
  }
  return nullptr;
}

// Ops the executor cannot run at all.
absl::Status CheckSupported(const Op& op) {
  if (op.kind_id() == OpKind::kFusion ||
      OpRegistry::Get().Find(op.kind_id()) == nullptr ||
      !HasReferenceKernel(op.kind())) {
    return absl::UnimplementedError(absl::StrCat(
        "primitive executor: op '", op.kind(), "' (", OpLabel(op),
        ") is not supported; it runs entry graphs of design.md's ops"));
  }
  if (op.num_results() != 1) {
    return absl::UnimplementedError(
        absl::StrCat("primitive executor: ", OpLabel(op), " has ",
                     op.num_results(), " results"));
  }
  std::vector<TensorType> operand_types;
  for (const Value* v : op.operands()) operand_types.push_back(v->type());
  std::vector<TensorType> declared;
  if (op.kind_id() == OpKind::kConstant)
    declared.push_back(op.result()->type());
  absl::StatusOr<std::vector<TensorType>> inferred =
      InferResultTypes(op.kind(), operand_types, op.attrs(), declared);
  if (!inferred.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("primitive executor: ", OpLabel(op), ": ",
                     inferred.status().message()));
  }
  if (inferred->size() != 1 || (*inferred)[0] != op.result()->type()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "primitive executor: ", OpLabel(op), " has result type ",
        op.result()->type().ToString(), ", inference gives another"));
  }
  return absl::OkStatus();
}

// Gives every value its slot up front, so that a post-op fused into an
// earlier matmul can read an operand computed after the matmul (the fused
// step runs where its last post-op stood). Constants are materialized
// here; a reshape aliases its operand.
absl::Status DefineSlots(const std::vector<const Op*>& ops, BuildContext& ctx) {
  for (const Op* op : ops) {
    for (const Value* v : op->operands()) {
      if (ctx.SlotOf(v) < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("primitive executor: ", OpLabel(*op),
                         " uses a value not defined before it in the graph"));
      }
    }
    if (op->kind_id() == OpKind::kConstant) {
      absl::StatusOr<Tensor> value = EvaluateOp(*op, {});
      if (!value.ok()) {
        return absl::Status(
            value.status().code(),
            absl::StrCat(OpLabel(*op), ": ", value.status().message()));
      }
      ctx.AddConstantSlot(op->result(), *std::move(value));
    } else if (op->kind_id() == OpKind::kReshape) {
      ctx.AddAlias(op->result(), ctx.SlotOf(op->operand(0)));
    } else {
      ctx.DefineResult(op->result());
    }
  }
  return absl::OkStatus();
}

// The reference step of `op` (the `index`th op), which no primitive
// computes for `reason`; marks the slots it reads and writes as used.
std::unique_ptr<Step> MakeFallbackStep(const Op& op, int index,
                                       absl::string_view reason,
                                       BuildContext& ctx,
                                       std::vector<bool>& slot_used) {
  std::vector<int> operand_slots;
  for (const Value* v : op.operands()) {
    operand_slots.push_back(ctx.SlotOf(v));
    slot_used[ctx.SlotOf(v)] = true;
  }
  slot_used[ctx.SlotOf(op.result())] = true;
  auto step = std::make_unique<FallbackStep>(op, std::move(operand_slots),
                                             ctx.DefineResult(op.result()));
  step->info.description = absl::StrCat("ref:", op.kind());
  step->info.impl = "reference";
  step->info.fallback = true;
  step->info.fallback_reason = std::string(reason);
  step->info.op_label = OpLabel(op);
  step->order = index;
  return step;
}

// One step per op not claimed by another's primitive (constants and
// reshapes need none): its primitive, with the ops it absorbed claimed and
// its order that of the last of them, or else (if allowed) its reference
// step.
absl::Status BuildOpSteps(const std::vector<const Op*>& ops,
                          absl::flat_hash_map<const Op*, int>& op_index,
                          const PrimitiveExecutor::Options& options,
                          BuildContext& ctx,
                          std::vector<std::unique_ptr<Step>>& steps,
                          std::vector<bool>& slot_used) {
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    const Op& op = *ops[i];
    if (ctx.IsClaimed(&op) || op.kind_id() == OpKind::kConstant ||
        op.kind_id() == OpKind::kReshape) {
      continue;
    }
    OpBuilderFn builder = BuilderFor(op.kind_id());
    absl::StatusOr<Built> built =
        builder != nullptr ? builder(op, ctx)
                           : absl::StatusOr<Built>(absl::UnimplementedError(
                                 "no oneDNN primitive for this op"));
    if (built.ok()) {
      int order = i;
      for (const Op* a : built->absorbed) {
        ctx.Claim(a);
        order = std::max(order, op_index[a]);
      }
      built->step->order = order;
      steps.push_back(std::move(built->step));
      continue;
    }
    if (built.status().code() != absl::StatusCode::kUnimplemented) {
      return absl::Status(built.status().code(),
                          absl::StrCat("primitive executor: ", OpLabel(op),
                                       ": ", built.status().message()));
    }
    if (!options.allow_fallback) {
      return absl::UnimplementedError(
          absl::StrCat("primitive executor: ", OpLabel(op),
                       " has no oneDNN primitive (fallbacks are off): ",
                       built.status().message()));
    }
    steps.push_back(
        MakeFallbackStep(op, i, built.status().message(), ctx, slot_used));
  }
  return absl::OkStatus();
}

// Results: an op result not yet claimed is written straight into the
// output; anything else is copied there at the end.
absl::Status PlaceResults(const Graph& graph, BuildContext& ctx,
                          std::vector<std::unique_ptr<Step>>& steps,
                          std::vector<bool>& slot_used) {
  std::vector<Slot>& slots = ctx.slots();
  const std::vector<Value*>& results = graph.results();
  for (int i = 0; i < static_cast<int>(results.size()); ++i) {
    const int s = ctx.SlotOf(results[i]);
    if (s < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("primitive executor: result ", i, " is not computed"));
    }
    if (slots[s].kind == SlotKind::kIntermediate && slots[s].output_index < 0) {
      slots[s].output_index = i;
      continue;
    }
    slot_used[s] = true;
    auto copy =
        std::make_unique<CopyStep>(s, i, results[i]->type().SizeInBytes());
    copy->info.description = "copy";
    copy->info.impl = "memcpy";
    copy->info.op_label = absl::StrCat("return ", i);
    copy->order = INT_MAX;
    steps.push_back(std::move(copy));
  }
  return absl::OkStatus();
}

// Whether `slot`'s buffer is owned by the executor (a constant, or an
// intermediate that is not an output).
bool IsOwned(const Slot& slot) {
  return slot.kind == SlotKind::kConstant ||
         (slot.kind == SlotKind::kIntermediate && slot.output_index < 0);
}

// Buffers: one per unclaimed intermediate that some step reads or writes
// (values fused away into a matmul need none), allocated now.
absl::Status AllocateBuffers(std::vector<Slot>& slots,
                             const std::vector<bool>& slot_used) {
  for (size_t s = 0; s < slots.size(); ++s) {
    Slot& slot = slots[s];
    if (slot.kind == SlotKind::kIntermediate && slot.output_index < 0 &&
        slot_used[s]) {
      HGC_ASSIGN_OR_RETURN(slot.owned, Tensor::Create(slot.type));
    }
  }
  return absl::OkStatus();
}

// Binds each memory over an owned buffer once; the indices of the others
// (rebound on every run) go to `dynamic_bindings`.
absl::Status BindOwnedMemories(
    std::vector<std::pair<dnnl::memory, int>>& bindings,
    std::vector<Slot>& slots, std::vector<int>& dynamic_bindings) {
  try {
    for (int b = 0; b < static_cast<int>(bindings.size()); ++b) {
      auto& [mem, s] = bindings[b];
      if (IsOwned(slots[s])) {
        mem.set_data_handle(slots[s].owned.mutable_raw());
      } else {
        dynamic_bindings.push_back(b);
      }
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("oneDNN: ", e.what()));
  }
  return absl::OkStatus();
}

// Sizes the run state for `slots` and `num_results` outputs, pointing the
// owned slots at their buffers.
void InitRunState(std::vector<Slot>& slots, int num_results, RunState& state) {
  state.ptr.assign(slots.size(), nullptr);
  state.tensor.assign(slots.size(), nullptr);
  state.out_ptr.assign(num_results, nullptr);
  for (size_t s = 0; s < slots.size(); ++s) {
    Slot& slot = slots[s];
    if (IsOwned(slot)) {
      state.ptr[s] = slot.owned.mutable_raw();
      state.tensor[s] = &slot.owned;
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<PrimitiveExecutor>> PrimitiveExecutor::Create(
    const Graph& graph, const Options& options) {
  if (options.num_threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_threads must be >= 1, found ", options.num_threads));
  }
  for (const auto& op : graph.ops()) HGC_RETURN_IF_ERROR(CheckSupported(*op));
  OmpThreads threads(options.num_threads);

  auto impl = std::make_unique<Impl>();
  impl->graph = &graph;
  try {
    impl->engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
    impl->stream = dnnl::stream(impl->engine);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("oneDNN CPU engine: ", e.what()));
  }
  BuildOptions build_options;
  build_options.fuse_post_ops = options.fuse_post_ops;
  BuildContext ctx(graph, impl->engine, build_options);

  for (const auto& p : graph.params()) {
    impl->param_slot.push_back(ctx.AddParamSlot(p.get()));
    impl->has_const_params |= p->is_const();
  }

  std::vector<const Op*> ops;
  absl::flat_hash_map<const Op*, int> op_index;
  for (const auto& op : graph.ops()) {
    op_index[op.get()] = static_cast<int>(ops.size());
    ops.push_back(op.get());
  }
  HGC_RETURN_IF_ERROR(DefineSlots(ops, ctx));
  PlanInt8Matmuls(ops, ctx);

  std::vector<std::unique_ptr<Step>> steps;
  std::vector<bool> slot_used(ctx.slots().size(), false);
  HGC_RETURN_IF_ERROR(
      BuildOpSteps(ops, op_index, options, ctx, steps, slot_used));
  HGC_RETURN_IF_ERROR(PlaceResults(graph, ctx, steps, slot_used));
  std::stable_sort(
      steps.begin(), steps.end(),
      [](const std::unique_ptr<Step>& a, const std::unique_ptr<Step>& b) {
        return a->order < b->order;
      });

  std::vector<Slot>& slots = ctx.slots();
  impl->bindings = ctx.bindings();
  for (const auto& [mem, s] : impl->bindings) slot_used[s] = true;
  HGC_RETURN_IF_ERROR(AllocateBuffers(slots, slot_used));
  HGC_RETURN_IF_ERROR(
      BindOwnedMemories(impl->bindings, slots, impl->dynamic_bindings));

  impl->slots = std::move(slots);
  impl->steps = std::move(steps);
  impl->const_inputs.resize(graph.num_params());
  InitRunState(impl->slots, static_cast<int>(graph.results().size()),
               impl->state);

  std::unique_ptr<PrimitiveExecutor> executor(
      new PrimitiveExecutor(std::move(impl), options));
  for (const auto& step : executor->impl_->steps) {
    executor->step_infos_.push_back(step->info);
  }
  if (!executor->impl_->has_const_params) {
    // Weights that are `constant` ops are prepacked right away.
    for (const auto& step : executor->impl_->steps) {
      HGC_RETURN_IF_ERROR(step->PrepareConstants(executor->impl_->state,
                                                 executor->impl_->stream));
    }
    executor->impl_->constants_ready = true;
  }
  return executor;
}

}  // namespace hgc
