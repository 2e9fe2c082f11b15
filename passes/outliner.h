// Outlining: the half of the fusion passes that turns a group of ops into
// a `fusion` op calling a new body graph (docs/compiler.md §1). The passes
// decide the groups (passes/fusion_rules.h, passes/attention_fusion.h);
// this class rewrites the graph.
#ifndef HGC_PASSES_OUTLINER_H_
#define HGC_PASSES_OUTLINER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "analysis/const_only.h"
#include "analysis/graph_utils.h"
#include "ir/graph.h"
#include "ir/op_kind.h"

namespace hgc {

// Outlines groups of one graph (which must belong to a module). A group is
// its ops in graph order; only the last op's result may be used outside it.
// Each group becomes
//   %r = fusion(<external operands>) {body = @<graph>_<suffix>_<n>, kind}
// standing where the group's last op stood. Operands are the external
// values in first-use order; the body's parameters carry their names, types
// and const-ness (const when the value is const-only); literal constants of
// at most `inline_constant_elements` elements are copied into the body,
// except a matmul's operands, which stay parameters; the
// result takes the name and type of the last op. Call Outline for every
// group, then Finish once.
class Outliner {
 public:
  Outliner(Graph& graph, absl::string_view suffix,
           int64_t inline_constant_elements);

  // Copies `ops` into `body` (any graph, e.g. a scratch one for trying a
  // group out), importing external operands as Outline would and returning
  // the last op's value; appends the externals to `externals`.
  Value* FillBody(const std::vector<Op*>& ops, Graph& body,
                  std::vector<Value*>& externals);
  // Builds the group's body in the module and inserts the fusion op before
  // the group's last op; records the replacement of the group's output.
  // The fusion op carries `attrs` besides body and kind (attention's match).
  absl::Status Outline(const std::vector<Op*>& ops, FusionKind kind,
                       AttrMap attrs = {});
  // Points every remaining use at the fusion results and erases the
  // outlined ops (and literal constants nothing reads any more).
  void Finish();

 private:
  Value* Import(Value* v, Graph& body, std::vector<Value*>& externals,
                bool may_copy);

  Graph& graph_;
  Module& module_;
  std::string base_;
  int64_t inline_constant_elements_;
  ConstOnlyAnalysis consts_;
  ValueReplacer replacer_;
  std::vector<std::vector<Op*>> outlined_;
  int next_body_ = 0;
};

}  // namespace hgc

#endif  // HGC_PASSES_OUTLINER_H_
