#include "ir/op_kind.h"

#include "absl/container/flat_hash_map.h"

namespace hgc {
namespace {

constexpr OpKind kOpKinds[] = {
#define HGC_OP_KIND(e, name, cls) OpKind::e,
#include "ir/op_kinds.def"
};

constexpr absl::string_view kOpKindNames[] = {
#define HGC_OP_KIND(e, name, cls) name,
#include "ir/op_kinds.def"
};

constexpr FusionKind kFusionKinds[] = {
#define HGC_FUSION_KIND(e, name) FusionKind::e,
#include "ir/fusion_kinds.def"
};

constexpr absl::string_view kFusionKindNames[] = {
#define HGC_FUSION_KIND(e, name) name,
#include "ir/fusion_kinds.def"
};

static_assert(sizeof(kOpKinds) / sizeof(kOpKinds[0]) == kNumOpKinds);

}  // namespace

absl::Span<const OpKind> AllOpKinds() { return kOpKinds; }

absl::string_view OpKindName(OpKind kind) {
  return kind == OpKind::kUnknown ? "<unknown>"
                                  : kOpKindNames[static_cast<int>(kind)];
}

std::optional<OpKind> OpKindFromName(absl::string_view name) {
  static const auto* by_name = [] {
    auto* m = new absl::flat_hash_map<absl::string_view, OpKind>;
    for (OpKind k : kOpKinds) m->emplace(OpKindName(k), k);
    return m;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

absl::Span<const FusionKind> AllFusionKinds() { return kFusionKinds; }

absl::string_view FusionKindName(FusionKind kind) {
  return kFusionKindNames[static_cast<int>(kind)];
}

std::optional<FusionKind> FusionKindFromName(absl::string_view name) {
  for (FusionKind k : kFusionKinds) {
    if (FusionKindName(k) == name) return k;
  }
  return std::nullopt;
}

}  // namespace hgc
