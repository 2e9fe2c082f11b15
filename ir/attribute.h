// Op attributes: the `{name = value}` part of a statement.
#ifndef HGC_IR_ATTRIBUTE_H_
#define HGC_IR_ATTRIBUTE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/dtype.h"

namespace hgc {

// A reference to another graph in the module, printed `@name`.
struct SymbolRef {
  std::string name;
  friend bool operator==(const SymbolRef& a, const SymbolRef& b) {
    return a.name == b.name;
  }
};

// One attribute value. Integers and floats are kept apart so that printing
// reproduces what was written (`1` stays `1`, `1.0` stays `1.0`); accessors
// that want a number accept either.
class Attribute {
 public:
  using List = std::vector<Attribute>;

  Attribute() : value_(int64_t{0}) {}
  static Attribute Int(int64_t v) { return Attribute(v); }
  static Attribute Float(double v) { return Attribute(v); }
  static Attribute Bool(bool v) { return Attribute(v); }
  static Attribute String(std::string v) { return Attribute(std::move(v)); }
  static Attribute Type(DType v) { return Attribute(v); }
  static Attribute Symbol(std::string name) {
    return Attribute(SymbolRef{std::move(name)});
  }
  static Attribute MakeList(List v) { return Attribute(std::move(v)); }
  static Attribute IntList(const std::vector<int64_t>& v);
  static Attribute FloatList(const std::vector<double>& v);

  bool is_int() const { return std::holds_alternative<int64_t>(value_); }
  bool is_float() const { return std::holds_alternative<double>(value_); }
  bool is_number() const { return is_int() || is_float(); }
  bool is_bool() const { return std::holds_alternative<bool>(value_); }
  bool is_string() const { return std::holds_alternative<std::string>(value_); }
  bool is_dtype() const { return std::holds_alternative<DType>(value_); }
  bool is_symbol() const { return std::holds_alternative<SymbolRef>(value_); }
  bool is_list() const { return std::holds_alternative<List>(value_); }

  // Accessors; each requires the matching is_*() (as_number: is_number()).
  int64_t as_int() const { return std::get<int64_t>(value_); }
  double as_number() const;
  bool as_bool() const { return std::get<bool>(value_); }
  const std::string& as_string() const { return std::get<std::string>(value_); }
  DType as_dtype() const { return std::get<DType>(value_); }
  const std::string& as_symbol() const { return std::get<SymbolRef>(value_).name; }
  const List& as_list() const { return std::get<List>(value_); }

  // A list whose every element is an int (an empty list qualifies).
  bool is_int_list() const;
  // A list whose every element is a number.
  bool is_number_list() const;
  // Requires is_int_list() / is_number_list().
  std::vector<int64_t> as_int_list() const;
  std::vector<double> as_number_list() const;

  // The canonical `.graph` spelling; floats print in the shortest form that
  // reads back to the same double and always carry a '.' or an exponent.
  std::string ToString() const;

  friend bool operator==(const Attribute& a, const Attribute& b);
  friend bool operator!=(const Attribute& a, const Attribute& b) {
    return !(a == b);
  }

 private:
  template <typename T>
  explicit Attribute(T v) : value_(std::move(v)) {}

  std::variant<int64_t, double, bool, std::string, DType, SymbolRef, List>
      value_;
};

// Attributes by name; ordered so that printing is deterministic.
using AttrMap = std::map<std::string, Attribute, std::less<>>;

// Formats a double as design.md's FLOAT token (shortest round-trip form with
// a '.' or exponent). Infinities and NaN print as `inf`, `-inf`, `nan`, which
// the grammar cannot read back: the verifier rejects them in attributes.
std::string FormatFloat(double v);

}  // namespace hgc

#endif  // HGC_IR_ATTRIBUTE_H_
