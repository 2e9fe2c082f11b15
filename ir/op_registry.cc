#include "ir/op_registry.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/check.h"

namespace hgc {

const Attribute* InferContext::Find(absl::string_view name) const {
  auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

int64_t InferContext::GetInt(absl::string_view name,
                             int64_t default_value) const {
  const Attribute* a = Find(name);
  return a ? a->as_int() : default_value;
}

double InferContext::GetFloat(absl::string_view name,
                              double default_value) const {
  const Attribute* a = Find(name);
  return a ? a->as_number() : default_value;
}

bool InferContext::GetBool(absl::string_view name, bool default_value) const {
  const Attribute* a = Find(name);
  return a ? a->as_bool() : default_value;
}

const AttrSpec* OpInfo::FindAttr(absl::string_view attr_name) const {
  for (const AttrSpec& spec : attrs) {
    if (spec.name == attr_name) return &spec;
  }
  return nullptr;
}

const OpRegistry& OpRegistry::Get() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry;
    RegisterElementwiseOps(*r);
    RegisterMatmulOps(*r);
    RegisterNormalizationOps(*r);
    RegisterShapeOps(*r);
    RegisterConcatSliceOps(*r);
    RegisterQuantOps(*r);
    RegisterFusionOps(*r);
    return r;
  }();
  return *registry;
}

const OpInfo* OpRegistry::Find(OpKind kind) const {
  if (kind == OpKind::kUnknown) return nullptr;
  return ops_[static_cast<int>(kind)].get();
}

const OpInfo* OpRegistry::Find(absl::string_view name) const {
  std::optional<OpKind> kind = OpKindFromName(name);
  return kind.has_value() ? Find(*kind) : nullptr;
}

std::vector<std::string> OpRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& info : ops_) {
    if (info != nullptr) names.push_back(info->name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

void OpRegistry::Register(OpInfo info) {
  // The registrations in ir/ops/ name kinds of ir/op_kinds.def, once each.
  std::optional<OpKind> kind = OpKindFromName(info.name);
  HGC_CHECK(kind.has_value());
  std::unique_ptr<OpInfo>& slot = ops_[static_cast<int>(*kind)];
  HGC_CHECK(slot == nullptr);
  info.kind = *kind;
  slot = std::make_unique<OpInfo>(std::move(info));
}

namespace {

absl::string_view KindDescription(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "an integer";
    case AttrKind::kFloat: return "a number";
    case AttrKind::kBool: return "true or false";
    case AttrKind::kString: return "a string";
    case AttrKind::kDType: return "a dtype";
    case AttrKind::kIntList: return "a list of integers";
    case AttrKind::kNumberOrList: return "a number or a list of numbers";
    case AttrKind::kLiteral: return "a number, a bool, or a list of them";
    case AttrKind::kSymbol: return "a graph reference";
  }
  return "?";
}

bool MatchesKind(const Attribute& a, AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return a.is_int();
    case AttrKind::kFloat: return a.is_number();
    case AttrKind::kBool: return a.is_bool();
    case AttrKind::kString: return a.is_string();
    case AttrKind::kDType: return a.is_dtype();
    case AttrKind::kIntList: return a.is_int_list();
    case AttrKind::kNumberOrList: return a.is_number() || a.is_number_list();
    case AttrKind::kLiteral: {
      auto scalar = [](const Attribute& x) {
        return x.is_number() || x.is_bool();
      };
      if (scalar(a)) return true;
      if (!a.is_list()) return false;
      return std::all_of(a.as_list().begin(), a.as_list().end(), scalar);
    }
    case AttrKind::kSymbol: return a.is_symbol();
  }
  return false;
}

bool AllFinite(const Attribute& a) {
  if (a.is_float()) return std::isfinite(a.as_number());
  if (a.is_list()) {
    return std::all_of(a.as_list().begin(), a.as_list().end(), AllFinite);
  }
  return true;
}

int EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diag = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

absl::Status ValidateAttrs(const OpInfo& info, const AttrMap& attrs) {
  for (const auto& [name, value] : attrs) {
    const AttrSpec* spec = info.FindAttr(name);
    if (spec == nullptr) {
      std::vector<std::string> known;
      for (const AttrSpec& s : info.attrs) known.push_back(s.name);
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown attribute '", name, "' for op '", info.name, "'",
          known.empty() ? " (it takes none)"
                        : absl::StrCat(" (expected one of: ",
                                       absl::StrJoin(known, ", "), ")")));
    }
    if (!MatchesKind(value, spec->kind)) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute '", name, "' of '", info.name, "' must be ",
                       KindDescription(spec->kind), ", found ",
                       value.ToString()));
    }
    if (!spec->non_finite && !AllFinite(value)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "attribute '", name, "' of '", info.name, "' must be finite"));
    }
  }
  for (const AttrSpec& spec : info.attrs) {
    if (spec.required && attrs.find(spec.name) == attrs.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op '", info.name, "' requires attribute '", spec.name, "'"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorType>> InferResultTypes(
    absl::string_view kind, absl::Span<const TensorType> operands,
    const AttrMap& attrs, absl::Span<const TensorType> declared_results) {
  const OpInfo* info = OpRegistry::Get().Find(kind);
  if (info == nullptr) {
    std::string suggestion = SuggestOpName(kind);
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown op '", kind, "'",
        suggestion.empty() ? "" : absl::StrCat("; did you mean '", suggestion,
                                               "'?")));
  }
  int n = static_cast<int>(operands.size());
  if (n < info->min_operands || n > info->max_operands) {
    std::string expected =
        info->min_operands == info->max_operands
            ? absl::StrCat(info->min_operands)
            : absl::StrCat(info->min_operands, " to ", info->max_operands);
    return absl::InvalidArgumentError(
        absl::StrCat("op '", kind, "' takes ", expected, " operand",
                     info->max_operands == 1 ? "" : "s", ", found ", n));
  }
  absl::Status attr_status = ValidateAttrs(*info, attrs);
  if (!attr_status.ok()) return attr_status;
  absl::StatusOr<std::vector<TensorType>> inferred =
      info->infer(InferContext(operands, attrs, declared_results));
  if (!inferred.ok()) return inferred.status();
  for (const TensorType& t : *inferred) {
    absl::StatusOr<int64_t> count = CheckedNumElements(t.shape);
    if (!count.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("result of '", kind, "': ", count.status().message()));
    }
  }
  if (!declared_results.empty()) {
    if (declared_results.size() != inferred->size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("op '", kind, "' has ", inferred->size(),
                       " result(s), but ", declared_results.size(),
                       " type(s) are written"));
    }
    for (size_t i = 0; i < inferred->size(); ++i) {
      if (declared_results[i] != (*inferred)[i]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "result type ", declared_results[i].ToString(), " of '", kind,
            "' does not match the inferred type ",
            (*inferred)[i].ToString()));
      }
    }
  }
  return inferred;
}

std::string SuggestOpName(absl::string_view unknown) {
  // Long garbage identifiers are never close to an op name; skip the work.
  if (unknown.size() > 32) return "";
  std::string best;
  int best_distance = 3;
  for (const std::string& name : OpRegistry::Get().Names()) {
    int d = EditDistance(unknown, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  return best;
}

absl::StatusOr<Shape> BroadcastShapes(absl::string_view op,
                                      absl::Span<const int64_t> a,
                                      absl::Span<const int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", op, "': shapes ", ShapeToString(a), " and ", ShapeToString(b),
          " do not broadcast (dimension ", i, ": ", da, " vs ", db, ")"));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace hgc
