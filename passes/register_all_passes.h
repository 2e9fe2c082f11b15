// The one list of registered passes. Add a pass here (and only here) to
// make it available to pipelines, `--pipeline=` and `--list-passes`.
#ifndef HGC_PASSES_REGISTER_ALL_PASSES_H_
#define HGC_PASSES_REGISTER_ALL_PASSES_H_

#include "passes/pass_registry.h"

namespace hgc {

// Registers every pass of passes/ into `registry`.
void RegisterAllPasses(PassRegistry& registry);

// A registry holding every pass, built on first use; immutable and safe to
// read from any thread.
const PassRegistry& GlobalPassRegistry();

}  // namespace hgc

#endif  // HGC_PASSES_REGISTER_ALL_PASSES_H_
