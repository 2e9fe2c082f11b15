#include "tensor_util/npy.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/file_io.h"
#include "support/float16.h"
#include "support/status_macros.h"

namespace hgc {
namespace {

constexpr absl::string_view kMagic = "\x93NUMPY";

absl::Status NpyError(absl::string_view name, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(name, ": invalid .npy file: ", message));
}

absl::string_view Descr(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kBF16: return "<f4";
    case DType::kF16: return "<f2";
    case DType::kS32: return "<i4";
    case DType::kS8: return "|i1";
    case DType::kU8: return "|u1";
    case DType::kBool: return "|b1";
  }
  return "?";
}

// A numpy dtype as 'descr' spells it: kind 'f' (float), 'i' (signed),
// 'u' (unsigned) or 'b' (bool), and the width in bytes.
struct NpyDType {
  char kind = 'f';
  int width = 4;
  bool big_endian = false;
};

absl::StatusOr<NpyDType> ParseDescr(absl::string_view descr,
                                    absl::string_view name) {
  NpyDType t;
  absl::string_view rest = descr;
  // '<', '|' and '=' (native: little-endian on x86) read as they are.
  if (!rest.empty() &&
      absl::string_view("<>|=").find(rest[0]) != absl::string_view::npos) {
    t.big_endian = rest[0] == '>';
    rest.remove_prefix(1);
  }
  if (rest == "?") rest = "b1";
  const bool int_width =
      rest.size() == 2 &&
      (rest[1] == '1' || rest[1] == '2' || rest[1] == '4' || rest[1] == '8');
  const bool known = rest == "f2" || rest == "f4" || rest == "f8" ||
                     rest == "b1" ||
                     (int_width && (rest[0] == 'i' || rest[0] == 'u'));
  if (!known) {
    return NpyError(name, absl::StrCat("unsupported dtype '", descr,
                                       "' (supported: f2, f4, f8, i1, i2, "
                                       "i4, i8, u1, u2, u4, u8, b1)"));
  }
  t.kind = rest[0];
  t.width = rest[1] - '0';
  return t;
}

// The hgc dtype a numpy dtype is stored as without conversion, if any.
std::optional<DType> NativeDType(const NpyDType& t) {
  switch (t.kind) {
    case 'f':
      if (t.width == 2) return DType::kF16;
      if (t.width == 4) return DType::kF32;
      return std::nullopt;
    case 'i':
      if (t.width == 1) return DType::kS8;
      if (t.width == 4) return DType::kS32;
      return std::nullopt;
    case 'u':
      if (t.width == 1) return DType::kU8;
      return std::nullopt;
    default:
      return DType::kBool;
  }
}

// Names a numpy dtype in hgc's spelling (f64, s64, u16, ... for those hgc
// lacks).
std::string NpyDTypeName(const NpyDType& t) {
  if (std::optional<DType> d = NativeDType(t)) {
    return std::string(DTypeName(*d));
  }
  return absl::StrCat(t.kind == 'i' ? "s" : std::string(1, t.kind),
                      8 * t.width);
}

// A cursor over the header, a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  explicit HeaderParser(absl::string_view text) : text_(text) {}

  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(text_[pos_])) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool String(std::string* out) {
    SkipSpace();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
      return false;
    }
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == absl::string_view::npos) return false;
    *out = std::string(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return true;
  }
  bool Word(std::string* out) {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && absl::ascii_isalnum(text_[pos_])) ++pos_;
    *out = std::string(text_.substr(start, pos_ - start));
    return !out->empty();
  }

 private:
  absl::string_view text_;
  size_t pos_ = 0;
};

struct Header {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

absl::StatusOr<Header> ParseHeader(absl::string_view text,
                                   absl::string_view name) {
  HeaderParser p(text);
  Header header;
  bool has_descr = false, has_order = false, has_shape = false;
  if (!p.Consume('{')) return NpyError(name, "header is not a dict");
  while (!p.Consume('}')) {
    std::string key;
    if (!p.String(&key) || !p.Consume(':')) {
      return NpyError(name, "malformed header dict");
    }
    if ((key == "descr" && has_descr) || (key == "fortran_order" && has_order) ||
        (key == "shape" && has_shape)) {
      return NpyError(name, absl::StrCat("header key '", key,
                                         "' appears more than once"));
    }
    if (key == "descr") {
      if (!p.String(&header.descr)) return NpyError(name, "malformed 'descr'");
      has_descr = true;
    } else if (key == "fortran_order") {
      std::string word;
      if (!p.Word(&word) || (word != "True" && word != "False")) {
        return NpyError(name, "malformed 'fortran_order'");
      }
      header.fortran_order = word == "True";
      has_order = true;
    } else if (key == "shape") {
      if (!p.Consume('(')) return NpyError(name, "malformed 'shape'");
      while (!p.Consume(')')) {
        std::string digits;
        int64_t dim;
        if (!p.Word(&digits) || !absl::SimpleAtoi(digits, &dim) || dim < 0) {
          return NpyError(name, "malformed 'shape'");
        }
        if (header.shape.size() >= 64) {
          return NpyError(name, "'shape' has too many dimensions");
        }
        header.shape.push_back(dim);
        if (!p.Consume(',') && !p.Peek(')')) {
          return NpyError(name, "malformed 'shape'");
        }
      }
      has_shape = true;
    } else {
      return NpyError(name, absl::StrCat("unexpected header key '", key, "'"));
    }
    if (!p.Consume(',') && !p.Peek('}')) {
      return NpyError(name, "malformed header dict");
    }
  }
  if (!has_descr || !has_order || !has_shape) {
    return NpyError(name, "header lacks 'descr', 'fortran_order' or 'shape'");
  }
  return header;
}

uint32_t ReadLittleEndian(absl::string_view bytes, int width) {
  uint32_t v = 0;
  for (int i = width - 1; i >= 0; --i) {
    v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  }
  return v;
}

// Copies column-major `src` into row-major `dst`, both `shape` with
// elements of `elem` bytes.
void FortranToRowMajor(const uint8_t* src, uint8_t* dst, const Shape& shape,
                       int64_t elem) {
  const int64_t rank = shape.size();
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  Shape row_strides = RowMajorStrides(shape);
  Shape index(rank, 0);
  for (int64_t f = 0; f < count; ++f) {
    int64_t r = 0;
    for (int64_t d = 0; d < rank; ++d) r += index[d] * row_strides[d];
    std::memcpy(dst + r * elem, src + f * elem, elem);
    for (int64_t d = 0; d < rank; ++d) {  // column-major increment
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// A decoded array: row-major, little-endian elements of `dtype`, in the
// file's own bytes, or in a reordered copy when they were not in that
// order (Fortran order, big-endian).
struct NpyArray {
  NpyDType dtype;
  Shape shape;
  absl::string_view file_data;
  std::optional<std::string> reordered;
  absl::string_view data() const {
    return reordered.has_value() ? absl::string_view(*reordered) : file_data;
  }
};

absl::StatusOr<NpyArray> ParseNpyArray(absl::string_view bytes,
                                       absl::string_view name) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic) {
    return NpyError(name, "missing the \\x93NUMPY magic");
  }
  int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) {
    return NpyError(name, absl::StrCat("unsupported format version ", major,
                                       ".", static_cast<int>(bytes[7])));
  }
  int len_width = major == 1 ? 2 : 4;
  if (bytes.size() < static_cast<size_t>(8 + len_width)) {
    return NpyError(name, "truncated header");
  }
  uint64_t header_len = ReadLittleEndian(bytes.substr(8), len_width);
  uint64_t data_start = 8 + len_width + header_len;
  if (data_start > bytes.size()) return NpyError(name, "truncated header");
  HGC_ASSIGN_OR_RETURN(
      Header header,
      ParseHeader(bytes.substr(8 + len_width, header_len), name));
  NpyArray array;
  HGC_ASSIGN_OR_RETURN(array.dtype, ParseDescr(header.descr, name));
  array.shape = header.shape;
  absl::StatusOr<int64_t> count = CheckedNumElements(header.shape);
  if (!count.ok()) return NpyError(name, count.status().message());
  const int64_t width = array.dtype.width;
  if (*count > (Tensor::kDefaultMaxBytes * 2) / width) {
    return NpyError(name, absl::StrCat("shape ", ShapeToString(header.shape),
                                       " is too large"));
  }
  uint64_t expected = static_cast<uint64_t>(*count) * width;
  uint64_t actual = bytes.size() - data_start;
  if (actual != expected) {
    return NpyError(name, absl::StrCat("shape ", ShapeToString(header.shape),
                                       " needs ", expected,
                                       " bytes of data, found ", actual));
  }
  array.file_data = bytes.substr(data_start);
  if (width == 1) array.dtype.big_endian = false;  // bytes have no order
  if (!header.fortran_order && !array.dtype.big_endian) return array;
  const auto* src = reinterpret_cast<const uint8_t*>(array.file_data.data());
  array.reordered.emplace(expected, '\0');
  auto* dst = reinterpret_cast<uint8_t*>(array.reordered->data());
  if (header.fortran_order) {
    FortranToRowMajor(src, dst, header.shape, width);
  } else if (expected > 0) {
    std::memcpy(dst, src, expected);
  }
  if (array.dtype.big_endian) {
    for (uint64_t i = 0; i < expected; i += width) {
      std::reverse(dst + i, dst + i + width);
    }
  }
  array.dtype.big_endian = false;
  return array;
}

// Element i of a float array, exactly, as a double.
double FloatAt(const NpyArray& a, int64_t i) {
  const char* p = a.data().data() + i * a.dtype.width;
  if (a.dtype.width == 2) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return HalfToFloat(h);
  }
  if (a.dtype.width == 4) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  double d;
  std::memcpy(&d, p, 8);
  return d;
}

// Element i of an integer array; false when it does not fit an int64.
bool IntAt(const NpyArray& a, int64_t i, int64_t* value) {
  uint64_t bits = 0;
  std::memcpy(&bits, a.data().data() + i * a.dtype.width, a.dtype.width);
  const int shift = 64 - 8 * a.dtype.width;
  if (a.dtype.kind == 'u') {
    if (bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return false;
    }
    *value = static_cast<int64_t>(bits);
  } else {
    // Sign-extend from the element's width.
    *value = static_cast<int64_t>(bits << shift) >> shift;
  }
  return true;
}

// The values an integer dtype holds.
std::pair<int64_t, int64_t> IntRange(DType dtype) {
  switch (dtype) {
    case DType::kS8:
      return {-128, 127};
    case DType::kU8:
      return {0, 255};
    default:
      return {std::numeric_limits<int32_t>::min(),
              std::numeric_limits<int32_t>::max()};
  }
}

// Converts `a` to `type` (see ParseNpyAs). `param_name` names the
// parameter in errors.
absl::StatusOr<Tensor> ConvertArray(const NpyArray& a, const TensorType& type,
                                    absl::string_view param_name) {
  const bool float_type = type.dtype == DType::kF32 ||
                          type.dtype == DType::kBF16 ||
                          type.dtype == DType::kF16;
  const bool int_type = type.dtype == DType::kS32 || type.dtype == DType::kS8 ||
                        type.dtype == DType::kU8;
  const bool int_file = a.dtype.kind == 'i' || a.dtype.kind == 'u';
  const bool convertible = (float_type && a.dtype.kind == 'f') ||
                           (int_type && int_file) ||
                           (type.dtype == DType::kBool && a.dtype.kind == 'b');
  if (!convertible || a.shape != type.shape) {
    const char* accepts = convertible  ? ""
                          : float_type ? " (float data)"
                          : int_type   ? " (integer data)"
                                       : "";
    return absl::InvalidArgumentError(absl::StrCat(
        "input for %", param_name, " must be ", type.ToString(), accepts,
        ", found ", NpyDTypeName(a.dtype), ShapeToString(a.shape)));
  }
  HGC_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(type));
  const int64_t n = out.num_elements();
  if (NativeDType(a.dtype) == type.dtype) {
    if (n > 0) std::memcpy(out.mutable_raw(), a.data().data(), a.data().size());
    if (type.dtype == DType::kBool) {
      // numpy bools are 0/1; normalize anything else rather than trust it.
      uint8_t* b = out.mutable_data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) b[i] = b[i] != 0;
    }
    return out;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (float_type) {
      out.SetDouble(i, FloatAt(a, i));  // rounded once to the dtype
      continue;
    }
    int64_t v = 0;
    const bool fits = IntAt(a, i, &v) && v >= IntRange(type.dtype).first &&
                      v <= IntRange(type.dtype).second;
    if (!fits) {
      return absl::InvalidArgumentError(
          absl::StrCat("input for %", param_name, " must be ", type.ToString(),
                       ": element ", i, " of the ", NpyDTypeName(a.dtype),
                       " data does not fit ", DTypeName(type.dtype)));
    }
    out.SetDouble(i, static_cast<double>(v));
  }
  return out;
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes,
                                absl::string_view name) {
  HGC_ASSIGN_OR_RETURN(NpyArray array, ParseNpyArray(bytes, name));
  std::optional<DType> dtype = NativeDType(array.dtype);
  if (!dtype.has_value()) {
    return NpyError(name, absl::StrCat(NpyDTypeName(array.dtype),
                                       " data is read only as the input of "
                                       "a parameter, converted to its type"));
  }
  return ConvertArray(array, TensorType(*dtype, array.shape), name);
}

absl::StatusOr<Tensor> ParseNpyAs(absl::string_view bytes,
                                  absl::string_view name,
                                  const TensorType& type,
                                  absl::string_view param_name) {
  HGC_ASSIGN_OR_RETURN(NpyArray array, ParseNpyArray(bytes, name));
  return ConvertArray(array, type, param_name);
}

absl::StatusOr<Tensor> ReadNpy(const std::string& path) {
  HGC_ASSIGN_OR_RETURN(std::string contents,
                       ReadRegularFile(path, kMaxNpyFileSize));
  return ParseNpy(contents, path);
}

absl::StatusOr<Tensor> ReadNpyAs(const std::string& path,
                                 const TensorType& type,
                                 absl::string_view param_name) {
  HGC_ASSIGN_OR_RETURN(std::string contents,
                       ReadRegularFile(path, 2 * kMaxNpyFileSize));
  return ParseNpyAs(contents, path, type, param_name);
}

std::string SerializeNpy(const Tensor& tensor) {
  // numpy's tuple spelling: "()", "(5,)", "(2, 3)".
  std::string shape = absl::StrJoin(tensor.shape(), ", ");
  if (tensor.shape().size() == 1) shape += ",";
  std::string dict = absl::StrCat("{'descr': '", Descr(tensor.dtype()),
                                  "', 'fortran_order': False, 'shape': (",
                                  shape, "), }");
  // Pad with spaces and a newline so the data starts on a 64-byte boundary.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>((dict.size() >> 8) & 0xFF);
  out += dict;
  if (tensor.dtype() == DType::kBF16) {
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
      float f = static_cast<float>(tensor.GetDouble(i));
      out.append(reinterpret_cast<const char*>(&f), sizeof(f));
    }
  } else {
    out.append(reinterpret_cast<const char*>(tensor.raw()),
               tensor.size_in_bytes());
  }
  return out;
}

absl::Status WriteNpy(const std::string& path, const Tensor& tensor) {
  return WriteFilesAtomically({{path, SerializeNpy(tensor)}});
}

}  // namespace hgc
