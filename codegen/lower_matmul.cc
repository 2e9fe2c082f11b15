#include "codegen/lower_matmul.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "codegen/llvm/elemental_emitter.h"
#include "codegen/lower_elementwise.h"
#include "microkernels/brgemm_abi.h"
#include "microkernels/brgemm_dispatch.h"
#include "microkernels/kernel_cache.h"
#include "microkernels/pack.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {
namespace {

using microkernels::BrgemmDesc;

// One matmul and the post-ops on its result.
struct Layer {
  const Op* matmul = nullptr;
  std::vector<const Op*> post;
  const Value* out = nullptr;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool a_batched = false, b_batched = false;
  microkernels::BrgemmDataType kind = microkernels::BrgemmDataType::kF32;
  int64_t in_bytes = 4;  // bytes per A / B element
  // The kernel's C is f32 or s32; it is written straight into the layer's
  // output (where the post-ops rewrite it in place) when the matmul result
  // is that type and the output has 4-byte elements too, else into an f32 /
  // s32 scratch from which the post-ops (or the rounding to bf16) read.
  bool c_scratch = false;
  // Post-ops the f32 kernel applies itself as it stores C (brgemm_desc.h):
  // a bias row (`bias`, a group param of N elements) and / or relu, when
  // they are all the layer's post-ops. The tile loop then runs none.
  const Value* bias = nullptr;
  bool relu = false;
  bool kernel_post_ops() const { return bias != nullptr || relu; }
};

// Sets l.bias / l.relu when the layer's post-ops are exactly
// [add(C, bias)] [relu] in that order (either or both; add's operands in
// either order), on an f32 kernel writing its C straight to the output.
void MatchKernelPostOps(Layer& l) {
  if (l.kind != microkernels::BrgemmDataType::kF32 || l.c_scratch ||
      l.post.empty() || l.post.size() > 2) {
    return;
  }
  const Value* c = l.matmul->result();
  const Value* bias = nullptr;
  size_t next = 0;
  const Op* add = l.post[0];
  if (add->kind() == "add" && add->num_operands() == 2) {
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
    if (r->kind() != "relu" || r->operand(0) != c) return;
    relu = true;
    ++next;
  }
  if (next != l.post.size()) return;
  l.bias = bias;
  l.relu = relu;
}

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

// Whether `operand` (rank >= 2) has the batch dims of `out` (true), none
// that matter (all 1: false), or something else (error).
absl::StatusOr<bool> BatchedLike(const Shape& operand, const Shape& out) {
  int64_t count = Prod(operand, 0, operand.size() - 2);
  if (count == 1) return false;
  if (operand.size() == out.size() &&
      std::equal(operand.begin(), operand.end() - 2, out.begin())) {
    return true;
  }
  return absl::UnimplementedError("partially broadcast batch dims");
}

absl::StatusOr<std::vector<Layer>> SplitLayers(const Graph& body) {
  std::vector<Layer> layers;
  for (const auto& o : body.ops()) {
    const Op* op = o.get();
    if (op->kind() == "constant") continue;
    if (op->kind() == "matmul") {
      layers.emplace_back();
      layers.back().matmul = op;
      continue;
    }
    if (layers.empty() || !IsElementalOp(op->kind())) {
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
    if (ta != nullptr && ta->is_bool() && ta->as_bool()) {
      return absl::UnimplementedError("transpose_a");
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
    l.k = as.back();
    l.batch = Prod(out, 0, out.size() - 2);
    if (l.batch == 0 || l.m == 0 || l.n == 0 || l.k == 0) {
      return absl::UnimplementedError("empty matmul");
    }
    HGC_ASSIGN_OR_RETURN(l.a_batched, BatchedLike(as, out));
    HGC_ASSIGN_OR_RETURN(l.b_batched,
                         BatchedLike(mm.operand(1)->type().shape, out));
    // Post-ops keep the tile's shape and read only this layer, params and
    // constants.
    absl::flat_hash_set<const Value*> local = {mm.result()};
    for (const Op* p : l.post) {
      if (p->result()->type().shape != out) {
        return absl::UnimplementedError("post-op changes the shape");
      }
      for (const Value* x : p->operands()) {
        bool constant =
            !x->is_param() && x->defining_op()->kind() == "constant";
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

}  // namespace

// The K chunk of one BRGEMM call: all of K up to 128 (a 128 x 64 f32 B
// chunk is 32 KiB, inside L1); beyond, the largest divisor of K in
// [64, 128], else the fewest chunks of at most 128 made as even as
// possible, the last one shorter (K = 479: 3 x 120 + 119). Shorter chunks
// would reload C too often, and one whole long chunk would stream B from L2
// for every register block.
int64_t ChooseKChunk(int64_t k) {
  if (k <= 128) return k;
  for (int64_t kc = 128; kc >= 64; --kc) {
    if (k % kc == 0) return kc;
  }
  const int64_t chunks = (k + 127) / 128;
  return (k + chunks - 1) / chunks;
}

TileSizes ChooseTiles(int64_t batch, int64_t m, int64_t n, int64_t k,
                      int num_threads) {
  TileSizes t;
  t.nb = n <= 64 ? n : 64;
  t.mb = m < 64 ? m : 64;
  auto tiles = [&] {
    return batch * ((m + t.mb - 1) / t.mb) * ((n + t.nb - 1) / t.nb);
  };
  while (tiles() < 2 * num_threads && t.mb > 8) t.mb = (t.mb + 1) / 2;
  const int64_t mtiles = (m + t.mb - 1) / t.mb;
  const int64_t l2_rows = (int64_t{1} << 20) / (4 * std::max<int64_t>(k, 1));
  const int64_t per_thread = (batch * mtiles + num_threads - 1) / num_threads;
  t.group =
      std::clamp<int64_t>(std::min(l2_rows / t.mb, per_thread), 1, mtiles);
  return t;
}

namespace {

// Kernels per layer: 3 K-chunk roles x (full / tail M) x (full / tail N).
constexpr int64_t kKernelsPerLayer = 12;

// Whether the static split hands thread t exactly row group t of a layer
// (one batch, equal groups, one per thread), so that its tiles are whole
// rows [t * group * mb, (t + 1) * group * mb).
bool RowGroupPerThread(const Layer& l, const TileSizes& t, int threads) {
  const int64_t mtiles = (l.m + t.mb - 1) / t.mb;
  return l.batch == 1 && mtiles % t.group == 0 && mtiles / t.group == threads;
}

bool SameRowsPerThread(const Layer& a, const TileSizes& ta, const Layer& b,
                       const TileSizes& tb, int threads) {
  return threads > 1 && RowGroupPerThread(a, ta, threads) &&
         RowGroupPerThread(b, tb, threads) && a.m == b.m &&
         ta.mb * ta.group == tb.mb * tb.group;
}

// The K chunk of a non-f32 layer (a multiple of the VNNI group `g`): all of
// K up to 1024 elements (the AMX and VNNI kernels keep C in registers over
// a chunk, so long chunks store C least often), else the largest multiple
// of g dividing K in [256, 1024], else all of K.
int64_t ChooseLowPrecisionKChunk(int64_t k, int64_t g) {
  if (k <= 1024) return k;
  for (int64_t kc = 1024; kc >= 256; --kc) {
    if (k % kc == 0 && kc % g == 0) return kc;
  }
  return k;
}

}  // namespace

absl::Status LowerMatmulGroup(LowerState& state, const Op& op) {
  using microkernels::BrgemmDataType;
  const Graph* body = FusionBody(op);
  if (body == nullptr) return absl::UnimplementedError("no body");
  HGC_ASSIGN_OR_RETURN(std::vector<Layer> layers, SplitLayers(*body));
  if (body->results()[0]->type() != op.result()->type()) {
    return absl::UnimplementedError("body result type differs");
  }
  for (Layer& l : layers) MatchKernelPostOps(l);
  std::vector<Isa> isas;
  for (const Layer& l : layers) {
    HGC_ASSIGN_OR_RETURN(Isa isa, microkernels::SelectBrgemmIsa(l.kind));
    isas.push_back(isa);
  }

  // B operands that depend only on constants are packed once; other
  // transposed or low-precision ones per call; all into N-blocked panels
  // (panel j: the packed K x nb block of its own descriptor, contiguous, so
  // the kernel walks B with a short stride instead of N elements).
  std::vector<bool> b_const(layers.size()), b_transposed(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    const Value* bp = layers[i].matmul->operand(1);
    const Attribute* tb = layers[i].matmul->FindAttr("transpose_b");
    b_transposed[i] = tb != nullptr && tb->is_bool() && tb->as_bool();
    b_const[i] = state.const_only->IsConstOnly(op.operand(bp->index()));
  }
  auto blocked = [&](size_t i) {
    return b_const[i] || b_transposed[i] ||
           layers[i].kind != BrgemmDataType::kF32;
  };
  // K rows of a packed panel: K rounded up to the VNNI group.
  auto padded_k = [&](size_t i) {
    const int64_t g = microkernels::VnniGranularity(layers[i].kind);
    return (layers[i].k + g - 1) / g * g;
  };
  // Kernels: kKernelsPerLayer per layer, (first / middle / last K chunk) x
  // (full / tail M) x (full / tail N). The K reduction runs in chunks of kc
  // so that the B chunk a tile's kernel sweeps once per register row block
  // stays in L1 (f32) or C stays in registers longest (bf16, int8); the
  // first chunk overwrites C, the others accumulate into it, and the last
  // (the first, when there is one chunk) applies the kernel's post-ops and
  // covers the rest of K when K is not a multiple of kc. Where neither
  // applies the middle and last kernels are the same (one cache entry).
  std::vector<TileSizes> tiles;
  std::vector<int64_t> k_chunks;
  std::vector<const void*> kernel_fns;
  std::vector<std::shared_ptr<const microkernels::BrgemmKernel>> kernels;
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    TileSizes t = ChooseTiles(l.batch, l.m, l.n, l.k, state.num_threads);
    tiles.push_back(t);
    int64_t kc = l.kind == BrgemmDataType::kF32
                     ? ChooseKChunk(l.k)
                     : ChooseLowPrecisionKChunk(
                           l.k, microkernels::VnniGranularity(l.kind));
    k_chunks.push_back(kc);
    const int64_t chunks = (l.k + kc - 1) / kc;
    const int64_t last_k = l.k - (chunks - 1) * kc;
    for (int set = 0; set < 3; ++set) {
      // The kernel a set's chunks need (sets that never run reuse one:
      // with one chunk every set is the first, with two there is no
      // middle).
      const int role = chunks == 1 ? 0 : (chunks == 2 && set == 1 ? 2 : set);
      for (int mt = 0; mt < 2; ++mt) {
        for (int nt = 0; nt < 2; ++nt) {
          int64_t mm = mt && l.m % t.mb ? l.m % t.mb : t.mb;
          int64_t nn = nt && l.n % t.nb ? l.n % t.nb : t.nb;
          const bool last = role == 2 || chunks == 1;
          BrgemmDesc d = microkernels::MakeBrgemmDesc(isas[i], l.kind, mm, nn,
                                                      last ? last_k : kc);
          d.lda = l.k;
          d.ldb = blocked(i) ? nn : l.n;
          d.ldc = l.n;
          d.accumulate = role > 0;
          d.bias = last && l.bias != nullptr;
          d.relu = last && l.relu;
          d.batch_kind = microkernels::BatchKind::kStrided;
          HGC_ASSIGN_OR_RETURN(
              auto kernel, microkernels::BrgemmKernelCache::Global().Get(d));
          kernel_fns.push_back(reinterpret_cast<const void*>(kernel->fn()));
          kernels.push_back(std::move(kernel));
        }
      }
    }
  }
  // Buffers: each layer's output (the group's result for the last, arena
  // otherwise) and, where the kernel cannot write its C there, a C scratch.
  StepBuffers buffers;
  std::vector<int> c_buffer(layers.size()), out_buffer(layers.size());
  std::vector<int> b_buffer(layers.size());
  std::vector<Step> init_steps, pre_steps;
  auto param_ref = [&](const Value* p) {
    return state.refs.at(op.operand(p->index()));
  };
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    const int64_t elements = l.batch * l.m * l.n;
    out_buffer[i] = i + 1 == layers.size()
                        ? buffers.Add(state.refs.at(op.result()))
                        : buffers.Add(BufferRef::Arena(state.AllocArena(
                              elements * DTypeSize(l.out->type().dtype))));
    c_buffer[i] =
        l.c_scratch
            ? buffers.Add(BufferRef::Arena(state.AllocArena(elements * 4)))
            : out_buffer[i];
  }
  // Post-op programs (validated before anything is emitted): from C to the
  // layer's output; a layer with a C scratch and no post-ops still needs
  // one, to round its C into the output.
  std::vector<RowProgram> programs(layers.size());
  std::vector<bool> has_program(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    if ((l.post.empty() || l.kernel_post_ops()) && !l.c_scratch) continue;
    has_program[i] = true;
    std::vector<const Op*> ops;
    std::vector<const Value*> params;
    CollectInputs(l.post, params, ops);
    std::vector<int> param_buffers;
    for (const Value* x : params) {
      param_buffers.push_back(buffers.Add(param_ref(x)));
    }
    ops.insert(ops.end(), l.post.begin(), l.post.end());
    RowProgram& prog = programs[i];
    HGC_RETURN_IF_ERROR(BuildRowProgram(ops, params, param_buffers,
                                        l.matmul->result()->type().shape, l.out,
                                        out_buffer[i], prog));
    RowInput c;
    c.value = l.matmul->result();
    c.buffer = c_buffer[i];
    if (c.value->type().dtype != DType::kF32 &&
        c.value->type().dtype != DType::kS32) {
      c.rounded_from_f32 = true;  // a bf16 result in the kernel's f32 C
    }
    HGC_ASSIGN_OR_RETURN(c.strides, BroadcastStrides(c.value->type().shape,
                                                     c.value->type().shape));
    prog.inputs.push_back(std::move(c));
  }
  // B operands: packed once, packed per call, or read in place.
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    const Value* bp = l.matmul->operand(1);
    if (!blocked(i)) {
      b_buffer[i] = buffers.Add(param_ref(bp));
      continue;
    }
    const bool transposed = b_transposed[i];
    const int64_t es = l.in_bytes;
    const int64_t kp = padded_k(i);
    const int64_t slice = kp * l.n * es;  // bytes of one batch's panels
    const int64_t slices = l.b_batched ? l.batch : 1;
    BufferRef dst =
        b_const[i] ? BufferRef::Constant(state.AddConstantSlot(slice * slices))
                   : BufferRef::Arena(state.AllocArena(slice * slices));
    // One descriptor per N block (the last may be narrower).
    std::vector<BrgemmDesc> panels;
    for (int64_t n0 = 0; n0 < l.n; n0 += tiles[i].nb) {
      panels.push_back(microkernels::MakeBrgemmDesc(
          isas[i], l.kind, 1, std::min(tiles[i].nb, l.n - n0), l.k));
      HGC_RETURN_IF_ERROR(microkernels::ValidateBrgemmDesc(panels.back()));
    }
    Step pack;
    pack.name = absl::StrCat(op.result()->name(), ".pack_b", i);
    pack.buffers = {param_ref(bp), dst};
    const int64_t k = l.k, n = l.n, nb = tiles[i].nb;
    pack.host = [panels, slices, transposed, k, n, nb, kp, es,
                 slice](void* const* bufs) -> absl::Status {
      const uint8_t* src = static_cast<const uint8_t*>(bufs[0]);
      uint8_t* out = static_cast<uint8_t*>(bufs[1]);
      for (int64_t s = 0; s < slices; ++s) {
        for (size_t j = 0; j < panels.size(); ++j) {
          const int64_t n0 = static_cast<int64_t>(j) * nb;
          microkernels::BSource source{
              src + (s * k * n + (transposed ? n0 * k : n0)) * es,
              transposed ? k : n, transposed};
          HGC_RETURN_IF_ERROR(microkernels::PackB(
              panels[j], source, out + s * slice + n0 * kp * es));
        }
      }
      return absl::OkStatus();
    };
    (b_const[i] ? init_steps : pre_steps).push_back(std::move(pack));
    b_buffer[i] = buffers.Add(dst);
  }
  // The step function. Pointers are bytes (i8*): element sizes differ by
  // layer and operand.
  std::vector<int> a_buffer(layers.size());
  a_buffer[0] = buffers.Add(param_ref(layers[0].matmul->operand(0)));
  for (size_t i = 1; i < layers.size(); ++i) a_buffer[i] = out_buffer[i - 1];
  std::vector<int> bias_buffer(layers.size(), -1);
  for (size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].bias != nullptr) {
      bias_buffer[i] = buffers.Add(param_ref(layers[i].bias));
    }
  }

  llvm::IRBuilder<> b(*state.context);
  FrameValues frame;
  std::string name = state.StepName(layers.size() > 1 ? "mlp" : "matmul");
  llvm::Function* fn = BeginStepFunction(state, name, b, frame);
  llvm::Type* i8 = b.getInt8Ty();
  llvm::Type* i8p = b.getInt8PtrTy();
  // microkernels::BrgemmCallArgs: a, b, c, batch, bias.
  llvm::StructType* args_type = llvm::StructType::get(
      *state.context, {i8p, i8p, i8p, b.getInt64Ty(), i8p});
  llvm::Value* args = b.CreateAlloca(args_type, nullptr, "brgemm_args");
  auto* kernel_type = llvm::FunctionType::get(b.getVoidTy(), {i8p}, false);
  absl::Status status = absl::OkStatus();
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    const TileSizes t = tiles[i];
    const int64_t es = l.in_bytes;
    // Between layers that give every thread the same rows, a thread reads
    // only rows it wrote itself: no barrier.
    if (i > 0 && !SameRowsPerThread(layers[i - 1], tiles[i - 1], l, t,
                                    state.num_threads)) {
      EmitBarrier(b, frame);
    }
    int64_t mtiles = (l.m + t.mb - 1) / t.mb, ntiles = (l.n + t.nb - 1) / t.nb;
    llvm::Value *begin, *end;
    EmitThreadRange(b, frame, b.getInt64(l.batch * mtiles * ntiles), begin,
                    end);
    llvm::Value* a = LoadBuffer(b, frame, a_buffer[i], i8);
    llvm::Value* bb = LoadBuffer(b, frame, b_buffer[i], i8);
    llvm::Value* c = LoadBuffer(b, frame, c_buffer[i], i8);
    llvm::Value* bias = l.bias != nullptr
                            ? LoadBuffer(b, frame, bias_buffer[i], i8)
                            : llvm::ConstantPointerNull::get(
                                  llvm::cast<llvm::PointerType>(i8p));
    EmitLoop(b, begin, end, [&](llvm::IRBuilder<>& b, llvm::Value* tile) {
      llvm::Value* per_batch = b.getInt64(mtiles * ntiles);
      llvm::Value* bi = b.CreateUDiv(tile, per_batch, "bi");
      llvm::Value* r = b.CreateURem(tile, per_batch);
      // Row group g holds M tiles [g * group, + rows); inside it the N
      // panel varies slowest.
      llvm::Value* group_tiles = b.getInt64(t.group * ntiles);
      llvm::Value* g = b.CreateUDiv(r, group_tiles, "group");
      llvm::Value* in_group = b.CreateURem(r, group_tiles);
      llvm::Value* g_first = b.CreateMul(g, b.getInt64(t.group));
      llvm::Value* g_left = b.CreateSub(b.getInt64(mtiles), g_first);
      llvm::Value* g_rows =
          b.CreateSelect(b.CreateICmpULT(g_left, b.getInt64(t.group)), g_left,
                         b.getInt64(t.group));
      llvm::Value* m0 =
          b.CreateMul(b.CreateAdd(g_first, b.CreateURem(in_group, g_rows)),
                      b.getInt64(t.mb), "m0");
      llvm::Value* n0 =
          b.CreateMul(b.CreateUDiv(in_group, g_rows), b.getInt64(t.nb), "n0");
      llvm::Value* m_left = b.CreateSub(b.getInt64(l.m), m0);
      llvm::Value* n_left = b.CreateSub(b.getInt64(l.n), n0);
      llvm::Value* m_tail = b.CreateICmpSLT(m_left, b.getInt64(t.mb));
      llvm::Value* n_tail = b.CreateICmpSLT(n_left, b.getInt64(t.nb));
      llvm::Value* tile_kernel = b.CreateAdd(
          b.CreateMul(b.CreateZExt(m_tail, b.getInt64Ty()), b.getInt64(2)),
          b.CreateZExt(n_tail, b.getInt64Ty()));
      // Element offsets.
      llvm::Value* a_off = b.CreateMul(m0, b.getInt64(l.k));
      if (l.a_batched) {
        a_off = b.CreateAdd(a_off, b.CreateMul(bi, b.getInt64(l.m * l.k)));
      }
      // Blocked B: panel ni starts at ni * Kp * nb = n0 * Kp, and its rows
      // are nn wide; plain B rows are N wide.
      llvm::Value* b_off =
          blocked(i) ? b.CreateMul(n0, b.getInt64(padded_k(i))) : n0;
      if (l.b_batched) {
        b_off = b.CreateAdd(
            b_off, b.CreateMul(
                       bi, b.getInt64((blocked(i) ? padded_k(i) : l.k) * l.n)));
      }
      llvm::Value* b_row =
          blocked(i) ? b.CreateSelect(n_tail, n_left, b.getInt64(t.nb))
                     : b.getInt64(l.n);
      llvm::Value* c_off =
          b.CreateAdd(b.CreateMul(bi, b.getInt64(l.m * l.n)),
                      b.CreateAdd(b.CreateMul(m0, b.getInt64(l.n)), n0));
      const int64_t kc = k_chunks[i];
      const int64_t chunks = (l.k + kc - 1) / kc;
      llvm::Value* bias_row =
          l.bias != nullptr
              ? b.CreateInBoundsGEP(i8, bias, b.CreateMul(n0, b.getInt64(4)))
              : bias;
      EmitLoop(
          b, b.getInt64(0), b.getInt64(chunks),
          [&](llvm::IRBuilder<>& b, llvm::Value* chunk) {
            // Kernel set: 0 for the first chunk, 2 for the last of several,
            // 1 between.
            llvm::Value* set = b.CreateSelect(
                b.CreateICmpEQ(chunk, b.getInt64(0)), b.getInt64(0),
                b.CreateSelect(b.CreateICmpEQ(chunk, b.getInt64(chunks - 1)),
                               b.getInt64(2), b.getInt64(1)));
            llvm::Value* kidx = b.CreateAdd(
                b.getInt64(kKernelsPerLayer * i),
                b.CreateAdd(b.CreateMul(set, b.getInt64(4)), tile_kernel));
            llvm::LoadInst* kernel = b.CreateLoad(
                i8p, b.CreateInBoundsGEP(i8p, frame.kernels, kidx), "kernel");
            kernel->setMetadata(llvm::LLVMContext::MD_invariant_load,
                                llvm::MDNode::get(*state.context, {}));
            llvm::Value* k0 = b.CreateMul(chunk, b.getInt64(kc));
            auto bytes = [&](llvm::Value* elements, int64_t size) {
              return b.CreateMul(elements, b.getInt64(size));
            };
            llvm::Value* fields[3] = {
                b.CreateInBoundsGEP(i8, a, bytes(b.CreateAdd(a_off, k0), es)),
                b.CreateInBoundsGEP(
                    i8, bb,
                    bytes(b.CreateAdd(b_off, b.CreateMul(k0, b_row)), es)),
                b.CreateInBoundsGEP(i8, c, bytes(c_off, 4))};
            for (unsigned f = 0; f < 3; ++f) {
              b.CreateStore(fields[f], b.CreateStructGEP(args_type, args, f));
            }
            b.CreateStore(b.getInt64(1), b.CreateStructGEP(args_type, args, 3));
            b.CreateStore(bias_row, b.CreateStructGEP(args_type, args, 4));
            b.CreateCall(kernel_type,
                         b.CreateBitCast(kernel, kernel_type->getPointerTo()),
                         {b.CreateBitCast(args, i8p)});
          });
      if (!has_program[i]) return;
      // Post-ops on the C tile while it is in L1.
      llvm::Value* mcount = b.CreateSelect(m_tail, m_left, b.getInt64(t.mb));
      llvm::Value* ncount = b.CreateSelect(n_tail, n_left, b.getInt64(t.nb));
      llvm::Value* row0 =
          b.CreateAdd(b.CreateMul(bi, b.getInt64(l.m)), m0, "row0");
      EmitLoop(b, b.getInt64(0), mcount,
               [&](llvm::IRBuilder<>& b, llvm::Value* mr) {
                 absl::Status s =
                     EmitRow(b, frame, programs[i], b.CreateAdd(row0, mr), n0,
                             b.CreateAdd(n0, ncount));
                 if (status.ok()) status = s;
               });
    });
  }
  HGC_ASSIGN_OR_RETURN(Step step,
                       FinishStepFunction(fn, b, status, name, buffers));
  for (Step& s : init_steps) state.program->init_steps.push_back(std::move(s));
  for (Step& s : pre_steps) state.program->steps.push_back(std::move(s));
  step.kernels = kernel_fns;
  state.program->steps.push_back(std::move(step));
  for (auto& k : kernels) state.kernels.push_back(std::move(k));
  return absl::OkStatus();
}

}  // namespace codegen
}  // namespace hgc
