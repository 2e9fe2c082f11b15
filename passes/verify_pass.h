// verify: runs the IR verifier as a pass (the whole of the O0 pipeline).
// Rewrites nothing; fails with the verifier's error when the module is not
// well formed. The PassManager also verifies after every pass unless told
// not to; this pass makes verification explicit where it is the only work.
#ifndef HGC_PASSES_VERIFY_PASS_H_
#define HGC_PASSES_VERIFY_PASS_H_

#include "passes/pass.h"

namespace hgc {

class VerifyPass : public Pass {
 public:
  absl::string_view name() const override { return "Verify"; }
  absl::string_view argument() const override { return "verify"; }
  absl::string_view description() const override {
    return "check that the module is well formed (changes nothing)";
  }
  // Never changes the module; the verifier's error otherwise.
  absl::StatusOr<bool> Run(Module& module) override;
};

}  // namespace hgc

#endif  // HGC_PASSES_VERIFY_PASS_H_
