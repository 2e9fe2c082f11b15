// dce: dead code elimination.
//
// Rewrites: erases every op whose results are neither read nor returned
// (every hgc op is pure), transitively, in every graph; then erases fusion
// body graphs whose last calling op was erased.
// Preconditions: a verified module. Guarantees: graph signatures are
// unchanged; unused parameters stay (the signature is the contract).
#ifndef HGC_PASSES_DCE_H_
#define HGC_PASSES_DCE_H_

#include "absl/status/statusor.h"
#include "passes/pass.h"

namespace hgc {

// Erases dead ops in every graph of `module` and the bodies that lost their
// last caller. Returns the number of ops and graphs erased.
int EliminateDeadCode(Module& module);

class DcePass : public Pass {
 public:
  absl::string_view name() const override { return "DeadCodeElimination"; }
  absl::string_view argument() const override { return "dce"; }
  absl::string_view description() const override {
    return "erase ops whose results are unused, and orphaned fusion bodies";
  }
  absl::StatusOr<bool> Run(Module& module) override {
    return EliminateDeadCode(module) > 0;
  }
};

}  // namespace hgc

#endif  // HGC_PASSES_DCE_H_
