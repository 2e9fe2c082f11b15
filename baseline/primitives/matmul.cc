// matmul -> dnnl::matmul, with bias / eltwise / binary post-ops fused the
// way a framework's oneDNN integration fuses them; a matmul of dequantized
// 8-bit operands (the QDQ form) as an int8 matmul with scales, zero points
// and a fused trailing quantize.
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "baseline/primitives/common.h"
#include "ir/dtype.h"
#include "support/status_macros.h"

namespace hgc {
namespace primitive_internal {
namespace {

using dnnl::memory;

bool BoolAttr(const Op& op, absl::string_view name) {
  const Attribute* a = op.FindAttr(name);
  return a != nullptr && a->is_bool() && a->as_bool();
}

// The descriptor of matmul operand `v` seen as [batch..., rows, cols]
// (`transposed`: stored as [..., cols, rows]), padded to `rank` dims, with
// the strides of its plain row-major storage.
memory::desc OperandDesc(const Value* v, bool transposed, int rank) {
  memory::dims dims = PaddedDims(v->type().shape, rank);
  memory::dims strides = RowMajor(dims);
  if (transposed) {
    std::swap(dims[rank - 1], dims[rank - 2]);
    std::swap(strides[rank - 1], strides[rank - 2]);
  }
  return memory::desc(dims, *DnnlType(v->type().dtype), strides);
}

// One fused post-op: what it is and the operand it reads, if any.
struct PostOp {
  const Op* op = nullptr;
  bool is_bias = false;
  const Value* operand = nullptr;  // bias / binary src1
  memory::desc operand_desc;
  int post_op_index = -1;  // binary: position in the post-op chain
};

// A post-op entry of the attribute (dnnl::post_ops is a shared handle, so
// plans keep value descriptions and build a fresh one per try).
struct PostOpSpec {
  bool binary = false;
  EltwiseParams eltwise{dnnl::algorithm::eltwise_relu, 0, 0};
  dnnl::algorithm binary_alg = dnnl::algorithm::binary_add;
  memory::desc src1;
};

struct MatmulPlan {
  memory::desc src, weights_user, weights, bias, dst;
  bool has_bias = false;
  std::vector<PostOpSpec> post_ops;
  // int8: dst = output_scales * (src - src_zero_point) . weights, then the
  // post-ops, then + dst_zero_point when dst is 8-bit. oneDNN 2.6 adds a
  // bias before the output scales, so int8 plans add it as a binary
  // post-op instead.
  bool int8 = false;
  std::vector<float> output_scales;
  int output_scales_mask = 0;
  int32_t src_zero_point = 0;
  int32_t dst_zero_point = 0;
};

// The values a matmul step reads: the matmul's operands, or for an int8
// matmul the 8-bit values under their dequantize ops.
struct MatmulOperands {
  const Value* src = nullptr;
  const Value* weights = nullptr;
  bool const_weights = false;
};

// The 8-bit operands of a matmul of dequantized values (the QDQ form).
struct Int8Operands {
  const Op* src_dequantize = nullptr;
  const Op* weights_dequantize = nullptr;
  QuantParams src, weights;
};

dnnl::matmul::primitive_desc MakePd(const MatmulPlan& plan,
                                    const dnnl::engine& engine) {
  dnnl::primitive_attr attr;
  if (!plan.post_ops.empty()) {
    dnnl::post_ops ops;
    for (const PostOpSpec& p : plan.post_ops) {
      if (p.binary) {
        ops.append_binary(p.binary_alg, p.src1);
      } else {
        ops.append_eltwise(1.f, p.eltwise.alg, p.eltwise.alpha, p.eltwise.beta);
      }
    }
    attr.set_post_ops(ops);
  }
  if (plan.int8) {
    attr.set_output_scales(plan.output_scales_mask, plan.output_scales);
    if (plan.src_zero_point != 0) {
      attr.set_zero_points(DNNL_ARG_SRC, 0, {plan.src_zero_point});
    }
    if (plan.dst_zero_point != 0) {
      attr.set_zero_points(DNNL_ARG_DST, 0, {plan.dst_zero_point});
    }
  }
  dnnl::matmul::desc desc =
      plan.has_bias
          ? dnnl::matmul::desc(plan.src, plan.weights, plan.bias, plan.dst)
          : dnnl::matmul::desc(plan.src, plan.weights, plan.dst);
  return dnnl::matmul::primitive_desc(desc, attr, engine);
}

// The onednn column of ir/op_kinds.def.
dnnl::algorithm BinaryAlg(BinaryKind kind) {
  switch (kind) {
#define HGC_BINARY_ROW(e, name, operands, onednn, onednn_swapped) \
  case BinaryKind::e:                                             \
    return dnnl::algorithm::onednn;
#include "ir/op_kinds.def"
  }
  return dnnl::algorithm::undef;
}

// Whether `v` padded to `rank` dims is a row vector [1, ..., 1, n].
bool IsRowVector(const Value* v, int rank, int64_t n) {
  memory::dims dims = PaddedDims(v->type().shape, rank);
  if (static_cast<int>(dims.size()) != rank || dims[rank - 1] != n) {
    return false;
  }
  for (int i = 0; i < rank - 1; ++i) {
    if (dims[i] != 1) return false;
  }
  return true;
}

// Adds `next` (the sole user of `cur`, the result so far) to `trial` as a
// post-op described by `post`: an eltwise, the bias, or a binary op with
// the other operand as src1; false when it cannot be one.
bool AddPostOp(const Op& next, const Value* cur, int rank, int64_t n,
               const MatmulPlan& plan, MatmulPlan& trial, PostOp& post) {
  if (std::optional<EltwiseParams> e = EltwiseFor(next)) {
    PostOpSpec spec;
    spec.eltwise = *e;
    trial.post_ops.push_back(spec);
    return true;
  }
  const std::optional<BinaryKind> binary = AsBinary(next.kind_id());
  if (!binary.has_value() || next.num_operands() != 2 ||
      BinaryAlg(*binary) == dnnl::algorithm::undef) {
    return false;
  }
  const int self = next.operand(0) == cur ? 0 : 1;
  const Value* other = next.operand(1 - self);
  const bool commutative =
      next.kind_id() != OpKind::kSub && next.kind_id() != OpKind::kDiv;
  if (other == cur || (self == 1 && !commutative)) return false;
  if (other->type().rank() > rank) return false;
  post.operand = other;
  if (next.kind_id() == OpKind::kAdd && !plan.has_bias && !plan.int8 &&
      plan.post_ops.empty() && IsRowVector(other, rank, n)) {
    post.is_bias = true;
    post.operand_desc =
        PlainDesc(other->type().shape, other->type().dtype, rank);
    trial.has_bias = true;
    trial.bias = post.operand_desc;
  } else {
    post.operand_desc =
        PlainDesc(other->type().shape, other->type().dtype, rank);
    post.post_op_index = static_cast<int>(trial.post_ops.size());
    PostOpSpec spec;
    spec.binary = true;
    spec.binary_alg = BinaryAlg(*binary);
    spec.src1 = post.operand_desc;
    trial.post_ops.push_back(spec);
  }
  return true;
}

// Post-op fusion: follow the chain of single users while each op keeps
// the matmul's result type and oneDNN accepts it (with an optimized
// implementation when the plain matmul has one); updates `plan`, `pd` and
// `cur` (the last fused result) and returns the fused post-ops.
std::vector<PostOp> FusePostOps(BuildContext& ctx, int rank, int64_t n,
                                MatmulPlan& plan,
                                dnnl::matmul::primitive_desc& pd,
                                const Value*& cur) {
  std::vector<PostOp> fused;
  const bool base_is_ref = IsReferenceImpl(ImplName(pd));
  while (true) {
    const Op* next = ctx.SoleUser(cur);
    if (next == nullptr || ctx.IsClaimed(next) || next->num_results() != 1 ||
        next->result()->type() != cur->type()) {
      break;
    }
    MatmulPlan trial = plan;
    PostOp post;
    post.op = next;
    if (!AddPostOp(*next, cur, rank, n, plan, trial, post)) break;
    absl::StatusOr<dnnl::matmul::primitive_desc> trial_pd =
        TryDnnl([&] { return MakePd(trial, ctx.engine()); });
    if (!trial_pd.ok()) break;
    if (!base_is_ref && IsReferenceImpl(ImplName(*trial_pd))) break;
    plan = trial;
    pd = *trial_pd;
    fused.push_back(post);
    cur = next->result();
  }
  return fused;
}

// Binds the fused post-ops' operands into `call`, records them as absorbed
// in `built` and names them in `description`.
void BindPostOps(const std::vector<PostOp>& fused, BuildContext& ctx,
                 PrimitiveStep::Call& call, Built& built,
                 std::string& description) {
  for (const PostOp& post : fused) {
    built.absorbed.push_back(post.op);
    if (post.is_bias) {
      call.args[DNNL_ARG_BIAS] =
          ctx.Bind(post.operand_desc, ctx.SlotOf(post.operand));
      absl::StrAppend(&description, "+bias");
      continue;
    }
    absl::StrAppend(&description, "+", post.op->kind());
    if (post.op->kind_id() == OpKind::kGelu) {
      const Attribute* approx = post.op->FindAttr("approximate");
      if (approx != nullptr && approx->as_string() == "tanh") {
        absl::StrAppend(&description, "_tanh");
      }
    }
    if (post.operand != nullptr) {
      call.args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(post.post_op_index) |
                DNNL_ARG_SRC_1] =
          ctx.Bind(post.operand_desc, ctx.SlotOf(post.operand));
    }
  }
}

// Fills `step` with the matmul call (constant weights reordered once into
// the layout `pd` chose, in a prepare call), its post-ops' operands and its
// result `cur`; oneDNN's exceptions become an error.
absl::Status FillMatmulStep(const Op& op, BuildContext& ctx,
                            const MatmulOperands& operands,
                            const MatmulPlan& plan,
                            const dnnl::matmul::primitive_desc& pd,
                            const std::vector<PostOp>& fused, const Value* cur,
                            PrimitiveStep& step, Built& built) {
  const int b_slot = ctx.SlotOf(operands.weights);
  try {
    PrimitiveStep::Call call;
    call.primitive = dnnl::matmul(pd);
    call.args[DNNL_ARG_SRC] = ctx.Bind(plan.src, ctx.SlotOf(operands.src));
    if (operands.const_weights) {
      memory user = ctx.Bind(plan.weights_user, b_slot);
      memory packed(pd.weights_desc(), ctx.engine());
      PrimitiveStep::Call reorder;
      reorder.primitive = dnnl::reorder(user, packed);
      reorder.args = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, packed}};
      step.prepare_calls.push_back(std::move(reorder));
      call.args[DNNL_ARG_WEIGHTS] = packed;
    } else {
      call.args[DNNL_ARG_WEIGHTS] = ctx.Bind(plan.weights, b_slot);
    }
    std::string description = plan.int8 ? "matmul_int8" : "matmul";
    BindPostOps(fused, ctx, call, built, description);
    call.args[DNNL_ARG_DST] = ctx.Bind(plan.dst, ctx.DefineResult(cur));
    step.calls.push_back(std::move(call));
    step.info = PrimitiveInfo(description, ImplName(pd), op);
  } catch (const std::exception& e) {
    return absl::InternalError(
        absl::StrCat(OpLabel(op), ": oneDNN: ", e.what()));
  }
  return absl::OkStatus();
}

// `op`'s operands as dequantize(x) and dequantize(w) that one oneDNN int8
// matmul computes: x u8 or s8 with one scale and one zero point, w s8 with
// zero point 0 and one scale or one per output column (which factor out of
// the sums); nullopt for any other matmul.
std::optional<Int8Operands> AsInt8Operands(const Op& op) {
  if (op.result()->type().dtype != DType::kF32) return std::nullopt;
  Int8Operands q;
  q.src_dequantize = op.operand(0)->defining_op();
  q.weights_dequantize = op.operand(1)->defining_op();
  for (const Op* d : {q.src_dequantize, q.weights_dequantize}) {
    if (d == nullptr || d->kind_id() != OpKind::kDequantize) {
      return std::nullopt;
    }
  }
  const DType src_type = q.src_dequantize->operand(0)->type().dtype;
  if ((src_type != DType::kU8 && src_type != DType::kS8) ||
      q.weights_dequantize->operand(0)->type().dtype != DType::kS8) {
    return std::nullopt;
  }
  absl::StatusOr<QuantParams> src = ReadQuantParams(*q.src_dequantize);
  absl::StatusOr<QuantParams> weights = ReadQuantParams(*q.weights_dequantize);
  if (!src.ok() || !weights.ok() || src->scales.size() != 1 ||
      !CommonZeroPoint(*src).ok()) {
    return std::nullopt;
  }
  for (int64_t z : weights->zero_points) {
    if (z != 0) return std::nullopt;
  }
  if (weights->scales.size() > 1) {
    const int rank_b = static_cast<int>(op.operand(1)->type().rank());
    const int n_axis = BoolAttr(op, "transpose_b") ? rank_b - 2 : rank_b - 1;
    if (weights->axis != n_axis) return std::nullopt;
  }
  q.src = *std::move(src);
  q.weights = *std::move(weights);
  return q;
}

// What `op` reads and its plain matmul (no post-ops yet): f32 / bf16 /
// 8-bit operands as given, or, with `q`, the 8-bit values under its
// dequantize operands with their scales and zero point.
MatmulPlan BasePlan(const Op& op, const BuildContext& ctx,
                    const Int8Operands* q, MatmulOperands& operands) {
  operands.src = q != nullptr ? q->src_dequantize->operand(0) : op.operand(0);
  operands.weights =
      q != nullptr ? q->weights_dequantize->operand(0) : op.operand(1);
  operands.const_weights = ctx.IsConstSlot(ctx.SlotOf(operands.weights));
  const Value* out = op.result();
  const int rank = static_cast<int>(out->type().rank());
  MatmulPlan plan;
  plan.src = OperandDesc(operands.src, BoolAttr(op, "transpose_a"), rank);
  plan.weights_user =
      OperandDesc(operands.weights, BoolAttr(op, "transpose_b"), rank);
  // Constant weights: let oneDNN pick its preferred layout; they are
  // reordered into it once, in SetConstants.
  plan.weights = operands.const_weights
                     ? memory::desc(plan.weights_user.dims(),
                                    plan.weights_user.data_type(),
                                    memory::format_tag::any)
                     : plan.weights_user;
  plan.dst = PlainDesc(out->type().shape, out->type().dtype, rank);
  if (q != nullptr) {
    plan.int8 = true;
    for (float s : q->weights.scales) {
      plan.output_scales.push_back(q->src.scales[0] * s);
    }
    plan.output_scales_mask = plan.output_scales.size() > 1 ? 1 << (rank - 1)
                                                            : 0;
    plan.src_zero_point = static_cast<int32_t>(q->src.zero_points[0]);
  }
  return plan;
}

// An int8 plan's trailing per-tensor quantize as its 8-bit destination:
// saturate(round(x * (1 / scale)) + zero_point), the scale an
// eltwise_linear post-op. x * (1 / scale) may round a tie the other way
// from the reference's x / scale: one step, which --check allows for 8-bit
// values.
void FuseQuantize(BuildContext& ctx, int rank, MatmulPlan& plan,
                  dnnl::matmul::primitive_desc& pd, const Value*& cur,
                  std::vector<PostOp>& fused) {
  const Op* next = ctx.SoleUser(cur);
  if (!plan.int8 || next == nullptr || ctx.IsClaimed(next) ||
      next->kind_id() != OpKind::kQuantize) {
    return;
  }
  absl::StatusOr<QuantParams> p = ReadQuantParams(*next);
  if (!p.ok() || p->scales.size() != 1) return;
  absl::StatusOr<int32_t> zero_point = CommonZeroPoint(*p);
  if (!zero_point.ok()) return;
  MatmulPlan trial = plan;
  const TensorType& type = next->result()->type();
  trial.dst = PlainDesc(type.shape, type.dtype, rank);
  PostOpSpec scale;
  scale.eltwise = {dnnl::algorithm::eltwise_linear, 1.f / p->scales[0], 0.f};
  trial.post_ops.push_back(scale);
  trial.dst_zero_point = *zero_point;
  absl::StatusOr<dnnl::matmul::primitive_desc> trial_pd =
      TryDnnl([&] { return MakePd(trial, ctx.engine()); });
  if (!trial_pd.ok()) return;
  plan = trial;
  pd = *trial_pd;
  PostOp post;
  post.op = next;
  fused.push_back(post);
  cur = next->result();
}

}  // namespace

void PlanInt8Matmuls(const std::vector<const Op*>& ops, BuildContext& ctx) {
  if (!ctx.options().fuse_post_ops) return;
  // Uses of each dequantize by the matmuls that run in int8.
  absl::flat_hash_map<const Op*, int> int8_uses;
  for (const Op* op : ops) {
    if (op->kind_id() != OpKind::kMatmul || !CheckDnnlTypes(*op).ok()) {
      continue;
    }
    std::optional<Int8Operands> q = AsInt8Operands(*op);
    if (!q.has_value()) continue;
    MatmulOperands operands;
    MatmulPlan plan = BasePlan(*op, ctx, &*q, operands);
    if (!TryDnnl([&] { return MakePd(plan, ctx.engine()); }).ok()) continue;
    ctx.MarkInt8Matmul(op);
    ++int8_uses[q->src_dequantize];
    ++int8_uses[q->weights_dequantize];
  }
  // A dequantize that only int8 matmuls read is never computed.
  for (const auto& [dequantize, uses] : int8_uses) {
    if (uses == ctx.UseCount(dequantize->result())) ctx.Claim(dequantize);
  }
}

absl::StatusOr<Built> BuildMatmul(const Op& op, BuildContext& ctx) {
  HGC_RETURN_IF_ERROR(CheckDnnlTypes(op));
  std::optional<Int8Operands> q;
  if (ctx.IsInt8Matmul(&op)) q = AsInt8Operands(op);
  MatmulOperands operands;
  MatmulPlan plan = BasePlan(op, ctx, q ? &*q : nullptr, operands);
  HGC_ASSIGN_OR_RETURN(dnnl::matmul::primitive_desc pd,
                       TryDnnl([&] { return MakePd(plan, ctx.engine()); }));

  // s32 results are not fused: oneDNN applies post-ops in f32, and integer
  // ops wrap in hgc.
  std::vector<PostOp> fused;
  const Value* cur = op.result();
  const int rank = static_cast<int>(cur->type().rank());
  const int64_t n = cur->type().shape[rank - 1];
  if (ctx.options().fuse_post_ops && IsFloat(cur->type().dtype)) {
    fused = FusePostOps(ctx, rank, n, plan, pd, cur);
    FuseQuantize(ctx, rank, plan, pd, cur, fused);
  }

  // Everything that can fail is done; create memories and the step.
  auto step = std::make_unique<PrimitiveStep>();
  Built built;
  HGC_RETURN_IF_ERROR(
      FillMatmulStep(op, ctx, operands, plan, pd, fused, cur, *step, built));
  built.step = std::move(step);
  return built;
}

}  // namespace primitive_internal
}  // namespace hgc
