#include "support/npy.h"

#include <cstring>

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

absl::StatusOr<DType> DTypeFromDescr(absl::string_view descr,
                                     absl::string_view name) {
  if (descr.size() >= 2 && descr[0] == '>' && descr.substr(1) != "i1" &&
      descr.substr(1) != "u1" && descr.substr(1) != "b1") {
    return NpyError(name, absl::StrCat("big-endian dtype '", descr,
                                       "' is not supported"));
  }
  // '<', '|' and '=' (native, little-endian on x86) all mean the same here.
  absl::string_view kind =
      descr.empty() ? descr : descr.substr(descr[0] == '<' || descr[0] == '|' ||
                                                   descr[0] == '=' || descr[0] == '>'
                                               ? 1
                                               : 0);
  if (kind == "f4") return DType::kF32;
  if (kind == "f2") return DType::kF16;
  if (kind == "i4") return DType::kS32;
  if (kind == "i1") return DType::kS8;
  if (kind == "u1") return DType::kU8;
  if (kind == "b1" || kind == "?") return DType::kBool;
  return NpyError(name, absl::StrCat("unsupported dtype '", descr,
                                     "' (supported: f4, f2, i4, i1, u1, b1)"));
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

// Copies column-major `src` into row-major `dst` of the same shape.
void FortranToRowMajor(const uint8_t* src, Tensor& dst) {
  const Shape& shape = dst.shape();
  int64_t rank = shape.size();
  int64_t elem = DTypeSize(dst.dtype());
  Shape row_strides = RowMajorStrides(shape);
  Shape index(rank, 0);
  for (int64_t f = 0; f < dst.num_elements(); ++f) {
    int64_t r = 0;
    for (int64_t d = 0; d < rank; ++d) r += index[d] * row_strides[d];
    std::memcpy(dst.mutable_raw() + r * elem, src + f * elem, elem);
    for (int64_t d = 0; d < rank; ++d) {  // column-major increment
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes,
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
  HGC_ASSIGN_OR_RETURN(DType dtype, DTypeFromDescr(header.descr, name));
  absl::StatusOr<int64_t> count = CheckedNumElements(header.shape);
  if (!count.ok()) return NpyError(name, count.status().message());
  uint64_t expected = static_cast<uint64_t>(*count) * DTypeSize(dtype);
  uint64_t actual = bytes.size() - data_start;
  if (actual != expected) {
    return NpyError(name, absl::StrCat("shape ", ShapeToString(header.shape),
                                       " needs ", expected,
                                       " bytes of data, found ", actual));
  }
  HGC_ASSIGN_OR_RETURN(Tensor tensor,
                       Tensor::Create(TensorType(dtype, header.shape)));
  const uint8_t* src = reinterpret_cast<const uint8_t*>(bytes.data()) + data_start;
  if (header.fortran_order) {
    FortranToRowMajor(src, tensor);
  } else if (expected > 0) {
    std::memcpy(tensor.mutable_raw(), src, expected);
  }
  if (dtype == DType::kBool) {
    // numpy bools are 0/1; normalize anything else rather than trust it.
    uint8_t* b = tensor.mutable_data<uint8_t>();
    for (int64_t i = 0; i < tensor.num_elements(); ++i) b[i] = b[i] != 0;
  }
  return tensor;
}

absl::StatusOr<Tensor> ReadNpy(const std::string& path) {
  HGC_ASSIGN_OR_RETURN(std::string contents,
                       ReadRegularFile(path, kMaxNpyFileSize));
  return ParseNpy(contents, path);
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

absl::StatusOr<Tensor> ConformToType(const Tensor& tensor,
                                     const TensorType& type,
                                     absl::string_view param_name) {
  bool rounds_to_bf16 =
      type.dtype == DType::kBF16 && tensor.dtype() == DType::kF32;
  if ((tensor.dtype() != type.dtype && !rounds_to_bf16) ||
      tensor.shape() != type.shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input for %", param_name, " must be ", type.ToString(),
        rounds_to_bf16 || type.dtype == DType::kBF16 ? " (as f32 values)" : "",
        ", found ", tensor.type().ToString()));
  }
  if (!rounds_to_bf16) return tensor;
  HGC_ASSIGN_OR_RETURN(Tensor out, Tensor::Create(type));
  const float* src = tensor.data<float>();
  uint16_t* dst = out.mutable_data<uint16_t>();
  for (int64_t i = 0; i < tensor.num_elements(); ++i) dst[i] = FloatToBf16(src[i]);
  return out;
}

}  // namespace hgc
