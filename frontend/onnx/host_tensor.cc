#include "frontend/onnx/host_tensor.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "ir/tensor_type.h"
#include "support/file_io.h"
#include "support/float16.h"
#include "support/status_macros.h"

namespace hgc::onnx_import {
namespace {

using onnx::TensorProto;

// Bytes per element of the types hgc decodes; 0 for the others.
int64_t ElemSize(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::UINT8:
    case TensorProto::INT8:
    case TensorProto::BOOL:
      return 1;
    case TensorProto::UINT16:
    case TensorProto::INT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return 2;
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32:
      return 4;
    case TensorProto::INT64:
    case TensorProto::DOUBLE:
    case TensorProto::UINT64:
      return 8;
    default:
      return 0;
  }
}

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Element i of little-endian `raw` (x86 is little-endian too).
void StoreRawElement(const char* raw, int64_t i, HostTensor& out) {
  const char* p = raw + i * ElemSize(out.elem_type);
  switch (out.elem_type) {
    case TensorProto::FLOAT:
      out.reals[i] = Load<float>(p);
      break;
    case TensorProto::DOUBLE:
      out.reals[i] = Load<double>(p);
      break;
    case TensorProto::FLOAT16:
      out.reals[i] = HalfToFloat(Load<uint16_t>(p));
      break;
    case TensorProto::BFLOAT16:
      out.reals[i] = Bf16ToFloat(Load<uint16_t>(p));
      break;
    case TensorProto::UINT8:
      out.ints[i] = Load<uint8_t>(p);
      break;
    case TensorProto::INT8:
      out.ints[i] = Load<int8_t>(p);
      break;
    case TensorProto::BOOL:
      out.ints[i] = Load<uint8_t>(p) != 0;
      break;
    case TensorProto::UINT16:
      out.ints[i] = Load<uint16_t>(p);
      break;
    case TensorProto::INT16:
      out.ints[i] = Load<int16_t>(p);
      break;
    case TensorProto::INT32:
      out.ints[i] = Load<int32_t>(p);
      break;
    case TensorProto::UINT32:
      out.ints[i] = Load<uint32_t>(p);
      break;
    case TensorProto::INT64:
      out.ints[i] = Load<int64_t>(p);
      break;
    case TensorProto::UINT64:
      out.ints[i] = static_cast<int64_t>(Load<uint64_t>(p));
      break;
    default:
      break;
  }
}

// The number of typed values `proto` holds for its element type.
int64_t TypedCount(const TensorProto& proto) {
  switch (proto.data_type()) {
    case TensorProto::FLOAT:
      return proto.float_data_size();
    case TensorProto::DOUBLE:
      return proto.double_data_size();
    case TensorProto::INT64:
      return proto.int64_data_size();
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      return proto.uint64_data_size();
    default:
      return proto.int32_data_size();
  }
}

void StoreTypedElement(const TensorProto& proto, int64_t i, HostTensor& out) {
  switch (proto.data_type()) {
    case TensorProto::FLOAT:
      out.reals[i] = proto.float_data(i);
      break;
    case TensorProto::DOUBLE:
      out.reals[i] = proto.double_data(i);
      break;
    case TensorProto::INT64:
      out.ints[i] = proto.int64_data(i);
      break;
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      out.ints[i] = static_cast<int64_t>(proto.uint64_data(i));
      break;
    case TensorProto::FLOAT16:
      out.reals[i] = HalfToFloat(static_cast<uint16_t>(proto.int32_data(i)));
      break;
    case TensorProto::BFLOAT16:
      out.reals[i] = Bf16ToFloat(static_cast<uint16_t>(proto.int32_data(i)));
      break;
    case TensorProto::BOOL:
      out.ints[i] = proto.int32_data(i) != 0;
      break;
    default:
      out.ints[i] = proto.int32_data(i);
      break;
  }
}

// The external data entries of `proto`: location, offset, length.
absl::StatusOr<std::string> ReadExternal(const TensorProto& proto,
                                         ExternalData& external) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const onnx::StringStringEntryProto& entry : proto.external_data()) {
    auto parse = [&](int64_t& out) -> absl::Status {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(entry.value().c_str(), &end, 10);
      if (entry.value().empty() || *end != '\0' || errno != 0 || v < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("external data ", entry.key(), " '", entry.value(),
                         "' is not a non-negative integer"));
      }
      out = v;
      return absl::OkStatus();
    };
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      HGC_RETURN_IF_ERROR(parse(offset));
    } else if (entry.key() == "length") {
      HGC_RETURN_IF_ERROR(parse(length));
    }
  }
  if (location.empty()) {
    return absl::InvalidArgumentError("external data without a location");
  }
  return external.Read(location, offset, length);
}

}  // namespace

bool IsRealType(int32_t elem_type) {
  return elem_type == TensorProto::FLOAT || elem_type == TensorProto::DOUBLE ||
         elem_type == TensorProto::FLOAT16 ||
         elem_type == TensorProto::BFLOAT16;
}

bool HostTensor::is_real() const { return IsRealType(elem_type); }

int64_t HostTensor::size() const {
  return is_real() ? static_cast<int64_t>(reals.size())
                   : static_cast<int64_t>(ints.size());
}

std::optional<DType> IrDType(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DType::kF32;
    case TensorProto::FLOAT16:
      return DType::kF16;
    case TensorProto::BFLOAT16:
      return DType::kBF16;
    case TensorProto::INT32:
      return DType::kS32;
    case TensorProto::INT8:
      return DType::kS8;
    case TensorProto::UINT8:
      return DType::kU8;
    case TensorProto::BOOL:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

std::string ElemTypeName(int32_t elem_type) {
  if (!TensorProto::DataType_IsValid(elem_type)) {
    return absl::StrCat("type ", elem_type);
  }
  return TensorProto::DataType_Name(
      static_cast<TensorProto::DataType>(elem_type));
}

absl::StatusOr<std::string> ExternalData::Read(const std::string& location,
                                               int64_t offset, int64_t length) {
  namespace fs = std::filesystem;
  const std::string what = absl::StrCat("external data file '", location, "'");
  if (dir_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": the model has no directory to read external data from"));
  }
  const fs::path relative(location);
  if (relative.is_absolute()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": an absolute path is refused"));
  }
  for (const fs::path& part : relative) {
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": a path through '..' is refused"));
    }
  }
  std::error_code ec;
  const fs::path dir = fs::canonical(dir_, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": cannot resolve the model directory: ", ec.message()));
  }
  const fs::path resolved = fs::canonical(dir / relative, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", ec.message()));
  }
  // Symbolic links may point anywhere: the resolved file must still be
  // inside the model's directory.
  auto [dir_end, unused] =
      std::mismatch(dir.begin(), dir.end(), resolved.begin(), resolved.end());
  if (dir_end != dir.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": it leaves the model's directory"));
  }
  if (!fs::is_regular_file(resolved, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not a regular file"));
  }
  auto it = files_.find(resolved.string());
  if (it == files_.end()) {
    HGC_ASSIGN_OR_RETURN(std::string contents,
                         ReadRegularFile(resolved.string(), int64_t{1} << 40));
    it = files_.emplace(resolved.string(), std::move(contents)).first;
  }
  const int64_t size = static_cast<int64_t>(it->second.size());
  if (length < 0) length = offset <= size ? size - offset : 0;
  if (offset > size || length > size - offset) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " holds ", size, " bytes, fewer than offset ",
                     offset, " + length ", length));
  }
  return it->second.substr(offset, length);
}

absl::StatusOr<std::vector<int64_t>> CheckedDims(const TensorProto& proto) {
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  absl::StatusOr<int64_t> n = CheckedNumElements(dims);
  if (!n.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad dims ", ShapeToString(dims), ": ", n.status().message()));
  }
  return dims;
}

absl::Status CheckTensorData(const TensorProto& proto) {
  const int64_t elem_size = ElemSize(proto.data_type());
  if (elem_size == 0) {
    return absl::UnimplementedError(absl::StrCat(
        "element type ", ElemTypeName(proto.data_type()), " is not supported"));
  }
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, CheckedDims(proto));
  const int64_t n = *CheckedNumElements(dims);
  if (proto.data_location() == TensorProto::EXTERNAL) return absl::OkStatus();
  if (proto.has_raw_data()) {
    if (static_cast<int64_t>(proto.raw_data().size()) / elem_size != n ||
        static_cast<int64_t>(proto.raw_data().size()) % elem_size != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "holds ", proto.raw_data().size(), " bytes of data, but dims ",
          ShapeToString(dims), " of ", ElemTypeName(proto.data_type()),
          " need ", n * elem_size));
    }
  } else if (TypedCount(proto) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("holds ", TypedCount(proto), " values, but dims ",
                     ShapeToString(dims), " need ", n));
  }
  return absl::OkStatus();
}

absl::StatusOr<HostTensor> DecodeHost(const TensorProto& proto,
                                      ExternalData& external) {
  HostTensor out;
  out.elem_type = proto.data_type();
  const int64_t elem_size = ElemSize(out.elem_type);
  if (elem_size == 0) {
    return absl::UnimplementedError(absl::StrCat(
        "element type ", ElemTypeName(out.elem_type), " is not supported"));
  }
  HGC_ASSIGN_OR_RETURN(out.dims, CheckedDims(proto));
  const int64_t n = *CheckedNumElements(out.dims);
  if (n > kMaxHostElements) {
    return absl::InvalidArgumentError(
        absl::StrCat("has ", n, " elements, more than the ", kMaxHostElements,
                     " the importer computes with on the host"));
  }
  (out.is_real() ? out.reals.resize(n) : out.ints.resize(n));
  std::string external_bytes;
  const std::string* raw = nullptr;
  if (proto.data_location() == TensorProto::EXTERNAL) {
    HGC_ASSIGN_OR_RETURN(external_bytes, ReadExternal(proto, external));
    raw = &external_bytes;
  } else if (proto.has_raw_data()) {
    raw = &proto.raw_data();
  }
  if (raw != nullptr) {
    if (static_cast<int64_t>(raw->size()) != n * elem_size) {
      return absl::InvalidArgumentError(
          absl::StrCat("holds ", raw->size(), " bytes of data, but dims ",
                       ShapeToString(out.dims), " of ",
                       ElemTypeName(out.elem_type), " need ", n * elem_size));
    }
    for (int64_t i = 0; i < n; ++i) StoreRawElement(raw->data(), i, out);
    return out;
  }
  if (TypedCount(proto) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("holds ", TypedCount(proto), " values, but dims ",
                     ShapeToString(out.dims), " need ", n));
  }
  for (int64_t i = 0; i < n; ++i) StoreTypedElement(proto, i, out);
  return out;
}

absl::StatusOr<Tensor> ToTensor(const HostTensor& host, DType dtype) {
  HGC_ASSIGN_OR_RETURN(Tensor t,
                       Tensor::Create(TensorType(
                           dtype, Shape(host.dims.begin(), host.dims.end()))));
  for (int64_t i = 0; i < host.size(); ++i) t.SetDouble(i, host.GetDouble(i));
  return t;
}

absl::StatusOr<Tensor> DecodeTensor(const TensorProto& proto,
                                    ExternalData& external) {
  std::optional<DType> dtype = IrDType(proto.data_type());
  if (!dtype) {
    return absl::UnimplementedError(absl::StrCat(
        "element type ", ElemTypeName(proto.data_type()), " has no hgc dtype"));
  }
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, CheckedDims(proto));
  const int64_t n = *CheckedNumElements(dims);
  // f32 weights, the common case, are copied as they are, at any size.
  const bool external_data = proto.data_location() == TensorProto::EXTERNAL;
  if (*dtype == DType::kF32 && (external_data || proto.has_raw_data())) {
    std::string external_bytes;
    if (external_data) {
      HGC_ASSIGN_OR_RETURN(external_bytes, ReadExternal(proto, external));
    }
    const std::string& raw = external_data ? external_bytes : proto.raw_data();
    if (static_cast<int64_t>(raw.size()) != n * 4) {
      return absl::InvalidArgumentError(
          absl::StrCat("holds ", raw.size(), " bytes of data, but dims ",
                       ShapeToString(dims), " of FLOAT need ", n * 4));
    }
    HGC_ASSIGN_OR_RETURN(
        Tensor t, Tensor::Create(TensorType(DType::kF32,
                                            Shape(dims.begin(), dims.end()))));
    if (n > 0) std::memcpy(t.mutable_raw(), raw.data(), raw.size());
    return t;
  }
  HGC_ASSIGN_OR_RETURN(HostTensor host, DecodeHost(proto, external));
  return ToTensor(host, *dtype);
}

}  // namespace hgc::onnx_import
