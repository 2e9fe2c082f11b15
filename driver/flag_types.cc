#include "driver/flag_types.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "support/system_limits.h"

namespace hgc {
namespace {

constexpr std::pair<absl::string_view, EmitKind> kEmitKinds[] = {
    {"ir", EmitKind::kIr},
    {"loops", EmitKind::kLoops},
    {"llvm", EmitKind::kLlvm},
    {"asm", EmitKind::kAsm}};

// Splits NAME=VALUE at the last '=' (a value of digits and commas has none,
// a name might) into a non-empty name and value; false if it cannot.
bool SplitNamed(absl::string_view text, absl::string_view* name,
                absl::string_view* value) {
  const size_t sep = text.rfind('=');
  if (sep == absl::string_view::npos || sep == 0 || sep + 1 == text.size()) {
    return false;
  }
  *name = text.substr(0, sep);
  *value = text.substr(sep + 1);
  return true;
}

}  // namespace

bool AbslParseFlag(absl::string_view text, ThreadCount* threads,
                   std::string* error) {
  BoundedInt<1, kMaxThreadsEver> n;
  if (!AbslParseFlag(text, &n, error)) return false;
  if (absl::Status s = CheckNumThreads(n.value, "{flag}"); !s.ok()) {
    *error = std::string(s.message());
    return false;
  }
  threads->value = static_cast<int>(n.value);
  return true;
}
std::string AbslUnparseFlag(ThreadCount n) { return absl::StrCat(n.value); }

bool AbslParseFlag(absl::string_view text, NonNegative* d, std::string* error) {
  if (absl::SimpleAtod(text, &d->value) && d->value >= 0) return true;
  *error =
      "invalid value '{value}' for '{flag}' (expected a non-negative "
      "number)";
  return false;
}
std::string AbslUnparseFlag(NonNegative d) { return absl::StrCat(d.value); }

bool AbslParseFlag(absl::string_view text, Switch* s, std::string* error) {
  s->on = text == "true" || text == "1";
  if (s->on || text == "false" || text == "0") return true;
  *error = "invalid value '{value}' for '{flag}' (expected true or false)";
  return false;
}
std::string AbslUnparseFlag(Switch s) { return s.on ? "true" : "false"; }

bool AbslParseFlag(absl::string_view text, EmitKind* kind, std::string* error) {
  for (const auto& [name, value] : kEmitKinds) {
    if (text == name) {
      *kind = value;
      return true;
    }
  }
  *error =
      "unsupported {flag} kind '{value}' (supported: ir, loops, llvm, "
      "asm)";
  return false;
}
std::string AbslUnparseFlag(EmitKind kind) {
  for (const auto& [name, value] : kEmitKinds) {
    if (kind == value) return std::string(name);
  }
  return "";
}

bool AbslParseFlag(absl::string_view text, ThreadingChoice* choice,
                   std::string* error) {
  for (Threading threading : {Threading::kOwnPool, Threading::kOpenMP}) {
    if (text == ThreadingName(threading)) {
      choice->value = threading;
      return true;
    }
  }
  *error = "{flag} expects 'pool' or 'openmp', found '{value}'";
  return false;
}
std::string AbslUnparseFlag(ThreadingChoice choice) {
  return ThreadingName(choice.value);
}

bool AbslParseFlag(absl::string_view text, ParameterFile* input,
                   std::string* error) {
  // The first '=': a file name may hold one.
  const size_t sep = text.find('=');
  if (sep == absl::string_view::npos || sep == 0 || sep + 1 == text.size()) {
    *error = "{flag} expects NAME=FILE.npy, found '{value}'";
    return false;
  }
  input->parameter = std::string(absl::StripPrefix(text.substr(0, sep), "%"));
  input->file = std::string(text.substr(sep + 1));
  return true;
}
std::string AbslUnparseFlag(const ParameterFile& input) {
  return absl::StrCat(input.parameter, "=", input.file);
}

bool AbslParseFlag(absl::string_view text, NamedSize* dim,
                   std::string* error) {
  absl::string_view name, size;
  if (!SplitNamed(text, &name, &size) || !absl::SimpleAtoi(size, &dim->size) ||
      dim->size <= 0) {
    *error =
        "{flag} expects NAME=N with N a positive integer, found '{value}'";
    return false;
  }
  dim->name = std::string(name);
  return true;
}
std::string AbslUnparseFlag(const NamedSize& dim) {
  return absl::StrCat(dim.name, "=", dim.size);
}

bool AbslParseFlag(absl::string_view text, NamedShape* shape,
                   std::string* error) {
  absl::string_view name, dims;
  bool ok = SplitNamed(text, &name, &dims);
  std::vector<int64_t> sizes;
  for (absl::string_view d : absl::StrSplit(dims, ',')) {
    int64_t size;
    ok = ok && absl::SimpleAtoi(d, &size) && size >= 0;
    if (ok) sizes.push_back(size);
  }
  if (!ok) {
    *error =
        "{flag} expects NAME=D0,D1,... with each D a non-negative integer, "
        "found '{value}'";
    return false;
  }
  shape->name = std::string(name);
  shape->dims = std::move(sizes);
  return true;
}
std::string AbslUnparseFlag(const NamedShape& shape) {
  return absl::StrCat(shape.name, "=", absl::StrJoin(shape.dims, ","));
}

}  // namespace hgc
