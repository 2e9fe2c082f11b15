// Internals of the primitive-based executor (baseline/primitive_executor.h):
// buffer slots, executable steps, the context op builders run in, and
// oneDNN helpers. Not a public API: only baseline/primitive_executor_impl.h,
// baseline/primitive_executor_plan.cc and baseline/primitives/*.cc include
// this header.
//
// Every oneDNN call that can throw (dnnl::error) is made inside a try block
// of this library; nothing throws out of it.
#ifndef HGC_BASELINE_PRIMITIVES_COMMON_H_
#define HGC_BASELINE_PRIMITIVES_COMMON_H_

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "baseline/primitive_executor.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace hgc {
namespace primitive_internal {

// ---------------------------------------------------------------------------
// Buffers.
//
// A slot is one plain row-major buffer. Graph parameters, `constant` results
// and op results each get one; a `reshape` result aliases its operand's slot
// (same bytes, other shape), and ops fused into a matmul as post-ops get
// none. An intermediate slot that holds a graph result is "claimed" by that
// output: ops write straight into the caller's output tensor.

enum class SlotKind {
  kInput,         // a non-const parameter: the caller's tensor, per Run
  kConstParam,    // a const parameter: the tensor given to SetConstants
  kConstant,      // a `constant` op, materialized once at Create
  kIntermediate,  // an op result: owned, or an output's buffer when claimed
};

struct Slot {
  SlotKind kind = SlotKind::kIntermediate;
  int param_index = -1;   // kInput / kConstParam
  int output_index = -1;  // kIntermediate claimed by graph result i
  TensorType type;        // the type of the value that defined the slot
  Tensor owned;           // kConstant, and unclaimed kIntermediate
};

// Where every slot's bytes are during one Run (or SetConstants).
struct RunState {
  std::vector<void*> ptr;
  // A tensor holding the slot's bytes (its type may differ from the slot's
  // in shape, for an output claimed through a reshape); nullptr when none.
  std::vector<const Tensor*> tensor;
  // Output i's buffer.
  std::vector<void*> out_ptr;
};

// ---------------------------------------------------------------------------
// Steps.

using StepInfo = PrimitiveExecutor::StepInfo;

class Step {
 public:
  virtual ~Step() = default;
  // Runs once constants are bound (SetConstants): weight prepacking etc.
  virtual absl::Status PrepareConstants(const RunState& state,
                                        dnnl::stream& stream) {
    return absl::OkStatus();
  }
  virtual absl::Status Execute(const RunState& state, dnnl::stream& stream) = 0;

  StepInfo info;
  // Position in the graph's op order of the last op the step covers: a
  // fused matmul runs where its last post-op stood, after every post-op
  // operand is computed.
  int order = 0;
};

// One or more oneDNN primitives with their arguments. Memory handles that
// point into slots are bound by the executor before every run.
class PrimitiveStep : public Step {
 public:
  struct Call {
    dnnl::primitive primitive;
    std::unordered_map<int, dnnl::memory> args;
  };
  std::vector<Call> prepare_calls;  // once, in PrepareConstants
  std::vector<Call> calls;          // every Execute, in order

  absl::Status PrepareConstants(const RunState& state,
                                dnnl::stream& stream) override;
  absl::Status Execute(const RunState& state, dnnl::stream& stream) override;
};

// ---------------------------------------------------------------------------
// Building.

struct BuildOptions {
  bool fuse_post_ops = true;
};

// What the op builders see: slots of operands, use counts for fusion
// decisions, and the engine. Builders create every oneDNN primitive
// descriptor first and define their result slot only once nothing can fail
// any more.
class BuildContext {
 public:
  BuildContext(const Graph& graph, dnnl::engine engine, BuildOptions options);

  const dnnl::engine& engine() const { return engine_; }
  const BuildOptions& options() const { return options_; }

  // The slot holding `v`; -1 when it has none (yet).
  int SlotOf(const Value* v) const;
  const Slot& slot(int i) const { return slots_[i]; }
  std::vector<Slot>& slots() { return slots_; }
  // Whether the slot's contents are fixed for the executor's life.
  bool IsConstSlot(int i) const {
    return slots_[i].kind == SlotKind::kConstParam ||
           slots_[i].kind == SlotKind::kConstant;
  }

  // Slot creation (idempotent per value).
  int AddParamSlot(const Value* param);
  int AddConstantSlot(const Value* v, Tensor data);
  void AddAlias(const Value* v, int slot);
  // The slot of op result `v`, created on first call.
  int DefineResult(const Value* v);

  // A memory object over slot `slot` seen through `md`; the executor binds
  // its data handle.
  dnnl::memory Bind(const dnnl::memory::desc& md, int slot);
  const std::vector<std::pair<dnnl::memory, int>>& bindings() const {
    return bindings_;
  }

  // Uses of `v` as an operand (each occurrence) plus as a graph result.
  int UseCount(const Value* v) const;
  bool IsResult(const Value* v) const;
  // The single op using `v`, or nullptr.
  const Op* SoleUser(const Value* v) const;

  // Ops fused into a step already built. A builder must not fuse a claimed
  // op again: in add(matmul(a, b), matmul(c, d)) the first matmul takes the
  // add as a binary post-op reading the second's result, which the second
  // must then compute on its own.
  void Claim(const Op* op) { claimed_.insert(op); }
  bool IsClaimed(const Op* op) const { return claimed_.contains(op); }

  // Matmuls of dequantized 8-bit operands that run as oneDNN int8 matmuls
  // (PlanInt8Matmuls), reading the 8-bit values themselves.
  void MarkInt8Matmul(const Op* op) { int8_matmuls_.insert(op); }
  bool IsInt8Matmul(const Op* op) const { return int8_matmuls_.contains(op); }

 private:
  dnnl::engine engine_;
  BuildOptions options_;
  std::vector<Slot> slots_;
  absl::flat_hash_map<const Value*, int> slot_of_;
  absl::flat_hash_map<const Value*, int> use_count_;
  absl::flat_hash_map<const Value*, const Op*> last_user_;
  absl::flat_hash_map<const Value*, bool> is_result_;
  std::vector<std::pair<dnnl::memory, int>> bindings_;
  absl::flat_hash_set<const Op*> claimed_;
  absl::flat_hash_set<const Op*> int8_matmuls_;
};

// What an op builder returns. `step` is set on success; `absorbed` lists
// ops (after the built one) fused into it.
struct Built {
  std::unique_ptr<Step> step;
  std::vector<const Op*> absorbed;
};

// Op builders. Unimplemented means "no primitive expresses this op here":
// the executor falls back to the reference kernel (or reports it when
// fallbacks are off). Other errors are real failures.
absl::StatusOr<Built> BuildMatmul(const Op& op, BuildContext& ctx);
absl::StatusOr<Built> BuildEltwise(const Op& op, BuildContext& ctx);
absl::StatusOr<Built> BuildBinary(const Op& op, BuildContext& ctx);
absl::StatusOr<Built> BuildSoftmax(const Op& op, BuildContext& ctx);
absl::StatusOr<Built> BuildLayernorm(const Op& op, BuildContext& ctx);
absl::StatusOr<Built> BuildReduce(const Op& op, BuildContext& ctx);
absl::StatusOr<Built> BuildTranspose(const Op& op, BuildContext& ctx);
absl::StatusOr<Built> BuildCast(const Op& op, BuildContext& ctx);
absl::StatusOr<Built> BuildQuantize(const Op& op, BuildContext& ctx);
absl::StatusOr<Built> BuildDequantize(const Op& op, BuildContext& ctx);

// Before any step is built, with post-op fusion on: marks the matmuls of dequantized 8-bit operands
// that oneDNN runs as int8 matmuls (u8/s8 source with a common zero point
// and one scale, s8 weights with zero point 0 and one scale or one per
// output column), and claims the dequantize ops that only they read. Such
// a matmul then takes, besides the usual post-ops, a trailing per-tensor
// quantize (u8/s8 destination), as a framework's oneDNN integration runs
// the QDQ form.
void PlanInt8Matmuls(const std::vector<const Op*>& ops, BuildContext& ctx);

// ---------------------------------------------------------------------------
// Quantization parameters as the reference reads them: scales rounded to
// f32, integral zero points, and the channel axis (-1: per tensor).
struct QuantParams {
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  int axis = -1;
};
absl::StatusOr<QuantParams> ReadQuantParams(const Op& op);
// The one zero point of `p`; Unimplemented when they differ per channel
// (oneDNN 2.6 takes a common one).
absl::StatusOr<int32_t> CommonZeroPoint(const QuantParams& p);

// ---------------------------------------------------------------------------
// Eltwise mapping, shared by standalone eltwise ops and matmul post-ops.

struct EltwiseParams {
  dnnl::algorithm alg;
  float alpha = 0;
  float beta = 0;
};
// The oneDNN eltwise algorithm computing unary op `op` on floats; nullopt
// when there is none.
std::optional<EltwiseParams> EltwiseFor(const Op& op);

// ---------------------------------------------------------------------------
// oneDNN helpers.

// The oneDNN type storing `dtype` (bool is u8 0/1); nullopt when none.
std::optional<dnnl::memory::data_type> DnnlType(DType dtype);
// oneDNN supports at most this many dimensions.
inline constexpr int kMaxDnnlRank = DNNL_MAX_NDIMS;
// `shape` left-padded with 1s to `rank` dims (a scalar becomes {1}).
dnnl::memory::dims PaddedDims(const Shape& shape, int rank);
// Row-major strides of `dims`.
dnnl::memory::dims RowMajor(const dnnl::memory::dims& dims);
// A plain row-major descriptor of `shape` (padded to `rank`, at least 1).
dnnl::memory::desc PlainDesc(const Shape& shape, DType dtype, int rank = 0);

// The implementation name of a primitive descriptor.
std::string ImplName(const dnnl::primitive_desc_base& pd);
bool IsReferenceImpl(const std::string& impl);

// Runs `f` (which creates oneDNN objects) and turns a dnnl::error into
// Unimplemented ("no primitive") with the library's message.
template <typename F>
auto TryDnnl(F&& f) -> absl::StatusOr<decltype(f())> {
  try {
    return f();
  } catch (const dnnl::error& e) {
    return absl::UnimplementedError(
        std::string("oneDNN: ") + e.what() +
        (e.status == dnnl_unimplemented
             ? std::string(" (unimplemented for these types on this CPU)")
             : " (status " + std::to_string(static_cast<int>(e.status)) + ")"));
  } catch (const std::exception& e) {
    return absl::ResourceExhaustedError(std::string("oneDNN: ") + e.what());
  }
}

// Whether every type is something oneDNN can hold: known dtype, rank within
// kMaxDnnlRank, no zero-element tensor (those go to the reference kernels).
absl::Status CheckDnnlTypes(const Op& op);

// "%name = kind" (or "<unnamed> = kind").
std::string OpLabel(const Op& op);

// `info` for a step built from `op`.
StepInfo PrimitiveInfo(std::string description, std::string impl, const Op& op);

// Builds a one-primitive step: `make_pd` creates the primitive descriptor
// (a dnnl::error there means "no primitive": Unimplemented), then `bind`
// fills the arguments (binding creates the result slot).
template <typename Pd, typename Prim, typename MakePd, typename BindArgs>
absl::StatusOr<Built> OnePrimitive(const Op& op, BuildContext& ctx,
                                   std::string description, MakePd make_pd,
                                   BindArgs bind) {
  absl::StatusOr<Pd> pd = TryDnnl([&] { return make_pd(); });
  if (!pd.ok()) return pd.status();
  auto step = std::make_unique<PrimitiveStep>();
  try {
    PrimitiveStep::Call call;
    call.primitive = Prim(*pd);
    bind(call.args);
    step->calls.push_back(std::move(call));
  } catch (const std::exception& e) {
    return absl::InternalError(OpLabel(op) + ": oneDNN: " + e.what());
  }
  step->info = PrimitiveInfo(std::move(description), ImplName(*pd), op);
  Built built;
  built.step = std::move(step);
  return built;
}

}  // namespace primitive_internal
}  // namespace hgc

#endif  // HGC_BASELINE_PRIMITIVES_COMMON_H_
