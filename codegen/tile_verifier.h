// VerifyNest: the checks a tile-IR nest (tile_ir.h) passes before Compile
// emits it (compile.cc runs it on every nest a lowering returns).
//
//   - Every buffer a statement names is declared: views, row programs'
//     inputs and outputs, the program of each RowMap, and the frame
//     buffer each pack writes.
//   - Every kernel a Brgemm calls is in the nest's kernel table.
//   - Parallel loops are race-free by construction: each write to a frame
//     buffer (shared by the threads) happens inside a parallel loop at an
//     offset (a RowMap's row, when it writes its program's output) that
//     depends on an enclosing parallel loop's variable or on the thread
//     id, or inside a parallel loop of one iteration; per-thread slices
//     and stack locals are the thread's own.
//   - Every view lies within its buffer: the nest is run abstractly on a
//     sample of its iterations (the first and last few of each loop, for
//     a few of the threads' shares), and the elements each statement
//     reads or writes there (a row statement's `len`, a copy's rows and
//     columns, a BRGEMM's C tile; the first element of the other BRGEMM
//     operands) must lie inside the buffer: the bytes a per-thread slice,
//     a local or a frame buffer Compile has yet to place (arena scratch,
//     a constant slot, a literal) was declared with, and frame_bytes for
//     the others. Prefetches are hints and may reach past a buffer.
#ifndef HGC_CODEGEN_TILE_VERIFIER_H_
#define HGC_CODEGEN_TILE_VERIFIER_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "codegen/tile_ir.h"
#include "runtime/executable.h"

namespace hgc {
namespace codegen {
namespace tile {

struct VerifyOptions {
  // Threads the step runs on (the parallel loops' shares).
  int num_threads = 1;
  // The bytes a frame buffer holds from its start, or -1 when unknown
  // (then only that views start at or after it is checked). Unset: all
  // unknown.
  std::function<int64_t(const BufferRef&)> frame_bytes;
};

// OK when `nest` passes every check above; otherwise an Internal error
// naming the nest, the statement, the loops around it and what is wrong.
absl::Status VerifyNest(const Nest& nest, const VerifyOptions& options);

}  // namespace tile
}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_TILE_VERIFIER_H_
