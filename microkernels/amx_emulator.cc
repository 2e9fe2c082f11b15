#include "microkernels/amx_emulator.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "support/float16.h"

namespace hgc {
namespace microkernels {
namespace {

template <typename T>
T Get(const uint8_t* row, int index) {
  T v;
  std::memcpy(&v, row + index * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void Put(uint8_t* row, int index, T v) {
  std::memcpy(row + index * sizeof(T), &v, sizeof(T));
}

// A denormal f32 as a zero of its sign.
float FlushDenormal(float x) {
  return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
}

}  // namespace

absl::Status AmxTileSimulator::LoadConfig(const TileConfig& config) {
  if (config.palette != 1) {
    return absl::InvalidArgumentError("only palette 1 exists");
  }
  for (int t = 0; t < kAmxTiles; ++t) {
    if (config.rows[t] > kAmxMaxRows || config.colsb[t] > kAmxMaxColsBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("tile ", t, " shape out of range"));
    }
  }
  config_ = config;
  std::memset(tiles_, 0, sizeof(tiles_));
  return absl::OkStatus();
}

void AmxTileSimulator::Load(int t, const void* base, int64_t stride) {
  std::memset(tiles_[t], 0, sizeof(tiles_[t]));
  const uint8_t* src = static_cast<const uint8_t*>(base);
  for (int r = 0; r < config_.rows[t]; ++r) {
    std::memcpy(tiles_[t][r], src + r * stride, config_.colsb[t]);
  }
}

void AmxTileSimulator::Store(int t, void* base, int64_t stride) const {
  uint8_t* dst = static_cast<uint8_t*>(base);
  for (int r = 0; r < config_.rows[t]; ++r) {
    std::memcpy(dst + r * stride, tiles_[t][r], config_.colsb[t]);
  }
}

void AmxTileSimulator::Zero(int t) {
  std::memset(tiles_[t], 0, sizeof(tiles_[t]));
}

void AmxTileSimulator::DotBf16(int c, int a, int b) {
  const int n_cols = config_.colsb[c] / 4;
  const int k_pairs = config_.colsb[a] / 4;
  for (int m = 0; m < config_.rows[c]; ++m) {
    for (int k = 0; k < k_pairs; ++k) {
      for (int n = 0; n < n_cols; ++n) {
        // The hardware adds the two products of a pair to the accumulator
        // one after the other, in f32, reading denormal inputs (bf16 and
        // the f32 accumulator) as zero and flushing denormal results.
        float acc = FlushDenormal(Get<float>(tiles_[c][m], n));
        for (int p = 0; p < 2; ++p) {
          acc = FlushDenormal(
              acc + Bf16ToFloatDaz(Get<uint16_t>(tiles_[a][m], 2 * k + p)) *
                        Bf16ToFloatDaz(Get<uint16_t>(tiles_[b][k], 2 * n + p)));
        }
        Put<float>(tiles_[c][m], n, acc);
      }
    }
  }
}

template <typename TA>
static void DotInt8(const TileConfig& cfg, uint8_t (*tc)[kAmxMaxColsBytes],
                    const uint8_t (*ta)[kAmxMaxColsBytes],
                    const uint8_t (*tb)[kAmxMaxColsBytes], int c, int a) {
  const int n_cols = cfg.colsb[c] / 4;
  const int k_quads = cfg.colsb[a] / 4;
  for (int m = 0; m < cfg.rows[c]; ++m) {
    for (int k = 0; k < k_quads; ++k) {
      for (int n = 0; n < n_cols; ++n) {
        uint32_t acc = static_cast<uint32_t>(Get<int32_t>(tc[m], n));
        for (int p = 0; p < 4; ++p) {
          acc += static_cast<uint32_t>(
              static_cast<int32_t>(Get<TA>(ta[m], 4 * k + p)) *
              static_cast<int32_t>(Get<int8_t>(tb[k], 4 * n + p)));
        }
        Put<int32_t>(tc[m], n, static_cast<int32_t>(acc));
      }
    }
  }
}

void AmxTileSimulator::DotU8S8(int c, int a, int b) {
  DotInt8<uint8_t>(config_, tiles_[c], tiles_[a], tiles_[b], c, a);
}

void AmxTileSimulator::DotS8S8(int c, int a, int b) {
  DotInt8<int8_t>(config_, tiles_[c], tiles_[a], tiles_[b], c, a);
}

namespace {

// The `i`th batch element's operand: from a pointer list or at a stride.
const uint8_t* BatchElement(const BrgemmDesc& d, const void* base,
                            int64_t stride, int64_t i) {
  if (d.batch_kind == BatchKind::kPointerList) {
    return static_cast<const uint8_t*>(
        static_cast<const void* const*>(base)[i]);
  }
  return static_cast<const uint8_t*>(base) + i * stride;
}

// Runs one K chunk's tile ops of `kind` on `sim`, reading A and B from
// memory or (`staged`) from the tail staging buffer `stage`.
void RunChunk(AmxTileSimulator& sim, const BrgemmDesc& d,
              const AmxBlockKind& kind, const uint8_t* stage, const uint8_t* a,
              int64_t a_stride, const uint8_t* b, int64_t b_stride,
              bool staged) {
  const int64_t es = InputElementSize(d.dtype);
  const int64_t g = VnniGranularity(d.dtype);
  for (const AmxOp& op : kind.chunk_ops) {
    switch (op.kind) {
      case AmxOp::kLoadA:
        sim.Load(
            op.tile,
            staged ? stage + op.index * 1024 : a + op.index * 16 * a_stride,
            a_stride);
        break;
      case AmxOp::kLoadB:
        sim.Load(op.tile,
                 staged ? stage + kAmxStageBOffset + op.index * 1024
                        : b + op.index * 16 * g * es,
                 b_stride);
        break;
      case AmxOp::kDot:
        if (d.dtype == BrgemmDataType::kBf16) sim.DotBf16(op.tile, op.a, op.b);
        if (d.dtype == BrgemmDataType::kU8S8) sim.DotU8S8(op.tile, op.a, op.b);
        if (d.dtype == BrgemmDataType::kS8S8) sim.DotS8S8(op.tile, op.a, op.b);
        break;
    }
  }
}

// Copies the partial K chunk of A and B into `stage` (zero-padded),
// exactly as the generated code does.
void StageTailChunk(const AmxPlan& plan, const AmxBlockKind& kind,
                    const uint8_t* a, const uint8_t* b, uint8_t* stage) {
  const BrgemmDesc& d = plan.desc;
  const int64_t es = InputElementSize(d.dtype);
  const int64_t g = VnniGranularity(d.dtype);
  const int64_t lda_bytes = d.lda * es;
  const int64_t ldb_row_bytes = d.ldb * g * es;  // one packed K group row
  const int64_t k0 = plan.full_chunks * 64;
  const int64_t tail_bytes = plan.tail_k * es;
  const int64_t tail_rows = (plan.tail_k + g - 1) / g;
  std::memset(stage, 0, kAmxStageBytes);
  for (int r = 0; r < kind.row_tiles; ++r) {
    for (int row = 0; row < kind.rows[r]; ++row) {
      std::memcpy(stage + r * 1024 + row * 64,
                  a + (r * 16 + row) * lda_bytes + k0, tail_bytes);
    }
  }
  for (int cc = 0; cc < kind.col_tiles; ++cc) {
    for (int64_t kr = 0; kr < tail_rows; ++kr) {
      std::memcpy(stage + kAmxStageBOffset + cc * 1024 + kr * 64,
                  b + (plan.full_chunks * 16 + kr) * ldb_row_bytes + cc * 64,
                  kind.cols[cc] * 4);
    }
  }
}

// Computes the C block of `kind` at (m0, n0): its tiles loaded from C
// (accumulate) or zeroed, every batch element's full chunks and staged
// tail run, and the tiles stored back.
void RunBlock(AmxTileSimulator& sim, const AmxPlan& plan,
              const AmxBlockKind& kind, const BrgemmCallArgs& args, int64_t m0,
              int64_t n0, uint8_t* stage) {
  const BrgemmDesc& d = plan.desc;
  const int64_t es = InputElementSize(d.dtype);
  const int64_t g = VnniGranularity(d.dtype);
  const int64_t lda_bytes = d.lda * es;
  const int64_t ldb_row_bytes = d.ldb * g * es;  // one packed K group row
  const int64_t ldc_bytes = d.ldc * 4;
  uint8_t* c = static_cast<uint8_t*>(args.c) + m0 * ldc_bytes + n0 * 4;
  for (int r = 0; r < kind.row_tiles; ++r) {
    for (int cc = 0; cc < kind.col_tiles; ++cc) {
      if (d.accumulate) {
        sim.Load(AmxCTile(r, cc), c + r * 16 * ldc_bytes + cc * 64, ldc_bytes);
      } else {
        sim.Zero(AmxCTile(r, cc));
      }
    }
  }
  for (int64_t i = 0; i < args.batch; ++i) {
    const uint8_t* a =
        BatchElement(d, args.a, d.stride_a_bytes, i) + m0 * lda_bytes;
    const uint8_t* b =
        BatchElement(d, args.b, d.stride_b_bytes, i) + n0 * g * es;
    for (int64_t ch = 0; ch < plan.full_chunks; ++ch) {
      RunChunk(sim, d, kind, stage, a + ch * 64, lda_bytes,
               b + ch * 16 * ldb_row_bytes, ldb_row_bytes, false);
    }
    if (plan.tail_k == 0) continue;
    StageTailChunk(plan, kind, a, b, stage);
    RunChunk(sim, d, kind, stage, nullptr, 64, nullptr, 64, true);
  }
  for (int r = 0; r < kind.row_tiles; ++r) {
    for (int cc = 0; cc < kind.col_tiles; ++cc) {
      sim.Store(AmxCTile(r, cc), c + r * 16 * ldc_bytes + cc * 64, ldc_bytes);
    }
  }
}

}  // namespace

absl::Status EmulateAmxPlan(const AmxPlan& plan, const BrgemmCallArgs& args) {
  AmxTileSimulator sim;
  alignas(64) uint8_t stage[kAmxStageBytes] = {};
  for (int ni = 0; ni < 2; ++ni) {
    for (int64_t nb = 0; nb < plan.n_count[ni]; ++nb) {
      const int64_t n0 = (ni == 0 ? nb : plan.n_count[0]) * kAmxBlock;
      for (int mi = 0; mi < 2; ++mi) {
        if (plan.m_count[mi] == 0) continue;
        const AmxBlockKind& kind = plan.kinds[mi][ni];
        absl::Status s = sim.LoadConfig(kind.config);
        if (!s.ok()) return s;
        for (int64_t mb = 0; mb < plan.m_count[mi]; ++mb) {
          const int64_t m0 = (mi == 0 ? mb : plan.m_count[0]) * kAmxBlock;
          RunBlock(sim, plan, kind, args, m0, n0, stage);
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace microkernels
}  // namespace hgc
