#include "microkernels/amx_plan.h"

#include "absl/strings/str_cat.h"

namespace hgc {
namespace microkernels {
namespace {

// Splits `extent` (<= 32) elements into at most two tiles of <= 16.
int SplitTiles(int64_t extent, int out[2]) {
  out[0] = static_cast<int>(extent < 16 ? extent : 16);
  out[1] = static_cast<int>(extent > 16 ? extent - 16 : 0);
  return out[1] > 0 ? 2 : 1;
}

AmxBlockKind MakeKind(int64_t m_extent, int64_t n_extent) {
  AmxBlockKind kind;
  kind.row_tiles = SplitTiles(m_extent, kind.rows);
  kind.col_tiles = SplitTiles(n_extent, kind.cols);
  for (int r = 0; r < kind.row_tiles; ++r) {
    // A tiles always span a full 64-byte chunk of K (the tail is staged).
    kind.config.Set(AmxATile(r), kind.rows[r], 64);
    for (int c = 0; c < kind.col_tiles; ++c) {
      kind.config.Set(AmxCTile(r, c), kind.rows[r], kind.cols[c] * 4);
    }
  }
  for (int c = 0; c < kind.col_tiles; ++c) {
    // 16 K groups (VNNI rows) of cols[c] columns, 4 bytes each.
    kind.config.Set(AmxBTile(c), 16, kind.cols[c] * 4);
  }
  // The schedule: each A tile and B tile loaded once per chunk, each dot
  // issued as soon as its operands are in; alternating B tiles between dots
  // gives the tile unit independent accumulators back to back.
  auto load_a = [&](int r) {
    kind.chunk_ops.push_back({AmxOp::kLoadA, AmxATile(r), r});
  };
  auto load_b = [&](int c) {
    kind.chunk_ops.push_back({AmxOp::kLoadB, AmxBTile(c), c});
  };
  auto dot = [&](int r, int c) {
    kind.chunk_ops.push_back(
        {AmxOp::kDot, AmxCTile(r, c), 0, AmxATile(r), AmxBTile(c)});
  };
  load_a(0);
  load_b(0);
  dot(0, 0);
  if (kind.col_tiles > 1) {
    load_b(1);
    dot(0, 1);
  }
  if (kind.row_tiles > 1) {
    load_a(1);
    dot(1, 0);
    if (kind.col_tiles > 1) dot(1, 1);
  }
  return kind;
}

}  // namespace

std::string AmxOp::ToString() const {
  switch (kind) {
    case kLoadA: return absl::StrCat("tileloadd tmm", tile, " <- A", index);
    case kLoadB: return absl::StrCat("tileloadd tmm", tile, " <- B", index);
    case kDot:
      return absl::StrCat("tdp tmm", tile, " += tmm", a, " * tmm", b);
  }
  return "?";
}

AmxPlan BuildAmxPlan(const BrgemmDesc& desc) {
  AmxPlan plan;
  plan.desc = desc;
  plan.chunk_k = static_cast<int>(64 / InputElementSize(desc.dtype));
  plan.full_chunks = desc.k / plan.chunk_k;
  plan.tail_k = static_cast<int>(desc.k % plan.chunk_k);
  plan.m_count[0] = desc.m / kAmxBlock;
  plan.m_count[1] = desc.m % kAmxBlock != 0 ? 1 : 0;
  plan.n_count[0] = desc.n / kAmxBlock;
  plan.n_count[1] = desc.n % kAmxBlock != 0 ? 1 : 0;
  const int64_t m_extent[2] = {kAmxBlock, desc.m % kAmxBlock};
  const int64_t n_extent[2] = {kAmxBlock, desc.n % kAmxBlock};
  const TileConfig* first = nullptr;
  for (int mi = 0; mi < 2; ++mi) {
    for (int ni = 0; ni < 2; ++ni) {
      if (plan.m_count[mi] == 0 || plan.n_count[ni] == 0) continue;
      plan.kinds[mi][ni] = MakeKind(m_extent[mi], n_extent[ni]);
      if (first == nullptr) {
        first = &plan.kinds[mi][ni].config;
      } else if (*first != plan.kinds[mi][ni].config) {
        plan.single_config = false;
      }
    }
  }
  return plan;
}

std::string AmxPlan::ToString() const {
  std::string s = absl::StrCat(desc.ToString(), "\nchunk_k=", chunk_k,
                               " full_chunks=", full_chunks,
                               " tail_k=", tail_k, "\n");
  for (int mi = 0; mi < 2; ++mi) {
    for (int ni = 0; ni < 2; ++ni) {
      if (m_count[mi] == 0 || n_count[ni] == 0) continue;
      const AmxBlockKind& k = kinds[mi][ni];
      absl::StrAppend(&s, "block m", mi == 0 ? "full" : "tail", " x",
                      m_count[mi], " n", ni == 0 ? "full" : "tail", " x",
                      n_count[ni], ": ", k.config.ToString(), "\n");
      for (const AmxOp& op : k.chunk_ops) {
        absl::StrAppend(&s, "  ", op.ToString(), "\n");
      }
    }
  }
  return s;
}

}  // namespace microkernels
}  // namespace hgc
