#include "analysis/memory_budget.h"

#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "analysis/buffer_planning.h"
#include "analysis/const_only.h"
#include "support/diagnostics.h"
#include "support/system_limits.h"

namespace hgc {
namespace {

int64_t SaturatingAdd(int64_t a, int64_t b) {
  return a > std::numeric_limits<int64_t>::max() - b
             ? std::numeric_limits<int64_t>::max()
             : a + b;
}

// Types in a verified graph have at most 2^60 elements of at most 4 bytes:
// SizeInBytes() does not overflow.
int64_t Bytes(const Value* v) { return v->type().SizeInBytes(); }

// Bytes of the literal tables (constants written as lists) in the body of
// fusion op `op`: codegen gives each a constant slot of its own.
int64_t BodyTableBytes(const Op& op) {
  const Graph* body =
      op.kind_id() == OpKind::kFusion ? FusionBody(op) : nullptr;
  if (body == nullptr) return 0;
  int64_t bytes = 0;
  for (const auto& o : body->ops()) {
    const Attribute* value = o->FindAttr("value");
    if (o->kind_id() == OpKind::kConstant && value != nullptr &&
        value->is_list()) {
      bytes = SaturatingAdd(bytes, Bytes(o->result()));
    }
  }
  return bytes;
}

}  // namespace

int64_t MemoryEstimate::total() const {
  return SaturatingAdd(SaturatingAdd(arena_bytes, constant_bytes),
                       SaturatingAdd(param_bytes, result_bytes));
}

MemoryEstimate EstimateMemory(const Graph& graph) {
  MemoryEstimate e;
  e.arena_bytes = PlanBuffers(graph).arena_size;
  absl::flat_hash_set<const Op*> const_only = ConstOnlyOps(graph);
  for (const auto& op : graph.ops()) {
    e.constant_bytes = SaturatingAdd(e.constant_bytes, BodyTableBytes(*op));
    bool cached =
        const_only.contains(op.get()) ||
        (op->kind_id() == OpKind::kConstant && op->num_operands() == 0);
    if (!cached) continue;
    for (int i = 0; i < op->num_results(); ++i) {
      e.constant_bytes = SaturatingAdd(e.constant_bytes, Bytes(op->result(i)));
    }
  }
  for (const auto& p : graph.params()) {
    e.param_bytes = SaturatingAdd(e.param_bytes, Bytes(p.get()));
  }
  for (const Value* r : graph.results()) {
    e.result_bytes = SaturatingAdd(e.result_bytes, Bytes(r));
  }
  return e;
}

absl::Status CheckMemoryBudget(const Graph& graph, int64_t extra_bytes,
                               absl::string_view extra_what) {
  MemoryEstimate e = EstimateMemory(graph);
  int64_t total = SaturatingAdd(e.total(), extra_bytes);
  absl::Status s = CheckMemoryBudget(
      total, absl::StrCat("@", graph.name()),
      absl::StrCat(
          "arena ", FormatBytes(e.arena_bytes), ", constants ",
          FormatBytes(e.constant_bytes), ", inputs ",
          FormatBytes(e.param_bytes), ", outputs ", FormatBytes(e.result_bytes),
          extra_bytes > 0
              ? absl::StrCat(", ", extra_what, " ", FormatBytes(extra_bytes))
              : ""));
  return AttachLoc(s, graph.loc());
}

}  // namespace hgc
