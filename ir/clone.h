// Copying IR: one op into another graph, or a whole module.
#ifndef HGC_IR_CLONE_H_
#define HGC_IR_CLONE_H_

#include <vector>

#include "ir/graph.h"

namespace hgc {

// Copies `op` into `dst` before `before` (nullptr = at the end), reading
// `operands`, with the same kind, attributes, result types, location and
// result names.
Op* CloneOp(const Op& op, Graph& dst, Op* before, std::vector<Value*> operands);

// A deep copy of `module`, which must verify: same graphs, names, types,
// attributes and locations. The copy prints identically.
Module CloneModule(const Module& module);

}  // namespace hgc

#endif  // HGC_IR_CLONE_H_
