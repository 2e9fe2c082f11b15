#include "passes/pass_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/check.h"

namespace hgc {
namespace {

// Levenshtein distance, for "did you mean" (catches "fold-constant",
// "cannonicalize").
int Distance(absl::string_view a, absl::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diag = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int up = row[j];
      row[j] = std::min(
          {row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

void PassRegistry::RegisterFactory(Factory factory) {
  std::string argument(factory()->argument());
  HGC_CHECK(factories_.find(argument) == factories_.end());
  factories_.emplace(std::move(argument), std::move(factory));
}

absl::StatusOr<std::unique_ptr<Pass>> PassRegistry::Create(
    absl::string_view argument) const {
  auto it = factories_.find(argument);
  if (it != factories_.end()) return it->second();
  std::string best;
  int best_distance = 3;
  if (argument.size() <= 64) {
    for (const auto& entry : factories_) {
      int d = Distance(argument, entry.first);
      if (d < best_distance) {
        best_distance = d;
        best = entry.first;
      }
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown pass '", argument, "'",
      best.empty() ? "" : absl::StrCat("; did you mean '", best, "'?"),
      " (see 'hgc --list-passes')"));
}

std::vector<std::string> PassRegistry::Arguments() const {
  std::vector<std::string> args;
  for (const auto& entry : factories_) args.push_back(entry.first);
  return args;
}

}  // namespace hgc
