// The value types of the `hgc` driver's flags (driver/options.cc declares
// the flags), parsed by Abseil through AbslParseFlag. A parse error is the
// driver's message with {flag} for the flag as written and {value} for the
// text given: ParseOptions (driver/options.cc) fills them in. Abseil also
// requires AbslUnparseFlag, which prints a value back (hgc shows none).
#ifndef HGC_DRIVER_FLAG_TYPES_H_
#define HGC_DRIVER_FLAG_TYPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "runtime/threading.h"

namespace hgc {

// An integer in [kMin, kMax].
template <int64_t kMin, int64_t kMax>
struct BoundedInt {
  int64_t value = 0;
};
template <int64_t kMin, int64_t kMax>
bool AbslParseFlag(absl::string_view text, BoundedInt<kMin, kMax>* n,
                   std::string* error) {
  if (absl::SimpleAtoi(text, &n->value) && n->value >= kMin &&
      n->value <= kMax) {
    return true;
  }
  *error = absl::StrCat("invalid value '{value}' for '{flag}' (expected an ",
                        "integer in [", kMin, ", ", kMax, "])");
  return false;
}
template <int64_t kMin, int64_t kMax>
std::string AbslUnparseFlag(BoundedInt<kMin, kMax> n) {
  return absl::StrCat(n.value);
}
using Seed = BoundedInt<0, INT64_MAX>;
using BenchIters = BoundedInt<1, 10000000>;

// A thread count this machine allows (support/system_limits.h).
struct ThreadCount {
  int value = 1;
};
bool AbslParseFlag(absl::string_view text, ThreadCount* threads,
                   std::string* error);
std::string AbslUnparseFlag(ThreadCount n);

// A number >= 0 (NaN refused); -1 when not given.
struct NonNegative {
  double value = -1;
};
bool AbslParseFlag(absl::string_view text, NonNegative* d, std::string* error);
std::string AbslUnparseFlag(NonNegative d);

// On when given alone or as =true / =1, off as =false / =0 or --no-NAME.
struct Switch {
  bool on = true;
};
bool AbslParseFlag(absl::string_view text, Switch* s, std::string* error);
std::string AbslUnparseFlag(Switch s);

// A string that may not be empty; kError says so.
template <const char* kError>
struct NonEmpty {
  std::string value;
};
template <const char* kError>
bool AbslParseFlag(absl::string_view text, NonEmpty<kError>* s,
                   std::string* error) {
  s->value = std::string(text);
  if (text.empty()) *error = kError;
  return !text.empty();
}
template <const char* kError>
std::string AbslUnparseFlag(const NonEmpty<kError>& s) {
  return s.value;
}
inline constexpr char kIsEmpty[] = "{flag} is empty";
inline constexpr char kNeedsCpuName[] = "{flag} needs a CPU name";
using NonEmptyText = NonEmpty<kIsEmpty>;
using CpuName = NonEmpty<kNeedsCpuName>;

// --emit=ir|loops|llvm|asm.
enum class EmitKind { kIr, kLoops, kLlvm, kAsm };
bool AbslParseFlag(absl::string_view text, EmitKind* kind, std::string* error);
std::string AbslUnparseFlag(EmitKind kind);

// --threading=pool|openmp.
struct ThreadingChoice {
  Threading value = Threading::kOwnPool;
};
bool AbslParseFlag(absl::string_view text, ThreadingChoice* choice,
                   std::string* error);
std::string AbslUnparseFlag(ThreadingChoice choice);

// NAME=FILE.npy, NAME with or without its '%'.
struct ParameterFile {
  std::string parameter, file;
};
bool AbslParseFlag(absl::string_view text, ParameterFile* input,
                   std::string* error);
std::string AbslUnparseFlag(const ParameterFile& input);

// NAME=N: the size N > 0 of an ONNX model's symbolic dimension NAME.
struct NamedSize {
  std::string name;
  int64_t size = 0;
};
bool AbslParseFlag(absl::string_view text, NamedSize* dim, std::string* error);
std::string AbslUnparseFlag(const NamedSize& dim);

// NAME=D0,D1,...: the shape of an ONNX model's input NAME, at least one
// dimension, each >= 0.
struct NamedShape {
  std::string name;
  std::vector<int64_t> dims;
};
bool AbslParseFlag(absl::string_view text, NamedShape* shape,
                   std::string* error);
std::string AbslUnparseFlag(const NamedShape& shape);

}  // namespace hgc

#endif  // HGC_DRIVER_FLAG_TYPES_H_
