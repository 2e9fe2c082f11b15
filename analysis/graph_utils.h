// Helpers the passes share: use lists (the IR keeps none, so passes compute
// them when they need them), in-order value replacement, literal-constant
// queries, dead-op erasure and graph naming (cloning is in ir/clone.h).
//
// Rewrites are done in one in-order sweep per graph: ops are in topological
// order, so by the time a sweep reaches an op every operand has its final
// value, and a ValueReplacer turns N replacements into O(ops) work instead
// of one whole-graph walk per Graph::ReplaceAllUsesWith.
#ifndef HGC_ANALYSIS_GRAPH_UTILS_H_
#define HGC_ANALYSIS_GRAPH_UTILS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "ir/graph.h"

namespace hgc {

// Who reads each value of a graph, computed once. Invalidated by any change
// to the graph.
class UseInfo {
 public:
  explicit UseInfo(const Graph& graph);

  // Operand slots plus return slots reading `v`.
  int NumUses(const Value* v) const;
  // The distinct ops reading `v`, in graph order.
  const std::vector<Op*>& Users(const Value* v) const;
  // Whether the graph returns `v`.
  bool IsReturned(const Value* v) const { return returned_.contains(v); }
  // Every use of `v` is an operand slot of `user` (one or more) and `v` is
  // not returned.
  bool OnlyUsedBy(const Value* v, const Op* user) const;
  // No result of `op` is read or returned.
  bool IsDead(const Op& op) const;

 private:
  absl::flat_hash_map<const Value*, std::vector<Op*>> users_;
  absl::flat_hash_map<const Value*, int> uses_;
  absl::flat_hash_set<const Value*> returned_;
};

// One op of a chain found by WalkBackChain, and the operand through which
// the chain goes on back (-1 for the op that ends it).
struct ChainLink {
  Op* op = nullptr;
  int operand = -1;
};

// The chain of ops from `v` back to one that `is_end` accepts: each value
// on the way is read only by the op after it (`consumer` for `v`), and the
// chain goes on through one of the operands `chain_operands` lists for an
// op (tried in order, backtracking). Links come end first; nullopt when no
// chain of at most `max_depth` ops exists.
std::optional<std::vector<ChainLink>> WalkBackChain(
    const UseInfo& uses, Value* v, const Op* consumer,
    absl::FunctionRef<bool(const Op&)> is_end,
    absl::FunctionRef<std::vector<int>(const Op&)> chain_operands,
    int max_depth = 33);

// Replacements recorded during an in-order sweep. Call RemapOperands(op)
// before inspecting each op, Replace(result, new_value) to retire an op's
// result, and RemapResults(graph) after the sweep; then erase the retired
// ops (EraseDeadOps).
class ValueReplacer {
 public:
  // `v` after all recorded replacements.
  Value* Resolve(Value* v) const;
  // From now on, uses of `from` read `to` (resolved first).
  void Replace(Value* from, Value* to);
  // Rewrites `op`'s operands; returns whether any changed.
  bool RemapOperands(Op& op) const;
  // Rewrites the graph's returned values; returns whether any changed.
  bool RemapResults(Graph& graph) const;
  bool empty() const { return map_.empty(); }

 private:
  absl::flat_hash_map<Value*, Value*> map_;
};

// `created` takes over `replaced`'s name (which `replaced` gives up, so the
// graph keeps one value per name); returns `created`.
Value* TakeName(Value* created, Value* replaced);

// Fresh value names for the values a rewrite adds to `graph`: `base`, or
// "<base>_<n>" for the smallest n >= 2 that no value of the graph (nor an
// earlier Make) uses. They name buffers in --emit=loops and values in the
// printed IR.
class FreshNames {
 public:
  explicit FreshNames(const Graph& graph);
  std::string Make(absl::string_view base);

 private:
  absl::flat_hash_set<std::string> taken_;
};

// Erases every op of `graph` whose results are neither read nor returned,
// transitively (all hgc ops are pure). Returns the number erased. When
// `erased_fusion_attrs` is given, the attributes of every erased `fusion` op
// are appended to it (DCE uses them to find bodies that lost their caller).
int EraseDeadOps(Graph& graph,
                 std::vector<AttrMap>* erased_fusion_attrs = nullptr);

// A softmax op's axis, normalized to [0, rank) (absent: the last).
int64_t SoftmaxAxis(const Op& softmax);

// A verified transpose op's permutation, normalized to [0, rank) (absent:
// the dimensions reversed, numpy's default).
std::vector<int64_t> TransposePermOf(const Op& transpose);

// The `constant` op defining `v`, or nullptr.
const Op* LiteralConstantOp(const Value* v);
// The element value when `v` is a literal constant whose elements are all
// the same number, as stored (rounded to v's dtype); nullopt otherwise
// (lists of differing values, bool constants, empty tensors).
std::optional<double> SplatValue(const Value* v);
// `v` rounded to `dtype` the way a tensor of that dtype stores it.
double RoundToDType(double v, DType dtype);

// Graphs of `module` named as the `body` of some fusion op.
absl::flat_hash_set<const Graph*> FusionBodies(const Module& module);
// The graphs of `module` that are not fusion bodies (user graphs), in order.
std::vector<Graph*> TopLevelGraphs(const Module& module);
// "<base>_<n>" for the smallest n >= *next naming no graph of `module`;
// advances *next past it.
std::string FreshGraphName(const Module& module, absl::string_view base,
                           int* next);

}  // namespace hgc

#endif  // HGC_ANALYSIS_GRAPH_UTILS_H_
