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
};

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
    // The kernel writes f32 C where the post-ops then write the layer's
    // output, in place.
    if (l.out->type().dtype != DType::kF32) {
      return absl::UnimplementedError("post-ops end in a non-f32 value");
    }
    const Attribute* ta = mm.FindAttr("transpose_a");
    if (ta != nullptr && ta->is_bool() && ta->as_bool()) {
      return absl::UnimplementedError("transpose_a");
    }
    for (const Value* v : {mm.operand(0), mm.operand(1), mm.result()}) {
      if (v->type().dtype != DType::kF32 || v->type().rank() < 2) {
        return absl::UnimplementedError("non-f32 or rank-1 matmul");
      }
    }
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

// The K chunk of one BRGEMM call: the largest divisor of K in [32, 128]
// when K is longer than 128 (a 128 x 64 f32 B chunk is 32 KiB, inside L1),
// otherwise all of K.
int64_t ChooseKChunk(int64_t k) {
  if (k <= 128) return k;
  for (int64_t kc = 128; kc >= 32; --kc) {
    if (k % kc == 0) return kc;
  }
  return k;
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

absl::Status LowerMatmulGroup(LowerState& state, const Op& op) {
  const Attribute* body_attr = op.FindAttr("body");
  Module* module = op.graph()->module();
  const Graph* body = (body_attr && module)
                          ? module->FindGraph(body_attr->as_symbol())
                          : nullptr;
  if (body == nullptr) return absl::UnimplementedError("no body");
  HGC_ASSIGN_OR_RETURN(std::vector<Layer> layers, SplitLayers(*body));
  if (body->results()[0]->type() != op.result()->type()) {
    return absl::UnimplementedError("body result type differs");
  }
  HGC_ASSIGN_OR_RETURN(Isa isa, microkernels::SelectBrgemmIsa(
                                    microkernels::BrgemmDataType::kF32));

  // B operands that depend only on constants are packed once; transposed
  // ones per call; both into N-blocked panels (block j: K x nb contiguous,
  // so the kernel walks B with a short stride instead of N floats).
  std::vector<bool> b_const(layers.size()), b_transposed(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    const Value* bp = layers[i].matmul->operand(1);
    const Attribute* tb = layers[i].matmul->FindAttr("transpose_b");
    b_transposed[i] = tb != nullptr && tb->is_bool() && tb->as_bool();
    b_const[i] = state.const_only->IsConstOnly(op.operand(bp->index()));
  }
  auto blocked = [&](size_t i) { return b_const[i] || b_transposed[i]; };
  // Kernels: eight per layer, (overwrite / accumulate) x (full / tail M) x
  // (full / tail N). The K reduction runs in chunks of kc so that the B
  // chunk a tile's kernel sweeps once per register row block stays in L1;
  // the first chunk overwrites C, the others accumulate into it.
  std::vector<TileSizes> tiles;
  std::vector<int64_t> k_chunks;
  std::vector<const void*> kernel_fns;
  std::vector<std::shared_ptr<const microkernels::BrgemmKernel>> kernels;
  for (const Layer& l : layers) {
    TileSizes t = ChooseTiles(l.batch, l.m, l.n, l.k, state.num_threads);
    tiles.push_back(t);
    int64_t kc = ChooseKChunk(l.k);
    k_chunks.push_back(kc);
    for (int beta = 0; beta < 2; ++beta) {
      for (int mt = 0; mt < 2; ++mt) {
        for (int nt = 0; nt < 2; ++nt) {
          int64_t mm = mt && l.m % t.mb ? l.m % t.mb : t.mb;
          int64_t nn = nt && l.n % t.nb ? l.n % t.nb : t.nb;
          BrgemmDesc d = microkernels::MakeBrgemmDesc(
              isa, microkernels::BrgemmDataType::kF32, mm, nn, kc);
          d.lda = l.k;
          d.ldb = blocked(tiles.size() - 1) ? nn : l.n;
          d.ldc = l.n;
          d.accumulate = beta == 1;
          d.batch_kind = microkernels::BatchKind::kStrided;
          HGC_ASSIGN_OR_RETURN(
              auto kernel, microkernels::BrgemmKernelCache::Global().Get(d));
          kernel_fns.push_back(reinterpret_cast<const void*>(kernel->fn()));
          kernels.push_back(std::move(kernel));
        }
      }
    }
  }
  // Post-op programs (validated before anything is emitted).
  StepBuffers buffers;
  std::vector<int> c_buffer(layers.size());
  std::vector<int> b_buffer(layers.size());
  std::vector<Step> init_steps, pre_steps;
  auto param_ref = [&](const Value* p) {
    return state.refs.at(op.operand(p->index()));
  };
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    c_buffer[i] = i + 1 == layers.size()
                      ? buffers.Add(state.refs.at(op.result()))
                      : buffers.Add(BufferRef::Arena(
                            state.AllocArena(l.batch * l.m * l.n * 4)));
  }
  std::vector<RowProgram> programs(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    if (l.post.empty()) continue;
    std::vector<const Op*> ops;
    std::vector<const Value*> params;
    std::vector<int> param_buffers;
    for (const Op* p : l.post) {
      for (const Value* x : p->operands()) {
        if (x->is_param()) {
          if (std::find(params.begin(), params.end(), x) == params.end()) {
            params.push_back(x);
            param_buffers.push_back(buffers.Add(param_ref(x)));
          }
        } else if (x->defining_op()->kind() == "constant" &&
                   std::find(ops.begin(), ops.end(), x->defining_op()) ==
                       ops.end()) {
          ops.push_back(x->defining_op());
        }
      }
    }
    ops.insert(ops.end(), l.post.begin(), l.post.end());
    RowProgram& prog = programs[i];
    HGC_RETURN_IF_ERROR(BuildRowProgram(ops, params, param_buffers,
                                        l.matmul->result()->type().shape, l.out,
                                        c_buffer[i], prog));
    RowInput c;
    c.value = l.matmul->result();
    c.buffer = c_buffer[i];
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
    const int64_t slice = l.k * l.n * 4;  // f32 plain panels, no padding
    const int64_t slices = l.b_batched ? l.batch : 1;
    BufferRef dst =
        b_const[i] ? BufferRef::Constant(state.AddConstantSlot(slice * slices))
                   : BufferRef::Arena(state.AllocArena(slice * slices));
    // One descriptor per N block (the last may be narrower).
    std::vector<BrgemmDesc> panels;
    for (int64_t n0 = 0; n0 < l.n; n0 += tiles[i].nb) {
      panels.push_back(microkernels::MakeBrgemmDesc(
          isa, microkernels::BrgemmDataType::kF32, 1,
          std::min(tiles[i].nb, l.n - n0), l.k));
      HGC_RETURN_IF_ERROR(microkernels::ValidateBrgemmDesc(panels.back()));
    }
    Step pack;
    pack.name = absl::StrCat(op.result()->name(), ".pack_b", i);
    pack.buffers = {param_ref(bp), dst};
    const int64_t k = l.k, n = l.n, nb = tiles[i].nb;
    pack.host = [panels, slices, transposed, k, n, nb](void* const* bufs) {
      const float* src = static_cast<const float*>(bufs[0]);
      float* out = static_cast<float*>(bufs[1]);
      for (int64_t s = 0; s < slices; ++s) {
        for (size_t j = 0; j < panels.size(); ++j) {
          const int64_t n0 = static_cast<int64_t>(j) * nb;
          microkernels::BSource source{
              src + s * k * n + (transposed ? n0 * k : n0), transposed ? k : n,
              transposed};
          // Validated at compile time; nothing here can fail.
          (void)microkernels::PackB(panels[j], source,
                                    out + s * k * n + n0 * k);
        }
      }
    };
    (b_const[i] ? init_steps : pre_steps).push_back(std::move(pack));
    b_buffer[i] = buffers.Add(dst);
  }
  // The step function.
  std::vector<int> a_buffer(layers.size());
  a_buffer[0] = buffers.Add(param_ref(layers[0].matmul->operand(0)));
  for (size_t i = 1; i < layers.size(); ++i) a_buffer[i] = c_buffer[i - 1];

  llvm::IRBuilder<> b(*state.context);
  FrameValues frame;
  std::string name = state.StepName(layers.size() > 1 ? "mlp" : "matmul");
  llvm::Function* fn = BeginStepFunction(state, name, b, frame);
  llvm::Type* i8p = b.getInt8PtrTy();
  llvm::StructType* args_type =
      llvm::StructType::get(*state.context, {i8p, i8p, i8p, b.getInt64Ty()});
  llvm::Value* args = b.CreateAlloca(args_type, nullptr, "brgemm_args");
  auto* kernel_type = llvm::FunctionType::get(b.getVoidTy(), {i8p}, false);
  llvm::Type* f32 = b.getFloatTy();
  absl::Status status = absl::OkStatus();
  for (size_t i = 0; i < layers.size(); ++i) {
    const Layer& l = layers[i];
    const TileSizes t = tiles[i];
    if (i > 0) EmitBarrier(b, frame);
    int64_t mtiles = (l.m + t.mb - 1) / t.mb, ntiles = (l.n + t.nb - 1) / t.nb;
    llvm::Value *begin, *end;
    EmitThreadRange(b, frame, b.getInt64(l.batch * mtiles * ntiles), begin,
                    end);
    llvm::Value* a = LoadBuffer(b, frame, a_buffer[i]);
    llvm::Value* bb = LoadBuffer(b, frame, b_buffer[i]);
    llvm::Value* c = LoadBuffer(b, frame, c_buffer[i]);
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
      llvm::Value* a_off = b.CreateMul(m0, b.getInt64(l.k));
      if (l.a_batched) {
        a_off = b.CreateAdd(a_off, b.CreateMul(bi, b.getInt64(l.m * l.k)));
      }
      // Blocked B: panel ni starts at ni * K * nb = n0 * K, and its K rows
      // are nn wide; plain B rows are N wide.
      llvm::Value* b_off = blocked(i) ? b.CreateMul(n0, b.getInt64(l.k)) : n0;
      if (l.b_batched) {
        b_off = b.CreateAdd(b_off, b.CreateMul(bi, b.getInt64(l.k * l.n)));
      }
      llvm::Value* b_row =
          blocked(i) ? b.CreateSelect(n_tail, n_left, b.getInt64(t.nb))
                     : b.getInt64(l.n);
      llvm::Value* c_off =
          b.CreateAdd(b.CreateMul(bi, b.getInt64(l.m * l.n)),
                      b.CreateAdd(b.CreateMul(m0, b.getInt64(l.n)), n0));
      const int64_t kc = k_chunks[i];
      EmitLoop(
          b, b.getInt64(0), b.getInt64(l.k / kc),
          [&](llvm::IRBuilder<>& b, llvm::Value* chunk) {
            llvm::Value* accumulate = b.CreateZExt(
                b.CreateICmpNE(chunk, b.getInt64(0)), b.getInt64Ty());
            llvm::Value* kidx =
                b.CreateAdd(b.getInt64(8 * i),
                            b.CreateAdd(b.CreateMul(accumulate, b.getInt64(4)),
                                        tile_kernel));
            llvm::LoadInst* kernel = b.CreateLoad(
                i8p, b.CreateInBoundsGEP(i8p, frame.kernels, kidx), "kernel");
            kernel->setMetadata(llvm::LLVMContext::MD_invariant_load,
                                llvm::MDNode::get(*state.context, {}));
            llvm::Value* k0 = b.CreateMul(chunk, b.getInt64(kc));
            llvm::Value* fields[3] = {
                b.CreateInBoundsGEP(f32, a, b.CreateAdd(a_off, k0)),
                b.CreateInBoundsGEP(f32, bb,
                                    b.CreateAdd(b_off, b.CreateMul(k0, b_row))),
                b.CreateInBoundsGEP(f32, c, c_off)};
            for (unsigned f = 0; f < 3; ++f) {
              b.CreateStore(b.CreateBitCast(fields[f], i8p),
                            b.CreateStructGEP(args_type, args, f));
            }
            b.CreateStore(b.getInt64(1), b.CreateStructGEP(args_type, args, 3));
            b.CreateCall(kernel_type,
                         b.CreateBitCast(kernel, kernel_type->getPointerTo()),
                         {b.CreateBitCast(args, i8p)});
          });
      if (l.post.empty()) return;
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
