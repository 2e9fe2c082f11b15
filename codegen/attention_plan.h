// The plan of an attention group's nest (lower_attention.h builds its
// loops from it): the match, block sizes from the cache, the element types
// and the rounding the graph asks for, scratch row strides, and the nest's
// frame buffers, scratch, row programs and BRGEMM kernels.
#ifndef HGC_CODEGEN_ATTENTION_PLAN_H_
#define HGC_CODEGEN_ATTENTION_PLAN_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/attention_match.h"
#include "codegen/attention_blocks.h"
#include "codegen/lower_state.h"
#include "codegen/tile_ir.h"
#include "ir/graph.h"
#include "support/cpu_features.h"

namespace hgc {
namespace codegen {

// The plan of one attention group's nest: its match, blocks and types,
// the rounding the graph asks for, scratch strides, and the indices of the
// nest's buffers, programs and BRGEMM kernels.
struct AttentionPlan {
  // The block as the kernel runs it: the match carried on the op, but for
  // a grouped-query decoder step (heads_as_rows > 1), whose query heads of
  // one kv head become query rows (GroupHeadsAsRows).
  AttentionMatch m;
  // Query heads per kv head run as the rows of one query block: one query
  // per head (seq_q 1), 4 or more per kv head. The rows then read K and V
  // once per kv head instead of once per query head. 1: heads are heads.
  int64_t heads_as_rows = 1;
  AttentionBlocks blocks;
  Isa isa = Isa::kNone;   // the f32 kernels' (SelectBrgemmIsa), chosen once
  bool k_packed = false;  // Kᵀ packed per (batch, kv head) into `kt`
  // Q·Kᵀ's kernel reads K's rows as stored, each score a dot product along
  // the head (BLayout::kTransposed): one query row per block on AVX2, f32
  // K with contiguous rows. No Kᵀ is copied.
  bool k_rows = false;
  // Kᵀ packed per key block instead, just before Q·Kᵀ reads it: an f32 K
  // over several key blocks with one query block per head and no head
  // group (a decoder's step), which reads each Kᵀ block once, so a block
  // in L2 serves as well as the whole head, which spills to L3 (one query
  // row over 1031 keys, head 128, batch 4, 8 heads: 1.3x faster on Zen 3).
  bool kt_per_block = false;
  // V rows copied per (batch, kv head) into `vp` (widened, off a stride of
  // 512-byte multiples that P·V's kernel does not prefetch, or gathered
  // when not contiguous).
  bool v_packed = false;
  // vp holds V in column panels v_ld columns wide (the P·V kernel's tile
  // width), v_panel_ld floats apart, each seq_kv x v_ld row-major
  // (BrgemmDesc::b_panel_bytes): AVX2 P·V tiles take 16 of a head's
  // columns, and 16-column slices of rows 256 bytes or more apart share a
  // quarter of L1's sets or fewer, so the M tiles that reuse them fetch
  // them from L2 again. Contiguous panels ran P·V 10-30 % faster on Zen 3
  // (heads of 64 and 128, kernels alone). Only where V is copied anyway or
  // several M tiles reuse the panels (PlanAttention); one query row (a
  // decoder's step) reads V in place.
  bool v_panels = false;
  int64_t v_panel_ld = 0;
  // Element types of Q, K, V (f32, bf16 or f16; a bf16 / f16 operand is
  // widened to f32 as it is copied into scratch: exact, and its products
  // are exact in f32, as the matmuls' f32 accumulation asks). A u8 / s8
  // one (the QDQ form) is dequantized as it is copied, by the scale and
  // zero point of its quantization ops (AttentionMatch::q_quant, ...),
  // rounded once as the dequantize op rounds.
  DType q_type = DType::kF32, k_type = DType::kF32, v_type = DType::kF32;
  OperandQuant q_quant, k_quant, v_quant;
  // Each softmax row prefetches its share of the next head (one key block
  // a head: a head's query blocks are short work that would otherwise
  // start the next head on data not yet in cache).
  bool prefetch = false;
  // With `prefetch`, a K (V) stored in dense rows is fetched by Q·Kᵀ's
  // (P·V's) kernel instead, kv_slice rows of the next head per query block
  // (rows [qb * kv_slice, (qb + 1) * kv_slice), prefetch_k_lines
  // (prefetch_v_lines) lines) spread over its K loop, so that the softmax
  // rows' bursts, which stall on the few line-fill buffers, carry only Q
  // and O.
  bool kernel_prefetch_k = false, kernel_prefetch_v = false;
  int64_t kv_slice = 0, prefetch_k_lines = 0, prefetch_v_lines = 0;
  // P·V's kernel divides its rows by their sums (divide_rows) and writes
  // them straight into the output: one key block, an f32 result whose rows
  // are contiguous, no rounding on the way out. No O tile then (o = -1).
  bool direct_out = false;
  int64_t kt_ld = 0, s_ld = 0, v_ld = 0;  // row strides of Kᵀ, S and V
  int q = -1, k = -1, v = -1, out = -1;
  int kt = -1, kc = -1, vp = -1, s = -1, o = -1, stats = -1, qs = -1;
  // The counters that balance the items over the threads (tile::For's
  // claims); -1 on one thread.
  int claims = -1;
  // A bf16 / f16 V stored [D, S]: its rows (one per d) widened here, then
  // transposed into vp; likewise a query block of such a Q into qs. qs
  // also holds Q rows after the Q ops (a scale; rows that are not
  // contiguous are gathered into it first and scaled in place).
  int vw = -1, qw = -1;
  tile::KernelsByTail qk_kernels;  // by query-row and key-block tails
  tile::KernelsByTail pv_kernels;  // the same (keys are P·V's K)
  int q_program = -1, score_program = -1, prob_program = -1;
  // Q·Kᵀ's kernel runs the score ops itself: none, a scale by an f32
  // scalar, a mask row (a mask the same for every query row: [B, 1, 1, S],
  // say) added, or the scale then the mask, as the reference computes
  // them. With AVX-512 kernels it also folds each score row's values into
  // 16 running maxima (`row_max`), so the score pass only takes the max of
  // those; on AVX2 (row_max -1) the score pass takes the max of the row.
  bool kernel_scores = false;
  int row_max = -1;  // local: mb rows of 16 running maxima, or -1
  // The scale's buffer (a body parameter, or a local holding the literal
  // `scale_constant`, stored once per thread), and the mask's; -1: none.
  int score_scale = -1, mask = -1;
  float scale_constant = 0;
  bool scale_is_constant = false;
  // The mask's element strides over batch and head (0 along the query
  // rows, 1 along the keys).
  int64_t mask_batch_stride = 0, mask_head_stride = 0;
  DType softmax_type = DType::kF32;
  // Rows divided by their sum before P·V (and rounded: a bf16 / f16
  // softmax, a bf16 / f16 P, or prob ops that round P, such as a cast
  // round trip), as the reference rounds them; P·V's result then needs no
  // division.
  bool normalize = false;
  // The roundings of P·V's result on its way out: its own type when not
  // f32, then the casts after it, in order.
  std::vector<DType> out_casts;
  // A u8 / s8 result: the per-tensor quantize after those (the result's
  // type says which), applied as the O rows are written out.
  std::optional<OperandQuant> out_quant;
  // The int8 path (attention_int8.h): both matmuls on the u8s8 kernels.
  // Its per-thread buffers: packed Kᵀ and V (s8, VNNI-4) and their column
  // sums, the query block's u8 Q and quantized P rows and their row sums;
  // the row strides; each operand's zero point as the kernels read it; the
  // scales of the two products.
  bool int8 = false;
  // The int8 path's P·V converts its result straight into the output's
  // rows (direct_out's conditions but the rounding of P: an f32 result
  // in contiguous rows, no casts); otherwise into the O tile.
  bool int8_direct_out = false;
  // u8 Q rows read by Q·Kᵀ's kernel where they are (q8_ld their stride;
  // no q8 or q_sums then): no flip to make and no sums needed.
  bool q8_in_place = false;
  int kt8 = -1, k_sums = -1, vp8 = -1, v_sums = -1;
  int q8 = -1, q_sums = -1, p8 = -1, p_sums = -1;
  int64_t kt8_ld = 0, v8_ld = 0, q8_ld = 0, p8_ld = 0;
  OperandQuant p_quant;
  bool p_signed = false;
  int32_t q_zero = 0, k_zero = 0, p_zero = 0, v_zero = 0;
  float qk_scale = 1, pv_scale = 1;
  // The bf16 path (attention_bf16.h): both matmuls on the bf16 kernels.
  // Its per-thread buffers: packed Kᵀ and V (VNNI-2), the query block's Q
  // rows (none where Q·Kᵀ reads Q in place, q16_ld its row stride) and P
  // as bf16; their row strides. P·V's result is bf16, so it goes through
  // the O tile and the write-out's rounding.
  bool bf16 = false;
  bool q16_in_place = false;
  int kt16 = -1, vp16 = -1, q16 = -1, p16 = -1;
  int64_t kt16_ld = 0, v16_ld = 0, q16_ld = 0, p16_ld = 0;
};

// Plans `op` (a fusion op of kind "attention") for a step on
// `num_threads` threads into `nest`: its frame buffers, per-thread
// scratch, programs and kernels. The match is the one attention-fusion
// wrote on `op` (analysis/attention_attrs.h); the body is not matched
// again. Unimplemented for a missing or invalid match and for
// what the kernel does not cover (integer scores or results, a u8 / s8
// operand not read through dequantize, a bf16 / f16 Q or V with
// neither its rows nor its columns contiguous, a rounded softmax or P over
// more than 65536 keys, ...).
absl::StatusOr<AttentionPlan> PlanAttention(LowerState& state, const Op& op,
                                            int num_threads, tile::Nest& nest);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_ATTENTION_PLAN_H_
