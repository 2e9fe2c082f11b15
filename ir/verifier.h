// The verifier: checks that a module is well formed. Run after parsing and
// after every pass; a failure after a pass is a compiler bug.
#ifndef HGC_IR_VERIFIER_H_
#define HGC_IR_VERIFIER_H_

#include "absl/status/status.h"
#include "ir/graph.h"

namespace hgc {

// Checks, for every graph: unique graph, parameter and value names; valid
// parameter types (no more than 2^60 elements); every operand defined before
// use in the same graph; every op known, with valid attributes and result
// types equal to what inference gives; a non-empty return whose types equal
// the declared result types. Then, across the module, VerifyCalls. Errors
// are InvalidArgument with the offending op's location when it has one.
absl::Status Verify(const Module& module);
absl::Status VerifyGraph(const Graph& graph);

// Checks every `fusion` op of `module`: its `body` names another graph of
// the module whose parameters have exactly the operand types (in order) and
// whose one declared result has the op's result type; and no graph reaches
// itself through bodies (the interpreter and codegen inline bodies).
absl::Status VerifyCalls(const Module& module);

}  // namespace hgc

#endif  // HGC_IR_VERIFIER_H_
