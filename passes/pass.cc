#include "passes/pass.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hgc {

absl::Status Pass::SetOption(absl::string_view key, absl::string_view value) {
  return UnknownPassOption(*this, key);
}

absl::Status UnknownPassOption(const Pass& pass, absl::string_view key) {
  std::vector<std::string> known;
  for (const PassOptionInfo& o : pass.options()) known.push_back(o.name);
  return absl::InvalidArgumentError(absl::StrCat(
      "pass '", pass.argument(), "' has no option '", key, "'",
      known.empty()
          ? " (it takes none)"
          : absl::StrCat(" (options: ", absl::StrJoin(known, ", "), ")")));
}

absl::StatusOr<bool> ParseBoolOption(const Pass& pass, absl::string_view key,
                                     absl::string_view value) {
  if (value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  return absl::InvalidArgumentError(
      absl::StrCat("option '", key, "' of pass '", pass.argument(),
                   "' must be true or false, found '", value, "'"));
}

absl::StatusOr<int64_t> ParseIntOption(const Pass& pass, absl::string_view key,
                                       absl::string_view value, int64_t min,
                                       int64_t max) {
  int64_t n;
  if (!absl::SimpleAtoi(value, &n) || n < min || n > max) {
    return absl::InvalidArgumentError(absl::StrCat(
        "option '", key, "' of pass '", pass.argument(),
        "' must be an integer in [", min, ", ", max, "], found '", value, "'"));
  }
  return n;
}

}  // namespace hgc
