#include "ir/printer.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/op_registry.h"

namespace hgc {
namespace {

// Assigns each value its printed name: its own when it has one, otherwise the
// next free number.
class Namer {
 public:
  explicit Namer(const Graph& graph) {
    for (const auto& p : graph.params()) used_.insert(p->name());
    for (const auto& op : graph.ops()) {
      for (int i = 0; i < op->num_results(); ++i) {
        used_.insert(op->result(i)->name());
      }
    }
  }

  std::string Name(const Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string name = v->name();
    if (name.empty()) {
      do {
        name = absl::StrCat(next_++);
      } while (used_.contains(name));
      used_.insert(name);
    }
    names_[v] = absl::StrCat("%", name);
    return names_[v];
  }

 private:
  absl::flat_hash_set<std::string> used_;
  absl::flat_hash_map<const Value*, std::string> names_;
  int64_t next_ = 0;
};

std::string PrintAttrs(const Op& op) {
  const OpInfo* info = OpRegistry::Get().Find(op.kind_id());
  std::vector<std::string> parts;
  for (const auto& [name, value] : op.attrs()) {
    const AttrSpec* spec = info ? info->FindAttr(name) : nullptr;
    if (spec && spec->default_value && *spec->default_value == value) continue;
    parts.push_back(absl::StrCat(name, " = ", value.ToString()));
  }
  if (parts.empty()) return "";
  return absl::StrCat(" {", absl::StrJoin(parts, ", "), "}");
}

std::string TypeList(const std::vector<TensorType>& types) {
  return absl::StrJoin(types, ", ", [](std::string* out, const TensorType& t) {
    out->append(t.ToString());
  });
}

}  // namespace

std::string PrintGraph(const Graph& graph) {
  Namer namer(graph);
  std::string out = absl::StrCat("graph @", graph.name(), "(");
  for (int i = 0; i < graph.num_params(); ++i) {
    const Value* p = graph.param(i);
    absl::StrAppend(&out, i ? ", " : "", namer.Name(p), ": ",
                    p->type().ToString(), p->is_const() ? " const" : "");
  }
  const std::vector<TensorType>& results = graph.declared_result_types();
  absl::StrAppend(&out, ") -> ",
                  results.size() == 1
                      ? results[0].ToString()
                      : absl::StrCat("(", TypeList(results), ")"),
                  " {\n");
  for (const auto& op : graph.ops()) {
    std::vector<std::string> defs, uses;
    std::vector<TensorType> types;
    for (int i = 0; i < op->num_results(); ++i) {
      defs.push_back(namer.Name(op->result(i)));
      types.push_back(op->result(i)->type());
    }
    for (const Value* v : op->operands()) uses.push_back(namer.Name(v));
    absl::StrAppend(&out, "  ", absl::StrJoin(defs, ", "), " = ", op->kind(),
                    "(", absl::StrJoin(uses, ", "), ")", PrintAttrs(*op),
                    " : ", TypeList(types), "\n");
  }
  std::vector<std::string> returned;
  for (const Value* v : graph.results()) returned.push_back(namer.Name(v));
  absl::StrAppend(&out, "  return ", absl::StrJoin(returned, ", "), "\n}\n");
  return out;
}

std::string PrintModule(const Module& module) {
  std::string out;
  for (size_t i = 0; i < module.graphs().size(); ++i) {
    if (i) out += "\n";
    out += PrintGraph(*module.graphs()[i]);
  }
  return out;
}

}  // namespace hgc
