#include "codegen/attention_blocks.h"

#include <algorithm>

namespace hgc {
namespace codegen {

AttentionBlocks ChooseAttentionBlocks(int64_t seq_q, int64_t seq_kv, int64_t d,
                                      int64_t dv, int64_t l2_bytes,
                                      bool whole_rows) {
  AttentionBlocks b;
  b.mb = std::min<int64_t>(seq_q, 64);
  if (whole_rows) {
    b.nb = seq_kv;
    const int64_t rows = (l2_bytes / 2) / (4 * std::max<int64_t>(seq_kv, 1));
    b.mb = std::min(b.mb, std::clamp<int64_t>(rows, 8, 64));
  } else {
    // A Kᵀ block (d x nb), a V block (nb x dv) and the S tile (mb x nb)
    // within L2: long key blocks leave fewer row passes and kernel calls per
    // score, which costs more than the S tile leaving L1, and one block
    // needs no online softmax (its rescaling row passes took twice as long
    // as the plain ones) and lets P·V write the output itself. Keys that
    // need several blocks are split evenly (in multiples of 16): a short
    // last block runs its kernels and row passes at a fraction of their
    // rate. On a 512 KiB L2 (Zen 3): under half of L2, bert-large's 384
    // keys ran as 336 + 48 and MHA-4's 512 as 336 + 176, 20 % and 17 %
    // slower than in one block; under three quarters, MHA-3's 384 keys
    // (head 128) ran as 192 + 192, 7 % slower than in one block (two
    // threads). L2s of 1 MiB and more take up to 512 keys in one block
    // either way.
    int64_t nb = l2_bytes / (4 * (d + dv + b.mb));
    nb = std::clamp<int64_t>(nb / 16 * 16, 64, 512);
    const int64_t blocks = (seq_kv + nb - 1) / nb;
    nb = ((seq_kv + blocks - 1) / blocks + 15) / 16 * 16;
    b.nb = std::min(nb, seq_kv);
  }
  return b;
}

}  // namespace codegen
}  // namespace hgc
