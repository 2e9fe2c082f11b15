#include "ir/attribute.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hgc {

Attribute Attribute::IntList(const std::vector<int64_t>& v) {
  List list;
  list.reserve(v.size());
  for (int64_t x : v) list.push_back(Int(x));
  return MakeList(std::move(list));
}

Attribute Attribute::FloatList(const std::vector<double>& v) {
  List list;
  list.reserve(v.size());
  for (double x : v) list.push_back(Float(x));
  return MakeList(std::move(list));
}

double Attribute::as_number() const {
  return is_int() ? static_cast<double>(as_int()) : std::get<double>(value_);
}

bool Attribute::is_int_list() const {
  if (!is_list()) return false;
  for (const Attribute& a : as_list()) {
    if (!a.is_int()) return false;
  }
  return true;
}

bool Attribute::is_number_list() const {
  if (!is_list()) return false;
  for (const Attribute& a : as_list()) {
    if (!a.is_number()) return false;
  }
  return true;
}

std::vector<int64_t> Attribute::as_int_list() const {
  std::vector<int64_t> out;
  for (const Attribute& a : as_list()) out.push_back(a.as_int());
  return out;
}

std::vector<double> Attribute::as_number_list() const {
  std::vector<double> out;
  for (const Attribute& a : as_list()) out.push_back(a.as_number());
  return out;
}

std::string FormatFloat(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

namespace {

std::string QuoteString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  out += '"';
  return out;
}

}  // namespace

std::string Attribute::ToString() const {
  if (is_int()) return absl::StrCat(as_int());
  if (is_float()) return FormatFloat(std::get<double>(value_));
  if (is_bool()) return as_bool() ? "true" : "false";
  if (is_string()) return QuoteString(as_string());
  if (is_dtype()) return std::string(DTypeName(as_dtype()));
  if (is_symbol()) return absl::StrCat("@", as_symbol());
  return absl::StrCat(
      "[",
      absl::StrJoin(as_list(), ", ",
                    [](std::string* out, const Attribute& a) {
                      out->append(a.ToString());
                    }),
      "]");
}

bool operator==(const Attribute& a, const Attribute& b) {
  // Doubles compare by bit pattern so that NaN equals itself and -0 differs
  // from +0: "same graph" means same attribute text.
  if (a.is_float() && b.is_float()) {
    double x = std::get<double>(a.value_), y = std::get<double>(b.value_);
    return (std::isnan(x) && std::isnan(y)) ||
           (x == y && std::signbit(x) == std::signbit(y));
  }
  return a.value_ == b.value_;
}

}  // namespace hgc
