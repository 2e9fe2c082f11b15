#include "codegen/compile.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/buffer_planning.h"
#include "codegen/jit_steps.h"
#include "codegen/llvm/elemental_emitter.h"
#include "codegen/llvm/jit.h"
#include "codegen/lower_attention.h"
#include "codegen/lower_elementwise.h"
#include "codegen/lower_matmul.h"
#include "codegen/lower_rowwise.h"
#include "codegen/lower_state.h"
#include "codegen/nest_buffers.h"
#include "codegen/reduce_step.h"
#include "codegen/tile_emitter.h"
#include "codegen/tile_ir.h"
#include "codegen/tile_verifier.h"
#include "codegen/transpose_step.h"
#include "ir/clone.h"
#include "runtime/portable/evaluate.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

using codegen::LowerState;

// Everything the executable's code refers to: the optimized module (the
// fallback steps evaluate its ops), the JIT and the BRGEMM kernels.
struct CodeOwner {
  Module module;
  std::unique_ptr<codegen::Jit> jit;
  std::vector<std::shared_ptr<const microkernels::BrgemmKernel>> kernels;
};

// A host step evaluating `op` with the portable kernels: buffers are
// the op's operands, then its result. Allocates per run (documented in
// compile.h); an allocation or evaluation error is the step's error.
Step FallbackStep(const Op& op, const LowerState& state) {
  Step step;
  step.name = absl::StrCat("fallback.", op.kind(), ".", op.result()->name());
  std::vector<TensorType> types;
  for (const Value* v : op.operands()) {
    step.buffers.push_back(state.refs.at(v));
    types.push_back(v->type());
  }
  step.buffers.push_back(state.refs.at(op.result()));
  const Op* op_ptr = &op;
  int64_t result_bytes = op.result()->type().SizeInBytes();
  step.host = [op_ptr, types, result_bytes](void* const* bufs) -> absl::Status {
    std::vector<Tensor> operands;
    operands.reserve(types.size());
    for (size_t i = 0; i < types.size(); ++i) {
      HGC_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(types[i]));
      std::memcpy(t.mutable_raw(), bufs[i], t.size_in_bytes());
      operands.push_back(std::move(t));
    }
    HGC_ASSIGN_OR_RETURN(Tensor r, portable::EvaluateOp(*op_ptr, operands));
    if (r.size_in_bytes() != result_bytes) {
      return absl::InternalError(absl::StrCat(
          "the portable kernels gave ", r.type().ToString(), " for ",
          op_ptr->kind(), " (", result_bytes, " bytes expected)"));
    }
    std::memcpy(bufs[types.size()], r.raw(), result_bytes);
    return absl::OkStatus();
  };
  return step;
}

// The reduction a lone reduce op or a "reduce" group of just that op
// computes (nullptr otherwise): such groups have nothing to fuse around it.
const Op* LoneReduction(const Op& op) {
  if (IsReduction(op.kind_id())) return &op;
  if (!IsRowGroup(op)) return nullptr;
  const Graph* body = FusionBody(op);
  if (body == nullptr || body->ops().size() != 1 ||
      body->results().size() != 1) {
    return nullptr;
  }
  const Op* r = body->ops().front().get();
  return IsReduction(r->kind_id()) && r->num_operands() == 1 &&
                 r->operand(0) == body->params()[0].get() &&
                 body->results()[0] == r->result() && op.num_operands() == 1
             ? r
             : nullptr;
}

// A result that reshapes a value nothing else reads has the same bytes:
// the value's op writes the output itself and the reshape moves nothing
// (up a chain of reshapes).
void ReshapedResultsWrittenDirectly(
    const Graph& graph, const ConstOnlyAnalysis& const_only,
    absl::flat_hash_map<const Value*, int>& direct_result) {
  absl::flat_hash_map<const Value*, int> uses;
  for (const auto& op : graph.ops()) {
    for (const Value* x : op->operands()) ++uses[x];
  }
  for (const Value* r : graph.results()) ++uses[r];
  for (const Value* r : graph.results()) {
    auto it = direct_result.find(r);
    if (it == direct_result.end()) continue;
    const int index = it->second;
    for (const Value* v = r; v->defining_op() != nullptr &&
                             v->defining_op()->kind_id() == OpKind::kReshape;) {
      const Value* x = v->defining_op()->operand(0);
      const Op* def = x->defining_op();
      if (def == nullptr || def->kind_id() == OpKind::kConstant ||
          const_only.IsConstOnly(def) || uses[x] != 1 ||
          direct_result.contains(x)) {
        break;
      }
      direct_result[x] = index;
      v = x;
    }
  }
}

// Where every value of `graph` lives: inputs, constant slots (const
// parameters, literal constants evaluated now, const-only ops filled by
// init steps), outputs written directly (`direct_result`) and the arena.
absl::Status AssignBuffers(
    const Graph& graph, const BufferPlan& plan, LowerState& state,
    absl::flat_hash_map<const Value*, int>& direct_result) {
  Program& program = *state.program;
  auto add_slot = [&](Tensor t) {
    program.constants.push_back(std::move(t));
    return static_cast<int64_t>(program.constants.size()) - 1;
  };
  for (int i = 0; i < graph.num_params(); ++i) {
    const Value* p = graph.param(i);
    program.param_types.push_back(p->type());
    program.param_is_const.push_back(p->is_const());
    if (p->is_const()) {
      HGC_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(p->type()));
      int64_t slot = add_slot(std::move(t));
      state.refs[p] = BufferRef::Constant(slot);
      program.param_constant_slot.push_back(slot);
    } else {
      state.refs[p] = BufferRef::Input(i);
      program.param_constant_slot.push_back(-1);
    }
  }
  // Results an op writes directly; the rest are copied at the end.
  const auto& results = graph.results();
  for (size_t i = 0; i < results.size(); ++i) {
    const Value* v = results[i];
    program.result_types.push_back(v->type());
    if (v->is_param() || direct_result.contains(v) ||
        v->defining_op()->kind_id() == OpKind::kConstant ||
        state.const_only->IsConstOnly(v->defining_op())) {
      continue;
    }
    direct_result[v] = static_cast<int>(i);
  }
  ReshapedResultsWrittenDirectly(graph, *state.const_only, direct_result);
  for (const auto& o : graph.ops()) {
    const Op& op = *o;
    const Value* v = op.result();
    if (op.kind_id() == OpKind::kConstant) {
      HGC_ASSIGN_OR_RETURN(Tensor t, portable::EvaluateOp(op, {}));
      state.refs[v] = BufferRef::Constant(add_slot(std::move(t)));
    } else if (state.const_only->IsConstOnly(&op)) {
      HGC_ASSIGN_OR_RETURN(Tensor t, Tensor::Create(v->type()));
      state.refs[v] = BufferRef::Constant(add_slot(std::move(t)));
      program.init_steps.push_back(FallbackStep(op, state));
    } else if (auto it = direct_result.find(v); it != direct_result.end()) {
      state.refs[v] = BufferRef::Output(it->second);
    } else if (auto it = plan.offsets.find(v); it != plan.offsets.end()) {
      state.refs[v] = BufferRef::Arena(it->second);
    } else {
      state.refs[v] =
          BufferRef::Arena(state.AllocArena(v->type().SizeInBytes()));
    }
  }
  return absl::OkStatus();
}

// Below both, a fused group runs on the calling thread alone: waking the
// pool and waiting for its slowest thread cost about a microsecond, more
// than a second thread saves on a 32 x 32 x 32 matmul or an add of 1024
// floats (and a descheduled thread on a shared host costs far more).
constexpr int64_t kSmallFlops = int64_t{1} << 17;
constexpr int64_t kSmallBytes = int64_t{1} << 15;

// Whether fusion op `op` does too little work to split over threads: its
// matmuls' 2·M·N·K plus an op per body element, and the bytes of its
// operands and result.
bool SmallGroup(const Op& op) {
  const Graph* body = FusionBody(op);
  if (body == nullptr) return false;
  int64_t bytes = op.result()->type().SizeInBytes();
  for (const Value* v : op.operands()) bytes += v->type().SizeInBytes();
  int64_t flops = 0;
  for (const auto& o : body->ops()) {
    const TensorType& t = o->result()->type();
    if (o->kind_id() == OpKind::kMatmul) {
      const TensorType& a = o->operand(0)->type();
      const Attribute* ta = o->FindAttr("transpose_a");
      const int64_t k =
          a.shape[a.shape.size() - (ta != nullptr && ta->as_bool() ? 2 : 1)];
      flops += 2 * t.NumElements() * k;
    } else {
      flops += t.NumElements();
    }
    if (flops > kSmallFlops) return false;
  }
  return bytes <= kSmallBytes;
}

// The nest of `op`'s native lowering for a step on `num_threads` threads
// (none for an op with nothing to compute); Unimplemented when no lowering
// covers it.
absl::StatusOr<std::optional<codegen::tile::Nest>> LowerToNest(
    LowerState& state, const Op& op, int num_threads) {
  if (op.kind_id() != OpKind::kFusion) {
    // A lone op outside any group: elementwise ops have a nest; the others
    // become LowerOp's host steps or fallbacks.
    if (codegen::IsElementalOp(op.kind_id())) {
      return codegen::LowerElementwise(state, op, num_threads);
    }
    return absl::UnimplementedError("no native lowering");
  }
  const std::optional<FusionKind> kind = FusionKindOf(op);
  if (!kind.has_value()) return absl::UnimplementedError("no native lowering");
  switch (*kind) {
    case FusionKind::kMatmul:
    case FusionKind::kMlp:
      return codegen::LowerMatmulGroup(state, op, num_threads);
    case FusionKind::kAttention:
      return codegen::LowerAttention(state, op, num_threads);
    case FusionKind::kSoftmax:
    case FusionKind::kLayernorm:
    case FusionKind::kReduce:
      return codegen::LowerRowwise(state, op);
    case FusionKind::kElementwise:
      return codegen::LowerElementwise(state, op, num_threads);
  }
  return absl::UnimplementedError("no native lowering");
}

// The bytes of frame buffer `ref` as the program lays it out so far (an
// arena region: up to the arena's end).
int64_t FrameBytes(const LowerState& state, const BufferRef& ref) {
  const Program& program = *state.program;
  switch (ref.kind) {
    case BufferRef::Kind::kInput:
      return program.param_types.at(ref.index).SizeInBytes();
    case BufferRef::Kind::kOutput:
      return program.result_types.at(ref.index).SizeInBytes();
    case BufferRef::Kind::kConstant:
      return program.constants.at(ref.index).size_in_bytes();
    case BufferRef::Kind::kArena:
      return state.arena_bytes - ref.offset;
  }
  return -1;
}

// The stage after a lowering: verifies `nest` (an error is a bug of the
// lowering), places the scratch, constant slots and per-thread buffers it
// declared, then emits it as the op's steps.
absl::Status VerifyPlaceAndEmit(LowerState& state, codegen::tile::Nest& nest,
                                int num_threads, bool on_caller) {
  codegen::tile::VerifyOptions verify;
  verify.num_threads = num_threads;
  verify.frame_bytes = [&state](const BufferRef& ref) {
    return FrameBytes(state, ref);
  };
  // Without IR to emit, the nest is one that verified when its graph's
  // objects were made.
  if (state.module != nullptr) {
    HGC_RETURN_IF_ERROR(codegen::tile::VerifyNest(nest, verify));
  }
  HGC_RETURN_IF_ERROR(codegen::PlaceNestBuffers(state, nest, num_threads));
  return codegen::EmitNest(state, nest, on_caller);
}

// The steps of one op of the entry graph, on `num_threads` threads: its
// native lowering, else a copy, reduce or transpose host step, else a
// fallback on the portable kernels.
absl::Status LowerOp(LowerState& state, const Op& op, int num_threads,
                     CompileStats& stats) {
  Program& program = *state.program;
  // A small group's steps are compiled for one thread and run on the caller.
  const bool on_caller = num_threads > 1 && SmallGroup(op);
  const int step_threads = on_caller ? 1 : num_threads;
  const size_t before = program.steps.size();
  const size_t constants_before = program.constants.size();
  const int64_t arena_before = state.arena_bytes;
  absl::StatusOr<std::optional<codegen::tile::Nest>> nest =
      LowerToNest(state, op, step_threads);
  absl::Status lowered = nest.status();
  if (nest.ok() && nest->has_value()) {
    lowered = VerifyPlaceAndEmit(state, **nest, step_threads, on_caller);
  }
  if (lowered.ok()) {
    for (size_t s = before; s < program.steps.size(); ++s) {
      const Step& step = program.steps[s];
      ++(step.host || step.shared ? stats.pack_steps : stats.native_steps);
    }
    return absl::OkStatus();
  }
  // Unimplemented: outside what the lowering covers. FailedPrecondition:
  // the CPU (under the ISA cap) has no kernel for it (no AVX2 + FMA).
  // Both fall back; anything else is a bug worth reporting.
  if (!absl::IsUnimplemented(lowered) && !absl::IsFailedPrecondition(lowered)) {
    return lowered;
  }
  // A nest that failed to emit had its buffers placed; the fallback reads
  // none of them.
  program.constants.erase(program.constants.begin() + constants_before,
                          program.constants.end());
  state.arena_bytes = arena_before;
  if (op.kind_id() == OpKind::kReshape) {
    const BufferRef& from = state.refs.at(op.operand(0));
    const BufferRef& to = state.refs.at(op.result());
    if (from.kind == to.kind && from.index == to.index &&
        from.offset == to.offset) {
      return absl::OkStatus();  // written in place by the operand's op
    }
    program.steps.push_back(codegen::CopyStep(
        absl::StrCat("reshape.", op.result()->name()), from, to,
        op.result()->type().SizeInBytes()));
    ++stats.copy_steps;
    return absl::OkStatus();
  }
  if (const Op* reduction = LoneReduction(op)) {
    const int64_t arena_mark = state.arena_bytes;
    absl::StatusOr<Step> step = codegen::ReduceStep(
        *reduction, state.refs.at(op.operand(0)), state.refs.at(op.result()),
        BufferRef::Arena(
            state.AllocArena(codegen::ReduceScratchBytes(*reduction))));
    if (step.ok()) {
      program.steps.push_back(*std::move(step));
      ++stats.native_steps;
      return absl::OkStatus();
    }
    state.arena_bytes = arena_mark;  // the fallback needs no scratch
  }
  if (op.kind_id() == OpKind::kTranspose) {
    HGC_ASSIGN_OR_RETURN(
        Step step, codegen::TransposeStep(op, state.refs.at(op.operand(0)),
                                          state.refs.at(op.result())));
    program.steps.push_back(std::move(step));
    ++stats.copy_steps;
    return absl::OkStatus();
  }
  if (op.kind_id() == OpKind::kSlice || op.kind_id() == OpKind::kConcat) {
    std::vector<BufferRef> ins;
    for (const Value* x : op.operands()) ins.push_back(state.refs.at(x));
    const BufferRef& out = state.refs.at(op.result());
    HGC_ASSIGN_OR_RETURN(Step step,
                         op.kind_id() == OpKind::kSlice
                             ? codegen::SliceStep(op, ins[0], out)
                             : codegen::ConcatStep(op, std::move(ins), out));
    if (state.loops != nullptr) {
      absl::StrAppend(state.loops, "// step @", step.name,
                      " copies on the host (codegen/transpose_step.h)\n");
    }
    program.steps.push_back(std::move(step));
    ++stats.copy_steps;
    return absl::OkStatus();
  }
  program.steps.push_back(FallbackStep(op, state));
  ++stats.fallback_steps;
  if (state.loops != nullptr) {
    // No nest to print: say where the op went, and why.
    absl::StrAppend(state.loops, "// step @", program.steps.back().name,
                    " runs on the portable kernels: ", lowered.message(), "\n");
  }
  return absl::OkStatus();
}

// Compile, with the graph's objects from the object cache when
// `graph_cache` is set and the cache has them (its list is stored anyway).
absl::StatusOr<std::unique_ptr<Executable>> CompileOnce(
    const Module& module, const Graph& entry, const CompileOptions& options,
    bool graph_cache) {
  auto start = std::chrono::steady_clock::now();
  auto owner = std::make_shared<CodeOwner>();
  owner->module = CloneModule(module);
  const Graph* graph = owner->module.FindGraph(entry.name());
  if (graph == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("no graph @", entry.name(), " in the module"));
  }
  CompileStats stats;
  Program program;
  const int compile_threads = codegen::CompileThreads(options);
  codegen::StepModules step_modules(absl::StrCat("hgc_", graph->name()),
                                    compile_threads);
  ConstOnlyAnalysis const_only(*graph);
  BufferPlan plan = PlanBuffers(*graph);
  LowerState state;
  state.program = &program;
  const int num_threads = std::max(options.num_threads, 1);
  state.const_only = &const_only;
  state.arena_bytes = plan.arena_size;
  state.loops = options.loops;
  if (state.loops != nullptr) {
    state.loops->clear();
    // What the passes left as it was, and why (an attention block left
    // unfused), above the steps it concerns.
    for (const std::string& note : module.notes()) {
      absl::StrAppend(state.loops, "// note: ", note, "\n");
    }
  }
  HGC_ASSIGN_OR_RETURN(codegen::TargetSpec spec,
                       codegen::HostTargetSpec(options.max_isa));
  std::optional<codegen::TargetSpec> emit_spec;
  if (!options.emit_target_cpu.empty()) {
    HGC_ASSIGN_OR_RETURN(
        emit_spec,
        codegen::NamedTargetSpec(options.emit_target_cpu, options.max_isa));
  }
  auto has_avx512 = [](const codegen::TargetSpec& target) {
    return target.HasFeature("avx512f") && target.HasFeature("avx512dq");
  };
  state.avx512 = has_avx512(spec) && (!emit_spec || has_avx512(*emit_spec));
  const codegen::CachedGraph cached = codegen::FindCachedGraph(
      module, *graph, options, compile_threads, spec, graph_cache);

  absl::flat_hash_map<const Value*, int> direct_result;
  HGC_RETURN_IF_ERROR(AssignBuffers(*graph, plan, state, direct_result));
  // Each init step so far is a const-only op's fallback step.
  stats.init_fallback_steps = static_cast<int>(program.init_steps.size());
  for (const auto& o : graph->ops()) {
    if (o->kind_id() == OpKind::kConstant || const_only.IsConstOnly(o.get())) {
      continue;
    }
    // With the objects at hand, no IR: state.module stays null.
    if (!cached.hit()) step_modules.Next(state);
    HGC_RETURN_IF_ERROR(LowerOp(state, *o, num_threads, stats));
  }
  const auto& results = graph->results();
  for (size_t i = 0; i < results.size(); ++i) {
    auto it = direct_result.find(results[i]);
    if (it != direct_result.end() && it->second == static_cast<int>(i)) {
      continue;
    }
    program.steps.push_back(codegen::CopyStep(
        absl::StrCat("copy.out", i), state.refs.at(results[i]),
        BufferRef::Output(i), results[i]->type().SizeInBytes()));
    ++stats.copy_steps;
  }
  program.arena_bytes = state.arena_bytes;
  stats.init_steps = static_cast<int>(program.init_steps.size());
  stats.arena_bytes = program.arena_bytes;
  stats.per_thread_scratch_bytes = state.per_thread_scratch_bytes;
  std::vector<codegen::ContextAndModule> modules = step_modules.Take();
  stats.llvm_modules =
      static_cast<int>(cached.hit() ? cached.objects.size() : modules.size());
  HGC_RETURN_IF_ERROR(
      codegen::JitSteps(std::move(modules), options, compile_threads, spec,
                        std::move(emit_spec), cached, owner->jit, program));
  if (owner->jit != nullptr && owner->jit->object_cache() != nullptr) {
    stats.objects_from_cache = owner->jit->objects_from_cache();
    stats.objects_compiled = owner->jit->objects_compiled();
    stats.object_cache_dir = owner->jit->object_cache()->dir();
    stats.graph_from_cache = cached.hit();
  }
  owner->kernels = std::move(state.kernels);
  stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (options.stats) *options.stats = stats;
  return std::make_unique<Executable>(std::move(program), std::move(owner),
                                      num_threads, options.threading);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Executable>> Compile(
    const Module& module, const Graph& entry, const CompileOptions& options) {
  absl::StatusOr<std::unique_ptr<Executable>> compiled =
      CompileOnce(module, entry, options, /*graph_cache=*/true);
  // Cached objects made for another program or lacking a step (a lowering
  // that differs in another process) are a miss: compile all of it.
  if (!compiled.ok() && codegen::IsCachedGraphMismatch(compiled.status())) {
    return CompileOnce(module, entry, options, /*graph_cache=*/false);
  }
  return compiled;
}

}  // namespace hgc
