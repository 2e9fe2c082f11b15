// The bf16 path of attention's nest (lower_attention.h): bf16 Q, K and V
// whose P·V reads a bf16 P. Both matmuls run on the bf16 kernels
// (vdpbf16ps or AMX) instead of on f32 copies:
//
//   per (batch, kv head), in the parallel loop: Kᵀ and V packed as the
//     kernels' bf16 B (VNNI-2)
//   per query block: Q rows as bf16 A (read in place where they are
//     contiguous rows, else copied); S = Q·Kᵀ in f32; the score ops and
//     the rows' maxima by the score pass (the bf16 kernels have no
//     post-ops); softmax's exp and sums in f32, P normalized and rounded
//     as on the f32 path, then stored as bf16 (exactly: it holds bf16
//     values); O = P·V in f32 into the O tile, written out as on the f32
//     path (rounded to bf16, P·V's result type, then the casts after it).
//
// The kernels read bf16 denormals as zero, as the graph's bf16 matmuls do;
// their sums are rounded f32 sums, as the reference's.
//
// The path is taken where the CPU's bf16 kernels are bf16 instructions
// (SelectBrgemmIsa's avx512_core_bf16 or AMX). Elsewhere the f32 path,
// which widens K and V once per head, is the faster: the kernels that
// widen bf16 themselves would widen them in every call. The environment
// variable HGC_BF16_ATTENTION_KERNELS, read once per process, overrides
// the CPU's say: 1 takes the path wherever it fits, with whatever bf16
// kernels SelectBrgemmIsa picks (the widening ones compute the same
// products), so that it runs on any CPU; 0 never takes it (tests of the
// f32 path's loops on any CPU).
#ifndef HGC_CODEGEN_ATTENTION_BF16_H_
#define HGC_CODEGEN_ATTENTION_BF16_H_

#include "absl/status/status.h"
#include "codegen/attention_plan.h"
#include "codegen/tile_builder.h"
#include "codegen/tile_ir.h"

namespace hgc {
namespace codegen {

// Whether `p` (its types and blocks planned) can run on the bf16 kernels:
// Q, K and V bf16, no Q ops, P·V's A bf16 (P normalized and rounded
// before it), the keys in one block, no heads run as rows, and bf16
// kernels of a bf16 instruction family (or any, with
// HGC_BF16_ATTENTION_KERNELS=1; none with 0) that this CPU can make for
// its shapes. Sets
// the bf16 row strides (AttentionPlan's *16_ld) and whether Q is read in
// place.
bool Bf16AttentionFits(AttentionPlan& p);

// Per-thread scratch of the bf16 path (AttentionPlan's bf16 buffers).
void AddBf16Scratch(tile::Nest& nest, AttentionPlan& p);

// The Q·Kᵀ and P·V kernels of the bf16 path, whole and for the query
// tail.
absl::Status AddBf16Kernels(tile::Nest& nest, AttentionPlan& p);

// One (batch, kv head)'s Kᵀ and V packed as VNNI-2 bf16.
void AppendBf16HeadPack(tile::NestBuilder& nb, const AttentionPlan& p,
                        tile::Expr k_base, tile::Expr v_base);

// A query block's `rows` Q rows from `q_row0` (the element of its first)
// as bf16 A; returns them: in place (AttentionPlan::q16_in_place) or the
// q16 rows.
tile::View AppendBf16QRows(tile::NestBuilder& nb, const AttentionPlan& p,
                           tile::Expr q_row0, tile::Expr rows);

// S = Q·Kᵀ (Q the rows AppendBf16QRows returned) into the score tile
// (`m_tail`: 1 for the query tail).
void AppendBf16Scores(tile::NestBuilder& nb, const AttentionPlan& p,
                      tile::View q_rows, tile::Expr m_tail);

// P (the score tile after the softmax pass: normalized and rounded) stored
// as bf16, then O = P·V into the O tile.
void AppendBf16Output(tile::NestBuilder& nb, const AttentionPlan& p,
                      tile::Expr rows, tile::Expr m_tail);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_ATTENTION_BF16_H_
