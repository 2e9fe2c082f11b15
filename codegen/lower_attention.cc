#include "codegen/lower_attention.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/tile_emitter.h"
#include "codegen/tile_ir.h"
#include "microkernels/brgemm_dispatch.h"
#include "microkernels/kernel_cache.h"
#include "passes/attention_match.h"
#include "support/cache_info.h"
#include "support/status_macros.h"

namespace hgc {
namespace codegen {

AttentionBlocks ChooseAttentionBlocks(int64_t batch_heads, int64_t seq_q,
                                      int64_t seq_kv, int64_t d, int64_t dv,
                                      int num_threads, int64_t l2_bytes) {
  AttentionBlocks b;
  b.mb = std::min<int64_t>(seq_q, 64);
  // A Kᵀ block (d x nb), a V block (nb x dv) and the S tile (mb x nb) in
  // half of L2: long key blocks leave fewer row passes and kernel calls per
  // score, which costs more than the S tile leaving L1.
  int64_t nb = (l2_bytes / 2) / (4 * (d + dv + b.mb));
  nb = std::clamp<int64_t>(nb / 16 * 16, 64, 512);
  b.nb = std::min(nb, seq_kv);
  const int64_t q_blocks = (seq_q + b.mb - 1) / b.mb;
  if (batch_heads < 2 * num_threads) {
    b.q_chunks =
        std::min(q_blocks, (2 * num_threads + batch_heads - 1) / batch_heads);
  }
  return b;
}

namespace {

using microkernels::BrgemmDesc;
using tile::Expr;
using tile::View;

// The nest's buffers, kernels and programs for one attention group.
struct Plan {
  AttentionMatch m;
  AttentionBlocks blocks;
  bool k_packed = false;  // Kᵀ packed per (batch, head) into `kt`
  bool v_packed = false;  // V rows copied per (batch, head) into `vp`
  // Element types of Q, K, V (f32, bf16 or f16; a bf16 / f16 operand is
  // widened to f32 as it is copied into scratch: exact, and its products
  // are exact in f32, as the matmuls' f32 accumulation asks).
  DType q_type = DType::kF32, k_type = DType::kF32, v_type = DType::kF32;
  // Each softmax row prefetches its share of the next head (one chunk of
  // query blocks and one key block a head: short items that would start
  // on data not yet in cache).
  bool prefetch = false;
  int64_t kt_ld = 0, s_ld = 0, v_ld = 0;  // row strides of Kᵀ, S and V
  int q = -1, k = -1, v = -1, out = -1;
  int kt = -1, kc = -1, vp = -1, s = -1, o = -1, stats = -1, qs = -1;
  int qk_kernel[2][2] = {};                          // [M tail][N tail]
  int pv_kernel[2][2] = {};                          // [M tail][K tail]
  int q_program = -1, score_program = -1, prob_program = -1;
  DType softmax_type = DType::kF32;
  // Rows divided by their sum before P·V (and rounded: a bf16 / f16
  // softmax, or bf16 / f16 P), as the reference rounds them; P·V's result
  // then needs no division.
  bool normalize = false;
  // The roundings of P·V's result on its way out: its own type when not
  // f32, then the casts after it, in order.
  std::vector<DType> out_casts;
};

bool IsF32(const Value* v) { return v->type().dtype == DType::kF32; }

// A row stride (in floats) for scratch the kernels stream through: rows
// 1 KiB apart or a multiple of that fall into a few L1 sets and evict each
// other (a 64-key Kᵀ panel of 512-key rows does not stay in L1), so such
// strides get one more cache line.
int64_t SpreadStride(int64_t floats) {
  const int64_t ld = (floats + 15) / 16 * 16;
  return ld % 256 == 0 ? ld + 16 : ld;
}

// Float Q, K, V, scores, softmax and result (f32, bf16 or f16).
absl::Status CheckSupported(const AttentionMatch& m) {
  const Value* values[] = {m.q.param,        m.k.param,      m.v.param,
                           m.qk->result(),   m.pv->operand(0), m.pv->result(),
                           m.softmax->result(), m.result};
  for (const Value* v : values) {
    if (!IsFloat(v->type().dtype)) {
      return absl::UnimplementedError("an integer attention operand");
    }
  }
  if (m.q.strides[3] != 1 || m.v.strides[3] != 1 || m.out_strides[3] != 1) {
    return absl::UnimplementedError("Q, V or O rows are not contiguous");
  }
  return absl::OkStatus();
}

// An elementwise program over `shape` whose input `tile_value` comes from
// the RowMap's in_row and whose other inputs are group operands; it writes
// f32 (a bf16 / f16 result rounded, in an f32 tile). The in_row is an f32
// tile (`from_tile`, a bf16 / f16 value held rounded in it) or a row of
// the operand itself.
absl::StatusOr<int> AddTileProgram(LowerState& state, tile::Nest& nest,
                                   const Op& op,
                                   const std::vector<const Op*>& chain,
                                   const Value* tile_value, bool from_tile,
                                   const std::string& name) {
  const Shape& shape = chain.back()->result()->type().shape;
  for (const Op* x : chain) {
    if (x->result()->type().shape != shape) {
      return absl::UnimplementedError("a broadcasting op in the chain");
    }
  }
  std::vector<const Value*> params;
  std::vector<const Op*> ops;
  CollectInputs(chain, params, ops);
  std::vector<int> buffers;
  for (const Value* p : params) {
    const Value* v = op.operand(p->index());
    buffers.push_back(nest.FrameIndex(nest.AddFrameBuffer(
        state.refs.at(v), v->name(), v->type().ToString())));
  }
  ops.insert(ops.end(), chain.begin(), chain.end());
  RowProgram program;
  HGC_RETURN_IF_ERROR(BuildRowProgram(ops, params, buffers, shape,
                                      chain.back()->result(), -1, program));
  if (tile_value->type().shape != shape) {
    return absl::UnimplementedError("the tile value is broadcast");
  }
  // Tiles hold f32: a bf16 / f16 value is kept rounded in an f32.
  program.result_in_f32 = true;
  RowInput in;
  in.value = tile_value;
  in.from_in_row = true;
  in.rounded_from_f32 = from_tile && tile_value->type().dtype != DType::kF32;
  HGC_ASSIGN_OR_RETURN(in.strides, BroadcastStrides(shape, shape));
  program.inputs.push_back(std::move(in));
  return nest.AddProgram(std::move(program), name);
}

absl::Status AddKernels(tile::Nest& nest, Plan& p) {
  const AttentionMatch& m = p.m;
  HGC_ASSIGN_OR_RETURN(Isa isa, microkernels::SelectBrgemmIsa(
                                    microkernels::BrgemmDataType::kF32));
  const int64_t mb = p.blocks.mb, nb = p.blocks.nb;
  for (int mt = 0; mt < 2; ++mt) {
    const int64_t rows = mt && m.seq_q % mb ? m.seq_q % mb : mb;
    for (int nt = 0; nt < 2; ++nt) {
      const int64_t keys = nt && m.seq_kv % nb ? m.seq_kv % nb : nb;
      using microkernels::BrgemmDataType;
      BrgemmDesc qk = microkernels::MakeBrgemmDesc(isa, BrgemmDataType::kF32,
                                                   rows, keys, m.head_dim);
      // A dim of extent 1 has stride 0 in the match: any row length will do.
      qk.lda = p.qs >= 0 ? m.head_dim : std::max(m.q.strides[2], m.head_dim);
      qk.ldb = p.kt >= 0 ? p.kt_ld : std::max(m.k.strides[3], keys);
      qk.ldc = p.s_ld;
      qk.batch_kind = microkernels::BatchKind::kStrided;
      HGC_ASSIGN_OR_RETURN(auto qk_code,
                           microkernels::BrgemmKernelCache::Global().Get(qk));
      p.qk_kernel[mt][nt] = nest.AddKernel(qk, std::move(qk_code));
      BrgemmDesc pv = microkernels::MakeBrgemmDesc(isa, BrgemmDataType::kF32,
                                                   rows, m.head_dim_v, keys);
      pv.lda = p.s_ld;
      pv.ldb = p.v_ld;
      pv.ldc = m.head_dim_v;
      pv.accumulate = m.seq_kv > nb;  // several key blocks accumulate
      pv.batch_kind = microkernels::BatchKind::kStrided;
      HGC_ASSIGN_OR_RETURN(auto pv_code,
                           microkernels::BrgemmKernelCache::Global().Get(pv));
      p.pv_kernel[mt][nt] = nest.AddKernel(pv, std::move(pv_code));
    }
  }
  return absl::OkStatus();
}

// Per-thread scratch: S and O tiles, row statistics (max, then sum), Kᵀ of
// one head when K is keys-major or not f32 (and K widened first when
// both), V rows when copied, and Q rows after the Q ops or widened.
void AddScratch(LowerState& state, tile::Nest& nest, Plan& p) {
  const AttentionMatch& m = p.m;
  const int64_t mb = p.blocks.mb, nb = p.blocks.nb;
  auto per_thread = [&](int64_t floats, const char* name, std::string note) {
    const int64_t bytes = (floats * 4 + 63) / 64 * 64;
    return nest.AddPerThread(state.AllocArena(bytes * state.num_threads), bytes,
                             name, std::move(note));
  };
  p.s = per_thread(mb * p.s_ld, "s",
                   absl::StrCat("f32[", mb, ", ", nb, "] score tile, rows ",
                                p.s_ld, " apart"));
  p.o = per_thread(
      mb * m.head_dim_v, "acc",
      absl::StrCat("f32[", mb, ", ", m.head_dim_v, "] output accumulator"));
  p.stats = nest.AddLocal(
      12 * mb, "stats",
      absl::StrCat("f32[3, ", mb, "] running max, sum, block max"));
  if (p.k_packed && p.k_type != DType::kF32) {
    p.kc = per_thread(m.seq_kv * m.head_dim, "kc",
                      absl::StrCat("f32[", m.seq_kv, ", ", m.head_dim,
                                   "] K of one head, widened"));
  }
  if (p.k_packed || p.k_type != DType::kF32) {
    p.kt = per_thread(m.head_dim * p.kt_ld, "kt",
                      absl::StrCat("f32[", m.head_dim, ", ", m.seq_kv,
                                   "] K transposed, one head, rows ", p.kt_ld,
                                   " apart"));
  }
  if (p.v_packed) {
    p.vp = per_thread(m.seq_kv * p.v_ld, "vp",
                      absl::StrCat("f32[", m.seq_kv, ", ", m.head_dim_v,
                                   "] V rows of one head, ", p.v_ld,
                                   " apart"));
  }
  if (!m.q_ops.empty() || p.q_type != DType::kF32) {
    p.qs = per_thread(
        mb * m.head_dim, "qs",
        absl::StrCat("f32[", mb, ", ", m.head_dim, "] Q rows ",
                     m.q_ops.empty() ? "widened" : "after the Q ops"));
  }
}

Expr Offset(const StridedOperand& x, const Expr& b, const Expr& h) {
  return x.offset + b * x.strides[0] + h * x.strides[1];
}

// Where one (batch, head)'s Q, K, V and O start.
struct HeadBases {
  Expr q, k, v, o;
};

// Prefetches the rows of the next (batch, head)'s Q, K and V that go with
// query row `i` of this one (its share of K and V rows: seq_kv / seq_q,
// rounded up; the last query rows' shares reach past the head, which is
// harmless) and its output row i, so that a thread's next head arrives
// from memory while it computes this one.
void PrefetchNextHead(tile::NestBuilder& nb, const Plan& p,
                      const HeadBases& next, Expr i) {
  const AttentionMatch& m = p.m;
  const int64_t q_bytes = DTypeSize(p.q_type), k_bytes = DTypeSize(p.k_type),
                v_bytes = DTypeSize(p.v_type);
  nb.Append(tile::Stmt{
      tile::Prefetch{View{p.q, next.q + i * m.q.strides[2], q_bytes}, 1,
                     m.q.strides[2], q_bytes * m.head_dim}});
  const int64_t per_row = (m.seq_kv + m.seq_q - 1) / m.seq_q;
  Expr j = i * per_row;
  const int64_t rows = per_row;
  nb.Append(tile::Stmt{
      tile::Prefetch{View{p.k, next.k + j * m.k.strides[2], k_bytes}, rows,
                     m.k.strides[2], k_bytes * m.head_dim}});
  nb.Append(tile::Stmt{
      tile::Prefetch{View{p.v, next.v + j * m.v.strides[2], v_bytes}, rows,
                     m.v.strides[2], v_bytes * m.head_dim_v}});
  const int64_t out_bytes = DTypeSize(m.result->type().dtype);
  nb.Append(tile::Stmt{tile::Prefetch{
      View{p.out, next.o + i * m.out_strides[2], out_bytes}, 1,
      m.out_strides[2], out_bytes * m.head_dim_v, true}});
}

// One block of query rows: its K/V stream and the write-out.
void BuildQueryBlock(tile::NestBuilder& nb, const Plan& p, Expr qb,
                     const HeadBases& head,
                     const std::optional<HeadBases>& next, Expr row_base) {
  const AttentionMatch& m = p.m;
  const Expr &q_base = head.q, &k_base = head.k, &v_base = head.v,
             &o_base = head.o;
  const int64_t mb = p.blocks.mb, kb = p.blocks.nb, dv = m.head_dim_v;
  const float inf = std::numeric_limits<float>::infinity();
  Expr i0 = nb.Let("i0", qb * mb);
  Expr m_tail =
      m.seq_q % mb == 0 ? Expr(0) : nb.Let("m_tail", Lt(m.seq_q - i0, mb));
  Expr rows = nb.Let("rows", Select(m_tail, m.seq_q - i0, mb));
  // With one key block the softmax is a plain one (the reference's own
  // steps) and P·V overwrites O; with several, the online softmax rescales
  // an O that starts at 0.
  const bool one_block = m.seq_kv <= kb;
  if (!one_block) {
    nb.Append(tile::Stmt{tile::Fill{View{p.stats, 0, 4}, mb, -inf}});
    nb.Append(tile::Stmt{tile::Fill{View{p.o, 0, 4}, mb * dv, 0.0f}});
  }
  nb.Append(tile::Stmt{tile::Fill{View{p.stats, mb, 4}, mb, 0.0f}});
  View q_rows{p.q, q_base + i0 * m.q.strides[2], 4};
  if (p.qs >= 0 && p.q_program < 0) {
    // A bf16 / f16 Q without ops: its rows widened.
    tile::Copy widen{View{p.q, q_base + i0 * m.q.strides[2], DTypeSize(p.q_type)},
                     m.q.strides[2], 1, View{p.qs, 0, 4}, m.head_dim, 1, rows,
                     m.head_dim};
    widen.src_type = p.q_type;
    nb.Append(tile::Stmt{std::move(widen)});
    q_rows = View{p.qs, 0, 4};
  } else if (p.qs >= 0) {
    nb.For("r", 0, rows, false, [&](Expr r) {
      nb.Append(tile::Stmt{tile::RowMap{
          p.q_program, 0, 0, m.head_dim, View{p.qs, r * m.head_dim, 4},
          View{p.q, q_base + (i0 + r) * m.q.strides[2],
               DTypeSize(p.q_type)}}});
    });
    q_rows = View{p.qs, 0, 4};
  }
  nb.For("kv", 0, (m.seq_kv + kb - 1) / kb, false, [&](Expr kv) {
    Expr j0 = nb.Let("j0", kv * kb);
    Expr n_tail =
        m.seq_kv % kb == 0 ? Expr(0) : nb.Let("n_tail", Lt(m.seq_kv - j0, kb));
    Expr keys = nb.Let("keys", Select(n_tail, m.seq_kv - j0, kb));
    auto pick = [&](const int(&k)[2][2]) {
      return Select(m_tail, Select(n_tail, k[1][1], k[1][0]),
                    Select(n_tail, k[0][1], k[0][0]));
    };
    tile::Brgemm qk;
    qk.kernel = pick(p.qk_kernel);
    qk.a = q_rows;
    qk.b = p.kt >= 0 ? View{p.kt, j0, 4}
                     : View{p.k, k_base + j0 * m.k.strides[2], 4};
    qk.c = View{p.s, 0, 4};
    nb.Append(tile::Stmt{std::move(qk)});
    nb.For("r", 0, rows, false, [&](Expr r) {
      View s_row{p.s, r * p.s_ld, 4};
      Expr row = row_base + i0 + r;
      const View max{p.stats, r, 4}, sum{p.stats, mb + r, 4};
      // The score ops' pass also takes the row's (block's) max.
      std::optional<View> block_max;
      const DType s_type = m.qk->result()->type().dtype;
      if (p.score_program < 0 && s_type != DType::kF32) {
        // The scores' own rounding, which no score op does.
        tile::RowScale round{s_row, s_row, keys};
        round.round_to = {s_type};
        nb.Append(tile::Stmt{std::move(round)});
      }
      if (p.score_program >= 0) {
        block_max = one_block ? max : View{p.stats, 2 * mb + r, 4};
        nb.Append(tile::Stmt{tile::RowMap{p.score_program, row, j0, j0 + keys,
                                          s_row, s_row, block_max}});
      }
      if (one_block) {
        if (!block_max) {
          nb.Append(tile::Stmt{tile::RowReduce{
              tile::RowReduce::Op::kMax, s_row, keys, max, false, {}, false}});
        }
        nb.Append(tile::Stmt{tile::RowExp{s_row, s_row, keys, max, sum}});
        if (p.normalize) {
          tile::RowScale normalize{s_row, s_row, keys, sum};
          normalize.divide = true;
          if (p.softmax_type != DType::kF32) {
            normalize.round_to = {p.softmax_type};
          }
          nb.Append(tile::Stmt{std::move(normalize)});
        }
      } else {
        nb.Append(tile::Stmt{tile::OnlineSoftmax{
            s_row, keys, max, sum, View{p.o, r * dv, 4}, dv, block_max}});
      }
      if (p.prob_program >= 0) {
        nb.Append(tile::Stmt{
            tile::RowMap{p.prob_program, row, j0, j0 + keys, s_row, s_row}});
      }
      if (next) PrefetchNextHead(nb, p, *next, i0 + r);
    });
    tile::Brgemm pv;
    pv.kernel = pick(p.pv_kernel);
    pv.a = View{p.s, 0, 4};
    pv.b = p.vp >= 0 ? View{p.vp, j0 * p.v_ld, 4}
                      : View{p.v, v_base + j0 * m.v.strides[2], 4};
    pv.c = View{p.o, 0, 4};
    nb.Append(tile::Stmt{std::move(pv)});
  });
  // O / sum (normalized rows need none), then P·V's rounding and the casts
  // after it, stored in the result's type and final layout.
  const DType out_type = m.result->type().dtype;
  nb.For("r", 0, rows, false, [&](Expr r) {
    tile::RowScale out{
        View{p.o, r * dv, 4},
        View{p.out, o_base + (i0 + r) * m.out_strides[2], DTypeSize(out_type)},
        dv};
    if (!p.normalize) {
      out.factor = View{p.stats, mb + r, 4};
      out.reciprocal = true;
    }
    out.round_to = p.out_casts;
    out.dst_type = out_type;
    nb.Append(tile::Stmt{std::move(out)});
  });
}

void BuildLoop(tile::NestBuilder& nb, const Plan& p) {
  const AttentionMatch& m = p.m;
  const int64_t chunks = p.blocks.q_chunks;
  const int64_t q_blocks = (m.seq_q + p.blocks.mb - 1) / p.blocks.mb;
  const int64_t per_chunk = (q_blocks + chunks - 1) / chunks;
  nb.For("item", 0, m.batch * m.heads * chunks, true, [&](Expr item) {
    Expr bh = nb.Let("bh", item / chunks);
    Expr chunk = nb.Let("chunk", item % chunks);
    Expr b = nb.Let("b", bh / m.heads);
    Expr h = nb.Let("h", bh % m.heads);
    Expr g = nb.Let("g", h / m.group);
    HeadBases head;
    head.q = nb.Let("q_base", Offset(m.q, b, h));
    head.k = nb.Let("k_base", Offset(m.k, b, g));
    head.v = nb.Let("v_base", Offset(m.v, b, g));
    head.o = nb.Let(
        "o_base", m.out_offset + b * m.out_strides[0] + h * m.out_strides[1]);
    const Expr &k_base = head.k, &v_base = head.v;
    std::optional<HeadBases> next;
    if (p.prefetch) {
      // The next item is the next (batch, head) (one chunk a head); past
      // the last one the hints point past the buffers, which is harmless.
      Expr nb_ = nb.Let("next_b", (item + 1) / m.heads);
      Expr nh = nb.Let("next_h", (item + 1) % m.heads);
      Expr ng = nb.Let("next_g", nh / m.group);
      next = HeadBases{nb.Let("next_q", Offset(m.q, nb_, nh)),
                       nb.Let("next_k", Offset(m.k, nb_, ng)),
                       nb.Let("next_v", Offset(m.v, nb_, ng)),
                       nb.Let("next_o", m.out_offset + nb_ * m.out_strides[0] +
                                            nh * m.out_strides[1])};
    }
    const int64_t k_bytes = DTypeSize(p.k_type);
    if (p.k_packed) {
      // Kᵀ[d][j] = K(b, g, j, d), by the thread that uses it; key by key,
      // so that reads run along K's rows. A bf16 / f16 K is widened into
      // contiguous rows first.
      View k_rows{p.k, k_base, k_bytes};
      int64_t k_row = m.k.strides[2], k_col = m.k.strides[3];
      if (p.kc >= 0) {
        tile::Copy widen{k_rows, m.k.strides[2], 1, View{p.kc, 0, 4},
                         m.head_dim, 1, m.seq_kv, m.head_dim};
        widen.src_type = p.k_type;
        nb.Append(tile::Stmt{std::move(widen)});
        k_rows = View{p.kc, 0, 4};
        k_row = m.head_dim;
        k_col = 1;
      }
      nb.Append(tile::Stmt{tile::Copy{k_rows, k_row, k_col, View{p.kt, 0, 4},
                                      1, p.kt_ld, m.seq_kv, m.head_dim}});
    } else if (p.kt >= 0) {
      // K stored transposed, as bf16 / f16: its rows widened.
      tile::Copy widen{View{p.k, k_base, k_bytes}, m.k.strides[3], 1,
                       View{p.kt, 0, 4}, p.kt_ld, 1, m.head_dim, m.seq_kv};
      widen.src_type = p.k_type;
      nb.Append(tile::Stmt{std::move(widen)});
    }
    if (p.vp >= 0) {
      tile::Copy copy{View{p.v, v_base, DTypeSize(p.v_type)}, m.v.strides[2], 1,
                      View{p.vp, 0, 4}, p.v_ld, 1, m.seq_kv, m.head_dim_v};
      copy.src_type = p.v_type;
      nb.Append(tile::Stmt{std::move(copy)});
    }
    nb.For("qb", chunk * per_chunk,
           Min(chunk * per_chunk + per_chunk, q_blocks), false, [&](Expr qb) {
             BuildQueryBlock(nb, p, qb, head, next, bh * m.seq_q);
           });
  });
}

}  // namespace

absl::Status LowerAttention(LowerState& state, const Op& op) {
  const Graph* body = FusionBody(op);
  if (body == nullptr) return absl::UnimplementedError("no body");
  Plan p;
  HGC_ASSIGN_OR_RETURN(p.m, MatchAttention(*body));
  const AttentionMatch& m = p.m;
  HGC_RETURN_IF_ERROR(CheckSupported(m));
  if (m.batch * m.heads * m.seq_q * m.seq_kv * m.head_dim * m.head_dim_v == 0) {
    return absl::UnimplementedError("empty attention");
  }
  if (body->results()[0]->type() != op.result()->type()) {
    return absl::UnimplementedError("body result type differs");
  }
  p.blocks = ChooseAttentionBlocks(m.batch * m.heads, m.seq_q, m.seq_kv,
                                   m.head_dim, m.head_dim_v, state.num_threads,
                                   HostCacheInfo().l2_bytes);
  p.q_type = m.q.param->type().dtype;
  p.k_type = m.k.param->type().dtype;
  p.v_type = m.v.param->type().dtype;
  p.softmax_type = m.softmax->result()->type().dtype;
  p.normalize = p.softmax_type != DType::kF32 ||
                m.pv->operand(0)->type().dtype != DType::kF32;
  if (p.normalize && m.seq_kv > p.blocks.nb) {
    // The rounding needs each row's whole sum before P·V.
    return absl::UnimplementedError(
        "a bf16 / f16 softmax or P over more than one key block");
  }
  if (const DType t = m.pv->result()->type().dtype; t != DType::kF32) {
    p.out_casts.push_back(t);
  }
  for (const Op* cast : m.out_ops) {
    p.out_casts.push_back(cast->result()->type().dtype);
  }
  // K keys-major (d contiguous) is packed to Kᵀ; K stored transposed (keys
  // contiguous) is the kernel's B as it is.
  p.k_packed = m.k.strides[2] != 1;
  p.kt_ld = SpreadStride(m.seq_kv);
  p.s_ld = SpreadStride(p.blocks.nb);
  // V rows a multiple of 1 KiB apart ([B, S, H, D] with H·D a multiple of
  // 256, say) thrash L1 in P·V; they are copied per head, like Kᵀ.
  const int64_t v_stride = std::max(m.v.strides[2], m.head_dim_v);
  p.v_packed = v_stride % 256 == 0 || p.v_type != DType::kF32;
  p.v_ld = p.v_packed ? SpreadStride(m.head_dim_v) : v_stride;
  p.prefetch = p.blocks.q_chunks == 1 && m.seq_kv <= p.blocks.nb &&
               p.k_packed && m.batch * m.heads > 1;
  tile::Nest nest(state.StepName("attention"));
  auto operand = [&](const Value* param) {
    const Value* v = op.operand(param->index());
    return nest.AddFrameBuffer(state.refs.at(v), v->name(),
                               v->type().ToString());
  };
  p.q = operand(m.q.param);
  p.k = operand(m.k.param);
  p.v = operand(m.v.param);
  p.out = nest.AddFrameBuffer(state.refs.at(op.result()), op.result()->name(),
                              op.result()->type().ToString());
  AddScratch(state, nest, p);
  if (!m.q_ops.empty()) {
    // The scale on Q runs on each Q row (row 0 of its program): its other
    // operands must be scalars, the same for every row.
    const Value* q_value = nullptr;
    for (const Value* x : m.q_ops.front()->operands()) {
      if (x->type().NumElements() != 1) q_value = x;
    }
    for (const Op* q_op : m.q_ops) {
      for (const Value* x : q_op->operands()) {
        if (x != q_value && x->type().NumElements() != 1 &&
            (x->is_param() ||
             x->defining_op()->kind_id() == OpKind::kConstant)) {
          return absl::UnimplementedError("a tensor operand in the Q ops");
        }
      }
    }
    if (q_value == nullptr) return absl::UnimplementedError("a scalar Q");
    HGC_ASSIGN_OR_RETURN(p.q_program,
                         AddTileProgram(state, nest, op, m.q_ops, q_value,
                                        /*from_tile=*/false, "q_ops"));
  }
  if (!m.score_ops.empty()) {
    HGC_ASSIGN_OR_RETURN(p.score_program,
                         AddTileProgram(state, nest, op, m.score_ops,
                                        m.qk->result(), /*from_tile=*/true,
                                        "score_ops"));
  }
  // Casts to f32 of a value the tile already holds in f32 change nothing.
  const bool prob_ops_widen_only = std::all_of(
      m.prob_ops.begin(), m.prob_ops.end(), [](const Op* x) {
        return x->kind_id() == OpKind::kCast &&
               x->result()->type().dtype == DType::kF32;
      });
  if (!prob_ops_widen_only) {
    HGC_ASSIGN_OR_RETURN(p.prob_program,
                         AddTileProgram(state, nest, op, m.prob_ops,
                                        m.softmax->result(), /*from_tile=*/true,
                                        "prob_ops"));
  }
  if (absl::Status s = AddKernels(nest, p); !s.ok()) {
    // A shape the kernels do not take runs unfused, correctly.
    return absl::UnimplementedError(
        absl::StrCat("attention kernels: ", s.message()));
  }
  nest.AddNote(absl::StrCat(
      "blocks: ", p.blocks.mb, " query rows x ", p.blocks.nb, " keys (L2 ",
      HostCacheInfo().l2_bytes / 1024, " KiB), ", p.blocks.q_chunks,
      " chunk(s) of query blocks per (batch, head); heads per kv head ",
      m.group));
  tile::NestBuilder nb(nest);
  BuildLoop(nb, p);
  return EmitNest(state, nest);
}

}  // namespace codegen
}  // namespace hgc
