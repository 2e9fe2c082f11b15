// Lowering of `"attention"` fusion groups (passes/attention_fusion.h) to
// one flash-style nest (tile_ir.h), parallel over batch x heads x chunks of
// query blocks. For each block of mb query rows it streams K and V in
// blocks of nb keys:
//
//   S = Q_blk · K_blkᵀ              BRGEMM into a per-thread mb x nb tile
//   S = score_ops(S)                scale, mask, casts, on the hot tile
//   online softmax per row          running max and sum; O rescaled
//   O += P · V_blk                  BRGEMM accumulating into mb x Dv
//
// (with a single key block the softmax is the plain one and P·V overwrites
// O), then writes O / sum straight into the output's final layout (a
// trailing transpose and reshape are only strides). No buffer is O(seq²):
// the per-thread scratch is the S and O tiles, the row statistics and, when
// K is stored keys-major, Kᵀ of one head (packed inside the parallel loop,
// by the thread that uses it, with runtime_helpers.h's transpose); V rows
// a multiple of 1 KiB apart are copied the same way into contiguous rows.
// Scratch rows that the kernels stream (S, Kᵀ) are padded off multiples of
// 1 KiB, which would map them to a few L1 sets. When every (batch, head)
// is one short item (one key block, one chunk), each softmax row
// prefetches its share of the next head's Q, K, V and output rows into L2,
// so a thread does not start each head on data still in memory. Block
// sizes come from the L2 size read at start-up; --emit=loops shows them.
#ifndef HGC_CODEGEN_LOWER_ATTENTION_H_
#define HGC_CODEGEN_LOWER_ATTENTION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "codegen/lower_common.h"
#include "ir/graph.h"

namespace hgc {
namespace codegen {

struct AttentionBlocks {
  int64_t mb = 0;        // query rows per block
  int64_t nb = 0;        // keys per block
  int64_t q_chunks = 1;  // chunks of query blocks per (batch, head)
};

// Blocks for `batch_heads` (batch x heads) attention problems of seq_q x
// seq_kv with head sizes d (Q, K) and dv (V), on `num_threads` threads with
// an L2 cache of `l2_bytes`: mb is 64 rows, nb keeps a Kᵀ block, a V block
// and the S tile within half of L2 (64 to 512 keys); query blocks are split
// into chunks only when there are fewer than two (batch, head) pairs per
// thread.
AttentionBlocks ChooseAttentionBlocks(int64_t batch_heads, int64_t seq_q,
                                      int64_t seq_kv, int64_t d, int64_t dv,
                                      int num_threads, int64_t l2_bytes);

// Adds the steps for `op` (a fusion op of kind "attention") to
// state.program. Unimplemented (nothing added) for what the kernel does not
// cover: non-f32 matmuls, Q or V rows that are not contiguous, ops after
// P·V other than relabelling.
absl::Status LowerAttention(LowerState& state, const Op& op);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_LOWER_ATTENTION_H_
