#include "codegen/matmul_layers.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "codegen/llvm/elemental_emitter.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

// The kernel data type of a matmul with operands `a`, `b`: f32, bf16,
// u8 x s8 or s8 x s8; Unimplemented for other combinations.
absl::StatusOr<microkernels::BrgemmDataType> KernelType(DType a, DType b) {
  using microkernels::BrgemmDataType;
  if (a == DType::kF32 && b == DType::kF32) return BrgemmDataType::kF32;
  if (a == DType::kBF16 && b == DType::kBF16) return BrgemmDataType::kBf16;
  if (a == DType::kU8 && b == DType::kS8) return BrgemmDataType::kU8S8;
  if (a == DType::kS8 && b == DType::kS8) return BrgemmDataType::kS8S8;
  return absl::UnimplementedError(
      absl::StrCat("matmul of ", DTypeName(a), " and ", DTypeName(b)));
}

int64_t Prod(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

}  // namespace

absl::StatusOr<BatchMap> MapBatch(const Shape& operand, const Shape& out) {
  if (operand.size() < 2 || operand.size() > out.size()) {
    return absl::UnimplementedError("operand rank");
  }
  const size_t dims = out.size() - 2;
  const size_t shift = out.size() - operand.size();
  BatchMap map;
  map.matrices = Prod(operand, 0, operand.size() - 2);
  int64_t inner = 1;   // output batches per step of dim d
  int64_t stride = 1;  // operand matrices per step of its dim aligned to d
  for (size_t d = dims; d-- > 0;) {
    const int64_t extent = out[d];
    int64_t step = 0;  // broadcast (or missing) dims read one matrix
    if (d >= shift) {
      const int64_t own = operand[d - shift];
      if (own != extent && own != 1) {
        return absl::UnimplementedError("batch dims do not broadcast");
      }
      if (own == extent && extent != 1) step = stride;
      stride *= own;
    }
    if (step != 0) {
      BatchMap::Run* last = map.runs.empty() ? nullptr : &map.runs.back();
      if (last != nullptr && last->inner * last->extent == inner &&
          last->stride * last->extent == step) {
        last->extent *= extent;  // one index walks both dims
      } else {
        map.runs.push_back({inner, extent, step});
      }
    }
    inner *= extent;
  }
  return map;
}

void MatchKernelPostOps(Layer& l) {
  if (l.kind != microkernels::BrgemmDataType::kF32 || l.c_scratch ||
      l.post.empty() || l.post.size() > 2) {
    return;
  }
  const Value* c = l.matmul->result();
  const Value* bias = nullptr;
  size_t next = 0;
  const Op* add = l.post[0];
  if (add->kind_id() == OpKind::kAdd && add->num_operands() == 2) {
    const Value* other = add->operand(0) == c   ? add->operand(1)
                         : add->operand(1) == c ? add->operand(0)
                                                : nullptr;
    if (other != nullptr && other->is_param() &&
        other->type().dtype == DType::kF32 && other->type().rank() > 0 &&
        other->type().shape.back() == l.n &&
        other->type().NumElements() == l.n) {
      bias = other;
      c = add->result();
      next = 1;
    }
  }
  bool relu = false;
  if (next < l.post.size()) {
    const Op* r = l.post[next];
    if (r->kind_id() != OpKind::kRelu || r->operand(0) != c) return;
    relu = true;
    ++next;
  }
  if (next != l.post.size()) return;
  l.bias = bias;
  l.relu = relu;
}

absl::StatusOr<std::vector<Layer>> SplitLayers(const Graph& body) {
  std::vector<Layer> layers;
  for (const auto& o : body.ops()) {
    const Op* op = o.get();
    if (op->kind_id() == OpKind::kConstant) continue;
    if (op->kind_id() == OpKind::kMatmul) {
      layers.emplace_back();
      layers.back().matmul = op;
      continue;
    }
    if (layers.empty() || !IsElementalOp(op->kind_id())) {
      return absl::UnimplementedError(
          absl::StrCat("'", op->kind(), "' in a matmul group"));
    }
    layers.back().post.push_back(op);
  }
  if (layers.empty()) return absl::UnimplementedError("no matmul");
  for (size_t i = 0; i < layers.size(); ++i) {
    Layer& l = layers[i];
    const Op& mm = *l.matmul;
    l.out = l.post.empty() ? mm.result() : l.post.back()->result();
    const Attribute* ta = mm.FindAttr("transpose_a");
    l.a_transposed = ta != nullptr && ta->is_bool() && ta->as_bool();
    if (l.a_transposed && i > 0) {
      return absl::UnimplementedError("transpose_a of a computed A");
    }
    for (const Value* v : {mm.operand(0), mm.operand(1), mm.result()}) {
      if (v->type().rank() < 2) {
        return absl::UnimplementedError("rank-1 matmul");
      }
    }
    HGC_ASSIGN_OR_RETURN(l.kind, KernelType(mm.operand(0)->type().dtype,
                                            mm.operand(1)->type().dtype));
    l.in_bytes = DTypeSize(mm.operand(0)->type().dtype);
    const DType result_dtype = mm.result()->type().dtype;
    l.c_scratch =
        (result_dtype != DType::kF32 && result_dtype != DType::kS32) ||
        DTypeSize(l.out->type().dtype) != 4;
    if (!mm.operand(1)->is_param()) {
      return absl::UnimplementedError("B is computed inside the group");
    }
    const Value* a = mm.operand(0);
    if (i == 0 ? !a->is_param() : a != layers[i - 1].out) {
      return absl::UnimplementedError("A is not the previous layer");
    }
    const Shape& out = mm.result()->type().shape;
    const Shape& as = a->type().shape;
    l.m = out[out.size() - 2];
    l.n = out.back();
    l.k = l.a_transposed ? as[as.size() - 2] : as.back();
    l.batch = Prod(out, 0, out.size() - 2);
    if (l.batch == 0 || l.m == 0 || l.n == 0 || l.k == 0) {
      return absl::UnimplementedError("empty matmul");
    }
    // K and N are also A's and B's / C's leading dimensions.
    for (auto [dim, size] : {std::pair<const char*, int64_t>{"K", l.k},
                             std::pair<const char*, int64_t>{"N", l.n}}) {
      if (size > microkernels::kMaxBrgemmDim) {
        return absl::UnimplementedError(absl::StrCat(
            dim, " = ", size, " is past the kernels' limit of 2^20"));
      }
    }
    HGC_ASSIGN_OR_RETURN(l.a_batch, MapBatch(as, out));
    HGC_ASSIGN_OR_RETURN(l.b_batch, MapBatch(mm.operand(1)->type().shape, out));
    // Post-ops keep the tile's shape and read only this layer, params and
    // constants.
    absl::flat_hash_set<const Value*> local = {mm.result()};
    for (const Op* p : l.post) {
      if (p->result()->type().shape != out) {
        return absl::UnimplementedError("post-op changes the shape");
      }
      for (const Value* x : p->operands()) {
        bool constant =
            !x->is_param() && x->defining_op()->kind_id() == OpKind::kConstant;
        if (!local.contains(x) && !x->is_param() && !constant) {
          return absl::UnimplementedError("post-op reads another layer");
        }
      }
      local.insert(p->result());
    }
  }
  if (body.results().size() != 1 || body.results()[0] != layers.back().out) {
    return absl::UnimplementedError("group result is not the last layer");
  }
  return layers;
}

}  // namespace codegen
}  // namespace hgc
