#include "codegen/lower_matmul.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "codegen/llvm/elemental_emitter.h"
#include "codegen/matmul_layers.h"
#include "codegen/nest_buffers.h"
#include "codegen/row_program.h"
#include "codegen/tile_builder.h"
#include "codegen/tile_ir.h"
#include "codegen/transpose_step.h"
#include "microkernels/brgemm_dispatch.h"
#include "microkernels/kernel_cache.h"
#include "microkernels/pack.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {

using microkernels::BrgemmDesc;

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

// Whether the static split hands thread t exactly row group t of a layer
// (one batch, equal groups, one per thread), so that its tiles are whole
// rows [t * group * mb, (t + 1) * group * mb).
bool RowGroupPerThread(const Layer& l, const TileSizes& t, int threads) {
  const int64_t mtiles = (l.m + t.mb - 1) / t.mb;
  return l.batch == 1 && mtiles % t.group == 0 && mtiles / t.group == threads;
}

// The K chunks of a tile's reduction: the first overwrites C, the middle
// ones accumulate, the last accumulates and applies the kernel's post-ops.
enum ChunkRole { kFirstChunk, kMiddleChunk, kLastChunk, kChunkRoles };

// A layer's schedule and where its operands live in the nest.
struct LayerPlan {
  Layer l;
  Isa isa = Isa::kAvx512Core;
  TileSizes t;
  int64_t kc = 0;        // K chunk
  int64_t chunks = 1;    // ceil(K / kc)
  bool b_const = false;  // B depends only on constants: packed once
  bool b_transposed = false;
  bool blocked = false;  // B read from N-blocked packed panels
  int64_t padded_k = 0;  // K rows of a packed panel
  // The kernels of each K chunk role, by M / N tail.
  std::array<tile::KernelsByTail, kChunkRoles> kernels;
  int a = -1, b = -1, c = -1, out = -1, bias = -1;  // nest buffers
  int program = -1;  // post-op program, -1 when none runs in the loop
};

bool SameRowsPerThread(const LayerPlan& x, const LayerPlan& y, int threads) {
  return threads > 1 && RowGroupPerThread(x.l, x.t, threads) &&
         RowGroupPerThread(y.l, y.t, threads) && x.l.m == y.l.m &&
         x.t.mb * x.t.group == y.t.mb * y.t.group;
}

// Tiles, K chunks and the kernels of every chunk role and tail. The first
// chunk overwrites C, the others accumulate into it, and the last (the
// first, when there is one) applies the kernel's post-ops and covers the
// rest of K when kc does not divide it. Equal descriptors share an entry.
absl::Status PlanKernels(tile::Nest& nest, LayerPlan& p, int num_threads) {
  using microkernels::BrgemmDataType;
  const Layer& l = p.l;
  p.t = ChooseTiles(l.batch, l.m, l.n, l.k, num_threads);
  p.kc = l.kind == BrgemmDataType::kF32
             ? ChooseKChunk(l.k)
             : ChooseLowPrecisionKChunk(l.k,
                                        microkernels::VnniGranularity(l.kind));
  p.chunks = (l.k + p.kc - 1) / p.kc;
  const int64_t last_k = l.k - (p.chunks - 1) * p.kc;
  for (int role = kFirstChunk; role < kChunkRoles; ++role) {
    // Roles that never run (no middle chunk, or one chunk only) share the
    // first role's entries.
    if ((role == kMiddleChunk && p.chunks <= 2) ||
        (role == kLastChunk && p.chunks == 1)) {
      p.kernels[role] = p.kernels[kFirstChunk];
      continue;
    }
    const bool last = role == kLastChunk || p.chunks == 1;
    for (int mt = 0; mt < 2; ++mt) {
      for (int nt = 0; nt < 2; ++nt) {
        const int64_t mm = mt && l.m % p.t.mb ? l.m % p.t.mb : p.t.mb;
        const int64_t nn = nt && l.n % p.t.nb ? l.n % p.t.nb : p.t.nb;
        BrgemmDesc d = microkernels::MakeBrgemmDesc(p.isa, l.kind, mm, nn,
                                                    last ? last_k : p.kc);
        d.lda = l.k;
        d.ldb = p.blocked ? nn : l.n;
        // A C scratch is one tile a thread, in L1 for the post-ops.
        d.ldc = l.c_scratch ? p.t.nb : l.n;
        d.accumulate = role != kFirstChunk;
        d.bias = last && l.bias != nullptr;
        d.relu = last && l.relu;
        d.batch_kind = microkernels::BatchKind::kStrided;
        HGC_ASSIGN_OR_RETURN(auto code,
                             microkernels::BrgemmKernelCache::Global().Get(d));
        p.kernels[role].At(mt, nt) = nest.AddKernel(d, std::move(code));
      }
    }
  }
  nest.AddNote(absl::StrCat("%", l.matmul->result()->name(), ": tiles ", p.t.mb,
                            "x", p.t.nb, ", row groups of ", p.t.group,
                            " M tiles, K chunk ", p.kc, " (", p.chunks,
                            p.chunks == 1 ? " chunk)" : " chunks)"));
  return absl::OkStatus();
}

// Packs B into N-blocked panels (panel j: the packed K x nb block of its
// own descriptor, contiguous, so the kernel walks B with a short stride):
// once at SetConstants for constant B, else before every run.
absl::Status AddPackB(tile::Nest& nest, const Op& op, LayerPlan& p,
                      size_t index, const BufferRef& src) {
  const Layer& l = p.l;
  const int64_t es = l.in_bytes;
  const int64_t kp = p.padded_k;
  const int64_t slice = kp * l.n * es;  // bytes of one batch's panels
  const int64_t slices = l.b_batch.matrices;
  std::vector<BrgemmDesc> panels;  // one per N block; the last may be narrower
  for (int64_t n0 = 0; n0 < l.n; n0 += p.t.nb) {
    panels.push_back(microkernels::MakeBrgemmDesc(
        p.isa, l.kind, 1, std::min(p.t.nb, l.n - n0), l.k));
    HGC_RETURN_IF_ERROR(microkernels::ValidateBrgemmDesc(panels.back()));
    HGC_RETURN_IF_ERROR(microkernels::ValidateBLayout(panels.back()));
  }
  const std::string b_name = l.matmul->operand(1)->name();
  tile::Pack pack;
  pack.init = p.b_const;
  pack.text = absl::StrCat("pack %", b_name, " -> %", b_name, "_packed (",
                           panels.size(), " panels of K ", kp, " x ", p.t.nb,
                           ", ", microkernels::BLayoutName(panels[0].b_layout),
                           p.b_transposed ? ", from B transposed" : "", ")");
  const bool transposed = p.b_transposed;
  const int64_t k = l.k, n = l.n, nb = p.t.nb;
  // The (slice, panel) items split among the parts: a B packed per call is
  // packed by all the threads once it is large.
  auto work = [panels, slices, transposed, k, n, nb, kp, es, slice](
                  void* const* bufs, int part, int parts) {
    const uint8_t* in = static_cast<const uint8_t*>(bufs[0]);
    uint8_t* out = static_cast<uint8_t*>(bufs[1]);
    const int64_t per_slice = static_cast<int64_t>(panels.size());
    const int64_t items = slices * per_slice;
    for (int64_t item = items * part / parts; item < items * (part + 1) / parts;
         ++item) {
      const int64_t s = item / per_slice, j = item % per_slice;
      const int64_t n0 = j * nb;
      microkernels::BSource source{
          in + (s * k * n + (transposed ? n0 * k : n0)) * es,
          transposed ? k : n, transposed};
      // The panels' layouts were validated above and the buffers are the
      // step's own: PackB cannot fail here.
      microkernels::PackB(panels[j], source, out + s * slice + n0 * kp * es)
          .IgnoreError();
    }
  };
  pack.step = MoveStep(absl::StrCat(op.result()->name(), ".pack_b", index),
                       {src}, slice * slices, std::move(work));
  const std::string packed_name = absl::StrCat(b_name, "_packed");
  p.b =
      p.b_const
          ? nest.AddConstantSlot(slice * slices, packed_name, "packed once")
          : nest.AddArenaScratch(slice * slices, packed_name, "packed per run");
  pack.dst = p.b;
  nest.AddPack(std::move(pack));
  return absl::OkStatus();
}

// Transposes A (stored K x M, transpose_a) into M x K rows the kernels
// read: once at SetConstants for a constant A, else before every run, into
// a scratch of A's size; p.a is then that scratch.
absl::Status AddTransposeA(const LowerState& state, tile::Nest& nest,
                           const Op& op, LayerPlan& p, const BufferRef& src) {
  const Layer& l = p.l;
  const Value* a = l.matmul->operand(0);
  const int64_t matrices = l.a_batch.matrices;
  const bool once = state.const_only->IsConstOnly(op.operand(a->index()));
  HGC_ASSIGN_OR_RETURN(
      TransposePlan plan,
      PlanTranspose(Shape{matrices, l.k, l.m}, {0, 2, 1}, l.in_bytes));
  const int64_t bytes = matrices * l.m * l.k * l.in_bytes;
  const std::string name = absl::StrCat(a->name(), "_t");
  p.a = once ? nest.AddConstantSlot(bytes, name, "transposed once")
             : nest.AddArenaScratch(bytes, name, "transposed per run");
  tile::Pack pack;
  pack.init = once;
  pack.text = absl::StrCat("transpose %", a->name(), " -> %", a->name(), "_t (",
                           matrices, " x ", l.m, " x ", l.k, ")");
  pack.step.name = absl::StrCat(op.result()->name(), ".transpose_a");
  pack.step.buffers = {src};
  pack.dst = p.a;
  pack.step.host = [plan](void* const* bufs) {
    RunTranspose(plan, bufs[0], bufs[1]);
    return absl::OkStatus();
  };
  nest.AddPack(std::move(pack));
  return absl::OkStatus();
}

// The index of the matrix `map` says output batch `b` (of `batch`) reads.
tile::Expr MatrixIndex(const BatchMap& map, const tile::Expr& b,
                       int64_t batch) {
  tile::Expr index = 0;
  for (const BatchMap::Run& r : map.runs) {
    tile::Expr i = b / r.inner;
    // The outermost run's index needs no wrap-around.
    if (r.inner * r.extent != batch) i = i % r.extent;
    index = index + i * r.stride;
  }
  return index;
}

// The post-op program from C to the layer's output; a layer with a C
// scratch and no post-ops still needs one, to round its C into the output.
absl::Status AddPostOps(tile::Nest& nest, const Op& op, LayerPlan& p,
                        const std::function<int(const Value*)>& param_buffer,
                        const ConstantBinder& constants, size_t index) {
  const Layer& l = p.l;
  if ((l.post.empty() || l.kernel_post_ops()) && !l.c_scratch) {
    return absl::OkStatus();
  }
  std::vector<const Op*> ops;
  std::vector<const Value*> params;
  CollectInputs(l.post, params, ops);
  std::vector<int> param_buffers;
  for (const Value* x : params) {
    param_buffers.push_back(nest.FrameIndex(param_buffer(x)));
  }
  ops.insert(ops.end(), l.post.begin(), l.post.end());
  RowProgram prog;
  HGC_RETURN_IF_ERROR(BuildRowProgram(ops, params, param_buffers,
                                      l.matmul->result()->type().shape, l.out,
                                      nest.FrameIndex(p.out), prog, constants));
  RowInput c;
  c.value = l.matmul->result();
  // A C scratch tile is the RowMap's in_row; otherwise C is the output.
  c.from_in_row = l.c_scratch;
  if (!l.c_scratch) c.buffer = nest.FrameIndex(p.c);
  // A bf16 result sits in the kernel's f32 C.
  c.rounded_from_f32 = c.value->type().dtype != DType::kF32 &&
                       c.value->type().dtype != DType::kS32;
  HGC_ASSIGN_OR_RETURN(c.strides, BroadcastStrides(c.value->type().shape,
                                                   c.value->type().shape));
  prog.inputs.push_back(std::move(c));
  p.program = nest.AddProgram(std::move(prog), absl::StrCat("post", index));
  return absl::OkStatus();
}

// One layer's tile loop: row group by row group, inside a group N panel by
// N panel, then M tile by M tile; per tile the K chunks, then the post-ops
// on the C tile while it is in L1.
void BuildTileLoop(tile::NestBuilder& nb, const LayerPlan& p) {
  using tile::Expr;
  const Layer& l = p.l;
  const TileSizes& t = p.t;
  const int64_t mtiles = (l.m + t.mb - 1) / t.mb;
  const int64_t ntiles = (l.n + t.nb - 1) / t.nb;
  const int64_t es = l.in_bytes;
  const int64_t c_es = 4;
  nb.For("tile", 0, l.batch * mtiles * ntiles, true, [&](Expr index) {
    const bool batched = l.batch > 1;
    Expr bi = batched ? nb.Let("batch", index / (mtiles * ntiles)) : Expr(0);
    Expr r = batched ? nb.Let("in_batch", index % (mtiles * ntiles)) : index;
    Expr g = nb.Let("group", r / (t.group * ntiles));
    Expr in_group = nb.Let("in_group", r % (t.group * ntiles));
    Expr g_rows = nb.Let("group_rows", Min(mtiles - g * t.group, t.group));
    Expr m0 = nb.Let("m0", (g * t.group + in_group % g_rows) * t.mb);
    Expr n0 = nb.Let("n0", in_group / g_rows * t.nb);
    Expr m_tail =
        l.m % t.mb == 0 ? Expr(0) : nb.Let("m_tail", Lt(l.m - m0, t.mb));
    Expr n_tail =
        l.n % t.nb == 0 ? Expr(0) : nb.Let("n_tail", Lt(l.n - n0, t.nb));
    // Broadcast batch dims read the same matrix (stride 0).
    Expr a_off = MatrixIndex(l.a_batch, bi, l.batch) * (l.m * l.k) + m0 * l.k;
    // Blocked B: panel n0 / nb starts at n0 * Kp and its rows are as wide
    // as the panel; plain B rows are N wide.
    Expr b_off = MatrixIndex(l.b_batch, bi, l.batch) *
                     ((p.blocked ? p.padded_k : l.k) * l.n) +
                 (p.blocked ? n0 * p.padded_k : n0);
    Expr b_row = p.blocked ? Select(n_tail, l.n - n0, t.nb) : Expr(l.n);
    Expr c_off = nb.Let("c_off", bi * (l.m * l.n) + m0 * l.n + n0);
    auto call = [&](ChunkRole role, Expr k0) {
      tile::Brgemm c;
      c.kernel = p.kernels[role].Pick(m_tail, n_tail);
      c.a = {p.a, a_off + k0, es};
      c.b = {p.b, b_off + k0 * b_row, es};
      c.c = {p.c, l.c_scratch ? Expr(0) : c_off, c_es};
      const bool last = role == kLastChunk || p.chunks == 1;
      if (last && p.bias >= 0) c.bias = tile::View{p.bias, n0, 4};
      nb.Append(tile::Stmt{std::move(c)});
    };
    call(kFirstChunk, 0);
    if (p.chunks == 3) {
      call(kMiddleChunk, p.kc);
    } else if (p.chunks > 3) {
      nb.For("chunk", 1, p.chunks - 1, false,
             [&](Expr chunk) { call(kMiddleChunk, chunk * p.kc); });
    }
    if (p.chunks > 1) call(kLastChunk, (p.chunks - 1) * p.kc);
    if (p.program < 0) return;
    Expr mcount = Select(m_tail, l.m - m0, t.mb);
    Expr ncount = Select(n_tail, l.n - n0, t.nb);
    nb.For("row", 0, mcount, false, [&](Expr row) {
      tile::RowMap map;
      map.program = p.program;
      map.row = bi * l.m + m0 + row;
      map.col_begin = n0;
      map.col_end = n0 + ncount;
      // A C tile's row is at most 64 columns: four vectors.
      map.unroll = true;
      if (l.c_scratch) map.in_row = tile::View{p.c, row * t.nb, c_es};
      nb.Append(tile::Stmt{std::move(map)});
    });
  });
}

}  // namespace

absl::StatusOr<tile::Nest> LowerMatmulGroup(LowerState& state, const Op& op,
                                            int num_threads) {
  using microkernels::BrgemmDataType;
  const Graph* body = FusionBody(op);
  if (body == nullptr) return absl::UnimplementedError("no body");
  HGC_ASSIGN_OR_RETURN(std::vector<Layer> layers, SplitLayers(*body));
  if (body->results()[0]->type() != op.result()->type()) {
    return absl::UnimplementedError("body result type differs");
  }
  tile::Nest nest(state.StepName(layers.size() > 1 ? "mlp" : "matmul"));
  auto param_ref = [&](const Value* p) {
    return state.refs.at(op.operand(p->index()));
  };
  auto param_buffer = [&](const Value* p) {
    return nest.AddFrameBuffer(param_ref(p), p->name(), p->type().ToString());
  };
  const ConstantBinder constants = NestConstantBinder(nest);
  std::vector<LayerPlan> plans(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    LayerPlan& p = plans[i];
    p.l = layers[i];
    MatchKernelPostOps(p.l);
    const Layer& l = p.l;
    HGC_ASSIGN_OR_RETURN(p.isa, microkernels::SelectBrgemmIsa(l.kind));
    const Value* bp = l.matmul->operand(1);
    const Attribute* tb = l.matmul->FindAttr("transpose_b");
    p.b_transposed = tb != nullptr && tb->is_bool() && tb->as_bool();
    p.b_const = state.const_only->IsConstOnly(op.operand(bp->index()));
    p.blocked = p.b_const || p.b_transposed || l.kind != BrgemmDataType::kF32;
    const int64_t g = microkernels::VnniGranularity(l.kind);
    p.padded_k = (l.k + g - 1) / g * g;
    HGC_RETURN_IF_ERROR(PlanKernels(nest, p, num_threads));
  }
  // Buffers: A, each layer's output (the group's result for the last, arena
  // otherwise) and, where the kernel cannot write its C there, a C scratch.
  for (size_t i = 0; i < plans.size(); ++i) {
    LayerPlan& p = plans[i];
    const Layer& l = p.l;
    const Value* a = l.matmul->operand(0);
    if (l.a_transposed) {
      HGC_RETURN_IF_ERROR(AddTransposeA(state, nest, op, p, param_ref(a)));
    } else {
      p.a = i == 0 ? param_buffer(a) : plans[i - 1].out;
    }
    const int64_t elements = l.batch * l.m * l.n;
    p.out = i + 1 == plans.size()
                ? nest.AddFrameBuffer(state.refs.at(op.result()),
                                      op.result()->name(),
                                      op.result()->type().ToString())
                : nest.AddArenaScratch(
                      elements * DTypeSize(l.out->type().dtype),
                      absl::StrCat("layer", i), l.out->type().ToString());
    p.c = l.c_scratch
              ? nest.AddPerThread(
                    p.t.mb * p.t.nb * 4, absl::StrCat("c", i),
                    absl::StrCat("f32/s32 C tile, ", p.t.mb, " x ", p.t.nb))
              : p.out;
    if (l.bias != nullptr) p.bias = param_buffer(l.bias);
    HGC_RETURN_IF_ERROR(AddPostOps(nest, op, p, param_buffer, constants, i));
    const Value* bp = l.matmul->operand(1);
    if (p.blocked) {
      HGC_RETURN_IF_ERROR(AddPackB(nest, op, p, i, param_ref(bp)));
    } else {
      p.b = param_buffer(bp);
    }
  }
  tile::NestBuilder nb(nest);
  for (size_t i = 0; i < plans.size(); ++i) {
    // Between layers that give every thread the same rows, a thread reads
    // only rows it wrote itself: no barrier.
    if (i > 0 && !SameRowsPerThread(plans[i - 1], plans[i], num_threads)) {
      nb.Append(tile::Stmt{tile::Barrier{}});
    }
    BuildTileLoop(nb, plans[i]);
  }
  return nest;
}

}  // namespace codegen
}  // namespace hgc
