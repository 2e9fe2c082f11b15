// matmul -> dnnl::matmul, with bias / eltwise / binary post-ops fused the
// way a framework's oneDNN integration fuses them.
#include <optional>
#include <string>
#include <vector>

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
  dnnl::matmul::desc desc =
      plan.has_bias
          ? dnnl::matmul::desc(plan.src, plan.weights, plan.bias, plan.dst)
          : dnnl::matmul::desc(plan.src, plan.weights, plan.dst);
  return dnnl::matmul::primitive_desc(desc, attr, engine);
}

dnnl::algorithm BinaryAlg(BinaryKind kind) {
  using dnnl::algorithm;
  switch (kind) {
    case BinaryKind::kAdd:
      return algorithm::binary_add;
    case BinaryKind::kSub:
      return algorithm::binary_sub;
    case BinaryKind::kMul:
      return algorithm::binary_mul;
    case BinaryKind::kDiv:
      return algorithm::binary_div;
    case BinaryKind::kMax:
      return algorithm::binary_max;
    case BinaryKind::kMin:
      return algorithm::binary_min;
  }
  return algorithm::undef;
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
  if (!AsBinary(next.kind_id()).has_value() || next.num_operands() != 2) {
    return false;
  }
  const int self = next.operand(0) == cur ? 0 : 1;
  const Value* other = next.operand(1 - self);
  const bool commutative =
      next.kind_id() != OpKind::kSub && next.kind_id() != OpKind::kDiv;
  if (other == cur || (self == 1 && !commutative)) return false;
  if (other->type().rank() > rank) return false;
  post.operand = other;
  if (next.kind_id() == OpKind::kAdd && !plan.has_bias &&
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
    spec.binary_alg = BinaryAlg(*AsBinary(next.kind_id()));
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
                            const MatmulPlan& plan,
                            const dnnl::matmul::primitive_desc& pd,
                            const std::vector<PostOp>& fused, const Value* cur,
                            bool const_weights, PrimitiveStep& step,
                            Built& built) {
  const int b_slot = ctx.SlotOf(op.operand(1));
  try {
    PrimitiveStep::Call call;
    call.primitive = dnnl::matmul(pd);
    call.args[DNNL_ARG_SRC] = ctx.Bind(plan.src, ctx.SlotOf(op.operand(0)));
    if (const_weights) {
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
    std::string description = "matmul";
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

}  // namespace

absl::StatusOr<Built> BuildMatmul(const Op& op, BuildContext& ctx) {
  HGC_RETURN_IF_ERROR(CheckDnnlTypes(op));
  const Value* a = op.operand(0);
  const Value* b = op.operand(1);
  const Value* out = op.result();
  const bool ta = BoolAttr(op, "transpose_a");
  const bool tb = BoolAttr(op, "transpose_b");
  const int rank = static_cast<int>(out->type().rank());
  const int64_t n = out->type().shape[rank - 1];
  const DType out_dtype = out->type().dtype;

  MatmulPlan plan;
  plan.src = OperandDesc(a, ta, rank);
  plan.weights_user = OperandDesc(b, tb, rank);
  const int b_slot = ctx.SlotOf(b);
  const bool const_weights = ctx.IsConstSlot(b_slot);
  // Constant weights: let oneDNN pick its preferred layout; they are
  // reordered into it once, in SetConstants.
  plan.weights = const_weights ? memory::desc(plan.weights_user.dims(),
                                              plan.weights_user.data_type(),
                                              memory::format_tag::any)
                               : plan.weights_user;
  plan.dst = PlainDesc(out->type().shape, out_dtype, rank);

  HGC_ASSIGN_OR_RETURN(dnnl::matmul::primitive_desc pd,
                       TryDnnl([&] { return MakePd(plan, ctx.engine()); }));

  // s32 results are not fused: oneDNN applies post-ops in f32, and integer
  // ops wrap in hgc.
  std::vector<PostOp> fused;
  const Value* cur = out;
  if (ctx.options().fuse_post_ops && IsFloat(out_dtype)) {
    fused = FusePostOps(ctx, rank, n, plan, pd, cur);
  }

  // Everything that can fail is done; create memories and the step.
  auto step = std::make_unique<PrimitiveStep>();
  Built built;
  HGC_RETURN_IF_ERROR(FillMatmulStep(op, ctx, plan, pd, fused, cur,
                                     const_weights, *step, built));
  built.step = std::move(step);
  return built;
}

}  // namespace primitive_internal
}  // namespace hgc
