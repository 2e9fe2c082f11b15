#include "frontend/onnx/import_context.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "frontend/onnx/onnx_import.h"
#include "support/status_macros.h"

namespace hgc::onnx_import {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

int32_t OnnxElemType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return TensorProto::FLOAT;
    case DType::kBF16:
      return TensorProto::BFLOAT16;
    case DType::kF16:
      return TensorProto::FLOAT16;
    case DType::kS32:
      return TensorProto::INT32;
    case DType::kS8:
      return TensorProto::INT8;
    case DType::kU8:
      return TensorProto::UINT8;
    case DType::kBool:
      return TensorProto::BOOL;
  }
  return TensorProto::UNDEFINED;
}

absl::Status NoIrDType(const std::string& name, int32_t elem_type) {
  if (elem_type == TensorProto::INT64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tensor '", name,
        "' is INT64 and is needed at run time: hgc has no "
        "64-bit integer dtype, and only int64 shape chains that fold at "
        "import are supported"));
  }
  return absl::UnimplementedError(
      absl::StrCat("tensor '", name, "' has element type ",
                   ElemTypeName(elem_type), ", which hgc has no dtype for"));
}

}  // namespace

std::string ImportContext::UniqueName(const std::string& onnx_name) {
  const std::string base = SanitizeOnnxName(onnx_name);
  std::string name = base;
  for (int i = 1; used_names_.contains(name); ++i) {
    name = absl::StrCat(base, "_", i);
  }
  used_names_.insert(name);
  return name;
}

void ImportContext::DefineValue(const std::string& name, Value* value) {
  if (value->name().empty() && !value->is_param()) {
    value->set_name(UniqueName(name));
  }
  entries_[name] = Entry{nullptr, std::nullopt, value};
}

void ImportContext::DefineHost(const std::string& name, HostTensor host) {
  entries_[name] = Entry{nullptr, std::move(host), nullptr};
}

void ImportContext::DefineInitializer(const std::string& name,
                                      const TensorProto* proto) {
  entries_[name] = Entry{proto, std::nullopt, nullptr};
}

bool ImportContext::IsHostKnown(const std::string& name) const {
  auto it = entries_.find(name);
  return it != entries_.end() &&
         (it->second.host.has_value() || it->second.initializer != nullptr);
}

absl::StatusOr<const HostTensor*> ImportContext::Host(const std::string& name) {
  auto it = entries_.find(name);
  if (it == entries_.end() ||
      (!it->second.host && it->second.initializer == nullptr)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", name,
        "' must be known at import time (an initializer, a "
        "Constant, or a shape chain that folds), but it is computed at run "
        "time"));
  }
  Entry& entry = it->second;
  if (!entry.host) {
    absl::StatusOr<HostTensor> host =
        DecodeHost(*entry.initializer, *external_);
    if (!host.ok()) {
      return absl::Status(
          host.status().code(),
          absl::StrCat("initializer '", name, "' ", host.status().message()));
    }
    entry.host = std::move(*host);
  }
  return &*entry.host;
}

absl::StatusOr<Value*> ImportContext::Ir(const std::string& name) {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", name,
                     "' is not a graph input, an initializer or the output of "
                     "an earlier node"));
  }
  if (it->second.value != nullptr) return it->second.value;
  return Materialize(name, it->second);
}

absl::StatusOr<Value*> ImportContext::Materialize(const std::string& name,
                                                  Entry& entry) {
  const int32_t elem_type =
      entry.host ? entry.host->elem_type : entry.initializer->data_type();
  std::optional<DType> dtype = IrDType(elem_type);
  if (!dtype) return NoIrDType(name, elem_type);
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ShapeOf(name));
  const TensorType type(*dtype, Shape(dims.begin(), dims.end()));
  // One element: a literal `constant` op, so that passes see the value (a
  // 1/sqrt(d) scale). Infinities and NaN have no literal spelling.
  if (type.NumElements() == 1) {
    HGC_ASSIGN_OR_RETURN(const HostTensor* host, Host(name));
    const double v = host->GetDouble(0);
    if (std::isfinite(v)) {
      Attribute value =
          host->is_real() ? Attribute::Float(v) : Attribute::Int(host->ints[0]);
      HGC_ASSIGN_OR_RETURN(
          entry.value,
          builder_.Create("constant", {}, {{"value", value}}, {type}));
      return entry.value;
    }
  }
  Tensor tensor;
  if (entry.host) {
    HGC_ASSIGN_OR_RETURN(tensor, ToTensor(*entry.host, *dtype));
  } else {
    absl::StatusOr<Tensor> decoded =
        DecodeTensor(*entry.initializer, *external_);
    if (!decoded.ok()) {
      return absl::Status(decoded.status().code(),
                          absl::StrCat("initializer '", name, "' ",
                                       decoded.status().message()));
    }
    tensor = std::move(*decoded);
  }
  const std::string param_name = UniqueName(name);
  entry.value = graph_->AddParam(param_name, type, /*is_const=*/true);
  constants_[param_name] = std::move(tensor);
  return entry.value;
}

absl::StatusOr<std::vector<int64_t>> ImportContext::ShapeOf(
    const std::string& name) {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", name, "' is not defined"));
  }
  const Entry& entry = it->second;
  if (entry.value != nullptr) {
    const Shape& s = entry.value->type().shape;
    return std::vector<int64_t>(s.begin(), s.end());
  }
  if (entry.host) return entry.host->dims;
  absl::StatusOr<std::vector<int64_t>> dims = CheckedDims(*entry.initializer);
  if (!dims.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("initializer '", name, "' has ", dims.status().message()));
  }
  return dims;
}

absl::StatusOr<int32_t> ImportContext::ElemTypeOf(const std::string& name) {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", name, "' is not defined"));
  }
  const Entry& entry = it->second;
  if (entry.value != nullptr) return OnnxElemType(entry.value->type().dtype);
  if (entry.host) return entry.host->elem_type;
  return entry.initializer->data_type();
}

// NodeContext.

absl::StatusOr<Value*> NodeContext::Ir(int i) {
  if (!has_input(i)) {
    return absl::InvalidArgumentError(
        absl::StrCat("input #", i, " is required"));
  }
  return ctx_.Ir(node_.input(i));
}

absl::StatusOr<const HostTensor*> NodeContext::Host(int i) {
  if (!has_input(i)) {
    return absl::InvalidArgumentError(
        absl::StrCat("input #", i, " is required"));
  }
  absl::StatusOr<const HostTensor*> host = ctx_.Host(node_.input(i));
  if (!host.ok()) {
    return absl::Status(
        host.status().code(),
        absl::StrCat("input #", i, " ", host.status().message()));
  }
  return host;
}

absl::StatusOr<std::vector<int64_t>> NodeContext::ShapeOf(int i) {
  if (!has_input(i)) {
    return absl::InvalidArgumentError(
        absl::StrCat("input #", i, " is required"));
  }
  return ctx_.ShapeOf(node_.input(i));
}

absl::StatusOr<int32_t> NodeContext::ElemTypeOf(int i) {
  if (!has_input(i)) {
    return absl::InvalidArgumentError(
        absl::StrCat("input #", i, " is required"));
  }
  return ctx_.ElemTypeOf(node_.input(i));
}

const AttributeProto* NodeContext::Attr(const std::string& name) const {
  for (const AttributeProto& attr : node_.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

namespace {
absl::Status WrongType(const AttributeProto& attr, absl::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat("attribute '", attr.name(), "' must be ", want, ", found ",
                   AttributeProto::AttributeType_Name(attr.type())));
}
}  // namespace

absl::StatusOr<int64_t> NodeContext::IntAttr(const std::string& name,
                                             int64_t default_value) const {
  const AttributeProto* attr = Attr(name);
  if (attr == nullptr) return default_value;
  if (attr->type() != AttributeProto::INT) return WrongType(*attr, "INT");
  return attr->i();
}

absl::StatusOr<float> NodeContext::FloatAttr(const std::string& name,
                                             float default_value) const {
  const AttributeProto* attr = Attr(name);
  if (attr == nullptr) return default_value;
  if (attr->type() != AttributeProto::FLOAT) return WrongType(*attr, "FLOAT");
  return attr->f();
}

absl::StatusOr<std::string> NodeContext::StringAttr(
    const std::string& name, std::string default_value) const {
  const AttributeProto* attr = Attr(name);
  if (attr == nullptr) return default_value;
  if (attr->type() != AttributeProto::STRING) {
    return WrongType(*attr, "STRING");
  }
  return attr->s();
}

absl::StatusOr<std::optional<std::vector<int64_t>>> NodeContext::IntsAttr(
    const std::string& name) const {
  const AttributeProto* attr = Attr(name);
  if (attr == nullptr) return std::optional<std::vector<int64_t>>();
  if (attr->type() != AttributeProto::INTS) return WrongType(*attr, "INTS");
  return std::optional<std::vector<int64_t>>(
      std::vector<int64_t>(attr->ints().begin(), attr->ints().end()));
}

void NodeContext::SetOutput(int i, Value* value) {
  if (output_used(i)) ctx_.DefineValue(node_.output(i), value);
}

void NodeContext::SetOutputHost(int i, HostTensor host) {
  if (output_used(i)) ctx_.DefineHost(node_.output(i), std::move(host));
}

absl::StatusOr<Value*> NodeContext::Scalar(double value, DType dtype) {
  const bool is_float =
      dtype == DType::kF32 || dtype == DType::kBF16 || dtype == DType::kF16;
  Attribute attr = is_float ? Attribute::Float(value)
                            : Attribute::Int(static_cast<int64_t>(value));
  return Create("constant", {}, {{"value", attr}}, {TensorType(dtype)});
}

absl::StatusOr<Value*> NodeContext::Reshape(Value* x,
                                            const std::vector<int64_t>& shape) {
  if (std::vector<int64_t>(x->type().shape.begin(), x->type().shape.end()) ==
      shape) {
    return x;
  }
  return Create("reshape", {x}, {{"shape", Attribute::IntList(shape)}});
}

}  // namespace hgc::onnx_import
