#include "analysis/buffer_planning.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/const_only.h"

namespace hgc {
namespace {

int64_t AlignUp(int64_t n) {
  return (n + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

bool Overlap(const BufferPlan::Buffer& a, const BufferPlan::Buffer& b) {
  return a.first <= b.last && b.first <= a.last;
}

std::string Label(const Value* v) {
  return v->name().empty() ? std::string("<unnamed>")
                           : absl::StrCat("%", v->name());
}

}  // namespace

BufferPlan PlanBuffers(const Graph& graph) {
  BufferPlan plan;
  ConstOnlyAnalysis consts(graph);
  absl::flat_hash_map<const Value*, int64_t> last_use;
  int64_t position = 0;
  for (const auto& op : graph.ops()) {
    for (const Value* v : op->operands()) last_use[v] = position;
    ++position;
  }
  std::vector<const Value*> values;
  absl::flat_hash_map<const Value*, bool> returned;
  for (const Value* v : graph.results()) returned[v] = true;
  position = 0;
  for (const auto& op : graph.ops()) {
    int64_t here = position++;
    if (op->kind_id() == OpKind::kConstant || consts.IsConstOnly(op.get())) {
      continue;
    }
    for (int i = 0; i < op->num_results(); ++i) {
      const Value* v = op->result(i);
      if (returned.contains(v)) continue;
      auto it = last_use.find(v);
      BufferPlan::Buffer b;
      b.size = AlignUp(v->type().SizeInBytes());
      b.first = here;
      b.last = it == last_use.end() ? here : it->second;
      plan.buffers[v] = b;
      plan.sum_of_intermediates += b.size;
      values.push_back(v);
    }
  }
  // Largest first; ties in definition order, so the plan is deterministic.
  std::stable_sort(values.begin(), values.end(),
                   [&](const Value* a, const Value* b) {
                     return plan.buffers[a].size > plan.buffers[b].size;
                   });
  std::vector<const Value*> placed;
  for (const Value* v : values) {
    const BufferPlan::Buffer& buf = plan.buffers[v];
    std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end)
    for (const Value* p : placed) {
      if (Overlap(buf, plan.buffers[p])) {
        int64_t off = plan.offsets[p];
        busy.push_back({off, off + plan.buffers[p].size});
      }
    }
    std::sort(busy.begin(), busy.end());
    int64_t best = -1;
    int64_t best_gap = std::numeric_limits<int64_t>::max();
    int64_t end = 0;
    for (const auto& [off, stop] : busy) {
      int64_t gap = off - end;
      if (gap >= buf.size && gap < best_gap) {
        best = end;
        best_gap = gap;
      }
      end = std::max(end, stop);
    }
    if (best < 0) best = end;
    plan.offsets[v] = best;
    plan.arena_size = std::max(plan.arena_size, best + buf.size);
    placed.push_back(v);
  }
  return plan;
}

absl::Status ValidateBufferPlan(const BufferPlan& plan) {
  std::vector<const Value*> values;
  for (const auto& entry : plan.buffers) values.push_back(entry.first);
  for (const Value* v : values) {
    auto it = plan.offsets.find(v);
    if (it == plan.offsets.end()) {
      return absl::InternalError(absl::StrCat(Label(v), " has no offset"));
    }
    int64_t off = it->second;
    if (off % kBufferAlignment != 0 || off < 0 ||
        off + plan.buffers.at(v).size > plan.arena_size) {
      return absl::InternalError(
          absl::StrCat(Label(v), " at offset ", off, " is misplaced"));
    }
  }
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = i + 1; j < values.size(); ++j) {
      const auto& a = plan.buffers.at(values[i]);
      const auto& b = plan.buffers.at(values[j]);
      int64_t oa = plan.offsets.at(values[i]);
      int64_t ob = plan.offsets.at(values[j]);
      if (Overlap(a, b) && oa < ob + b.size && ob < oa + a.size) {
        return absl::InternalError(
            absl::StrCat(Label(values[i]), " and ", Label(values[j]),
                         " are live together and share memory"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace hgc
