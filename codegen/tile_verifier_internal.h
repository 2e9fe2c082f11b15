// What the checks of VerifyNest (tile_verifier.h) share: the buffers each
// statement reads and writes, how statements and views are named in their
// messages, and the bounds check on sampled iterations (tile_sampler.cc).
#ifndef HGC_CODEGEN_TILE_VERIFIER_INTERNAL_H_
#define HGC_CODEGEN_TILE_VERIFIER_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/tile_ir.h"
#include "codegen/tile_verifier.h"

namespace hgc {
namespace codegen {
namespace tile {
namespace verifier_internal {

// One buffer a statement reads or writes: the elements `view` +
// r * row_stride + c * col_stride for r < rows, c < cols.
struct Access {
  const char* role = "";
  View view;
  bool write = false;
  bool bounded = true;  // false for prefetch hints
  Expr rows = 1, row_stride = 0, cols = 1, col_stride = 1;
};

// The buffers `s` itself reads and writes (not those of its body).
std::vector<Access> AccessesOf(const Stmt& s);

// The statement's kind as messages name it ("brgemm", "rowmap", ...).
const char* StmtName(const Stmt& s);

// Whether `buffer` is an index of nest.buffers().
bool Declared(const Nest& nest, int buffer);

// A view as messages show it: %buffer[offset].
std::string ViewText(const Nest& nest, const View& v);

// The problem of a Brgemm calling kernel `k` outside the table.
std::string KernelRangeError(const Nest& nest, int64_t k);

// The bounds and kernel checks of VerifyNest on a sample of the nest's
// iterations (tile_sampler.cc).
absl::Status CheckSampledIterations(const Nest& nest,
                                    const VerifyOptions& options);

}  // namespace verifier_internal
}  // namespace tile
}  // namespace codegen
}  // namespace hgc

#endif  // HGC_CODEGEN_TILE_VERIFIER_INTERNAL_H_
