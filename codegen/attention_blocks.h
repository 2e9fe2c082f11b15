// The block sizes of an attention nest (attention_plan.h): query rows and
// keys per block, chosen for the L2 size read at start-up.
#ifndef HGC_CODEGEN_ATTENTION_BLOCKS_H_
#define HGC_CODEGEN_ATTENTION_BLOCKS_H_

#include <cstdint>

namespace hgc {
namespace codegen {

struct AttentionBlocks {
  int64_t mb = 0;  // query rows per block
  int64_t nb = 0;  // keys per block
};

// Blocks for attention problems of seq_q x seq_kv with head sizes d (Q, K)
// and dv (V), on a machine with an L2 cache of `l2_bytes`: mb is 64 rows,
// nb keeps a Kᵀ block, a V block and the S tile within L2 (64 to 512
// keys), the keys split evenly when they need several blocks.
// With `whole_rows` (a softmax or P rounded before P·V needs each row's whole
// sum first) nb is seq_kv and mb (8 to 64 rows) keeps the S tile within half of
// L2.
AttentionBlocks ChooseAttentionBlocks(int64_t seq_q, int64_t seq_kv, int64_t d,
                                      int64_t dv, int64_t l2_bytes,
                                      bool whole_rows = false);

}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_ATTENTION_BLOCKS_H_
