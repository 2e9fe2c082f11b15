#include "passes/verify_pass.h"

#include "ir/verifier.h"

namespace hgc {

absl::StatusOr<bool> VerifyPass::Run(Module& module) {
  absl::Status s = Verify(module);
  if (!s.ok()) return s;
  return false;
}

}  // namespace hgc
