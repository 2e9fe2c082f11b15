// Converters of MatMul, Gemm, Softmax, LayerNormalization, the reductions
// and QuantizeLinear / DequantizeLinear.
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "frontend/onnx/host_ops.h"
#include "frontend/onnx/import_context.h"
#include "support/status_macros.h"

namespace hgc::onnx_import {
namespace {

using onnx::TensorProto;

std::vector<int64_t> Dims(const Value* v) {
  return std::vector<int64_t>(v->type().shape.begin(), v->type().shape.end());
}

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

absl::StatusOr<int64_t> Normalize(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace

absl::Status ConvertMatMul(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(Value * a, n.Ir(0));
  HGC_ASSIGN_OR_RETURN(Value * b, n.Ir(1));
  std::vector<int64_t> da = Dims(a), db = Dims(b);
  if (da.empty() || db.empty()) {
    return absl::InvalidArgumentError("MatMul of a scalar");
  }
  // numpy: a 1-D operand is a row (a) or column (b) vector whose dim is
  // dropped from the result.
  if (da.size() == 1) {
    HGC_ASSIGN_OR_RETURN(a, n.Reshape(a, {1, da[0]}));
  }
  if (db.size() == 1) {
    HGC_ASSIGN_OR_RETURN(b, n.Reshape(b, {db[0], 1}));
  }
  HGC_ASSIGN_OR_RETURN(Value * out, n.Create("matmul", {a, b}));
  std::vector<int64_t> result = Dims(out);
  if (db.size() == 1) result.erase(result.end() - 1);
  if (da.size() == 1) result.erase(result.end() - (db.size() == 1 ? 1 : 2));
  HGC_ASSIGN_OR_RETURN(out, n.Reshape(out, result));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

absl::Status ConvertGemm(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(Value * a, n.Ir(0));
  HGC_ASSIGN_OR_RETURN(Value * b, n.Ir(1));
  HGC_ASSIGN_OR_RETURN(int64_t trans_a, n.IntAttr("transA", 0));
  HGC_ASSIGN_OR_RETURN(int64_t trans_b, n.IntAttr("transB", 0));
  HGC_ASSIGN_OR_RETURN(float alpha, n.FloatAttr("alpha", 1.0f));
  HGC_ASSIGN_OR_RETURN(float beta, n.FloatAttr("beta", 1.0f));
  if (a->type().rank() != 2 || b->type().rank() != 2) {
    return absl::InvalidArgumentError("Gemm's A and B must be 2-D");
  }
  AttrMap attrs;
  if (trans_a) attrs["transpose_a"] = Attribute::Bool(true);
  if (trans_b) attrs["transpose_b"] = Attribute::Bool(true);
  HGC_ASSIGN_OR_RETURN(Value * y, n.Create("matmul", {a, b}, attrs));
  const DType dtype = y->type().dtype;
  if (alpha != 1.0f) {
    HGC_ASSIGN_OR_RETURN(Value * s, n.Scalar(alpha, dtype));
    HGC_ASSIGN_OR_RETURN(y, n.Create("mul", {y, s}));
  }
  if (n.has_input(2) && beta != 0.0f) {
    HGC_ASSIGN_OR_RETURN(Value * c, n.Ir(2));
    if (beta != 1.0f) {
      HGC_ASSIGN_OR_RETURN(Value * s, n.Scalar(beta, dtype));
      HGC_ASSIGN_OR_RETURN(c, n.Create("mul", {c, s}));
    }
    HGC_ASSIGN_OR_RETURN(y, n.Create("add", {y, c}));
  }
  n.SetOutput(0, y);
  return absl::OkStatus();
}

absl::Status ConvertSoftmax(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  const std::vector<int64_t> dims = Dims(x);
  const int64_t rank = static_cast<int64_t>(dims.size());
  HGC_ASSIGN_OR_RETURN(int64_t axis,
                       n.IntAttr("axis", n.opset() < 13 ? 1 : -1));
  HGC_ASSIGN_OR_RETURN(axis, Normalize(axis, rank));
  AttrMap last{{"axis", Attribute::Int(-1)}};
  Value* out = nullptr;
  if (n.opset() >= 13 || axis == rank - 1) {
    HGC_ASSIGN_OR_RETURN(
        out, n.Create("softmax", {x}, {{"axis", Attribute::Int(axis)}}));
  } else {
    // Before opset 13, Softmax works on x coerced to 2-D at `axis`.
    HGC_ASSIGN_OR_RETURN(Value * flat,
                         n.Reshape(x, {Product(dims, 0, axis),
                                       Product(dims, axis, dims.size())}));
    HGC_ASSIGN_OR_RETURN(Value * s, n.Create("softmax", {flat}, last));
    HGC_ASSIGN_OR_RETURN(out, n.Reshape(s, dims));
  }
  n.SetOutput(0, out);
  return absl::OkStatus();
}

absl::Status ConvertLayerNormalization(NodeContext& n) {
  if (n.output_used(1) || n.output_used(2)) {
    return absl::UnimplementedError(
        "LayerNormalization's Mean and InvStdDev outputs are not supported");
  }
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  const std::vector<int64_t> dims = Dims(x);
  HGC_ASSIGN_OR_RETURN(int64_t axis, n.IntAttr("axis", -1));
  HGC_ASSIGN_OR_RETURN(axis, Normalize(axis, dims.size()));
  HGC_ASSIGN_OR_RETURN(float epsilon, n.FloatAttr("epsilon", 1e-5f));
  const std::vector<int64_t> norm(dims.begin() + axis, dims.end());
  const int64_t count = Product(norm, 0, norm.size());
  // Scale and bias broadcast to x.shape[axis:]; hgc's layernorm takes
  // them at exactly that shape.
  auto conform = [&](Value* v, const char* what) -> absl::StatusOr<Value*> {
    if (v->type().NumElements() != count) {
      return absl::UnimplementedError(absl::StrCat(
          what, " of shape ", v->type().ToString(),
          " must have the shape of X's normalized dims ", ShapeToString(norm)));
    }
    return n.Reshape(v, norm);
  };
  HGC_ASSIGN_OR_RETURN(Value * scale, n.Ir(1));
  HGC_ASSIGN_OR_RETURN(scale, conform(scale, "Scale"));
  Value* bias = nullptr;
  if (n.has_input(2)) {
    HGC_ASSIGN_OR_RETURN(bias, n.Ir(2));
    HGC_ASSIGN_OR_RETURN(bias, conform(bias, "B"));
  } else {
    HGC_ASSIGN_OR_RETURN(
        bias,
        n.builder().Splat(
            0.0, TensorType(x->type().dtype, Shape(norm.begin(), norm.end()))));
  }
  HGC_ASSIGN_OR_RETURN(Value * out,
                       n.Create("layernorm", {x, scale, bias},
                                {{"axis", Attribute::Int(axis)},
                                 {"epsilon", Attribute::Float(epsilon)}}));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

absl::Status ConvertReduce(NodeContext& n) {
  const std::string& op = n.node().op_type();
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  // Axes became an input at opset 13 for ReduceSum, at 18 for the others.
  const bool axes_input = n.opset() >= (op == "ReduceSum" ? 13 : 18);
  std::optional<std::vector<int64_t>> axes;
  if (axes_input) {
    if (n.has_input(1)) {
      HGC_ASSIGN_OR_RETURN(const HostTensor* h, n.Host(1));
      HGC_ASSIGN_OR_RETURN(axes, HostInts(*h, "axes"));
    }
  } else {
    HGC_ASSIGN_OR_RETURN(axes, n.IntsAttr("axes"));
  }
  HGC_ASSIGN_OR_RETURN(int64_t keepdims, n.IntAttr("keepdims", 1));
  HGC_ASSIGN_OR_RETURN(int64_t noop, n.IntAttr("noop_with_empty_axes", 0));
  if ((!axes || axes->empty()) && noop) {
    n.SetOutput(0, x);
    return absl::OkStatus();
  }
  AttrMap attrs{{"keep_dims", Attribute::Bool(keepdims != 0)}};
  if (axes && !axes->empty()) attrs["axes"] = Attribute::IntList(*axes);
  const std::string kind = absl::StrCat(
      "reduce_",
      absl::AsciiStrToLower(op.substr(std::string("Reduce").size())));
  HGC_ASSIGN_OR_RETURN(Value * out, n.Create(kind, {x}, attrs));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

namespace {

// The scale and zero point attributes of a quantize or dequantize op from
// the node's constant inputs 1 and 2: scalars, or lists with `axis`.
absl::StatusOr<AttrMap> QuantAttrs(NodeContext& n, int64_t rank,
                                   int32_t* zero_point_type) {
  if (!n.IsHost(1) || (n.has_input(2) && !n.IsHost(2))) {
    return absl::UnimplementedError(
        "scale and zero point must be constants (initializers)");
  }
  HGC_ASSIGN_OR_RETURN(int64_t block_size, n.IntAttr("block_size", 0));
  if (block_size != 0) {
    return absl::UnimplementedError("blocked quantization is not supported");
  }
  HGC_ASSIGN_OR_RETURN(const HostTensor* scale, n.Host(1));
  const HostTensor* zero_point = nullptr;
  if (n.has_input(2)) {
    HGC_ASSIGN_OR_RETURN(zero_point, n.Host(2));
  }
  *zero_point_type = zero_point ? zero_point->elem_type : TensorProto::UINT8;
  if (!scale->is_real() || (zero_point && zero_point->is_real())) {
    return absl::InvalidArgumentError(
        "scale must be a float tensor and zero point an integer tensor");
  }
  if (zero_point && zero_point->size() != scale->size()) {
    return absl::InvalidArgumentError(
        "scale and zero point have different sizes");
  }
  AttrMap attrs;
  if (scale->dims.size() <= 1 && scale->size() == 1) {
    attrs["scale"] = Attribute::Float(scale->reals[0]);
    attrs["zero_point"] = Attribute::Int(zero_point ? zero_point->ints[0] : 0);
    return attrs;
  }
  if (scale->dims.size() != 1) {
    return absl::UnimplementedError("scale must be a scalar or 1-D");
  }
  HGC_ASSIGN_OR_RETURN(int64_t axis, n.IntAttr("axis", 1));
  HGC_ASSIGN_OR_RETURN(axis, Normalize(axis, rank));
  std::vector<int64_t> zp(scale->size(), 0);
  if (zero_point) zp = zero_point->ints;
  attrs["scale"] = Attribute::FloatList(scale->reals);
  attrs["zero_point"] = Attribute::IntList(zp);
  attrs["axis"] = Attribute::Int(axis);
  return attrs;
}

}  // namespace

absl::Status ConvertQuantizeLinear(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  int32_t zp_type = TensorProto::UINT8;
  HGC_ASSIGN_OR_RETURN(AttrMap attrs,
                       QuantAttrs(n, x->type().rank(), &zp_type));
  if (zp_type != TensorProto::UINT8 && zp_type != TensorProto::INT8) {
    return absl::UnimplementedError(absl::StrCat("quantization to ",
                                                 ElemTypeName(zp_type),
                                                 " is not supported (u8 "
                                                 "and s8 are)"));
  }
  attrs["to"] = Attribute::Type(*IrDType(zp_type));
  HGC_ASSIGN_OR_RETURN(Value * out, n.Create("quantize", {x}, attrs));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

absl::Status ConvertDequantizeLinear(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  int32_t zp_type = TensorProto::UINT8;
  HGC_ASSIGN_OR_RETURN(AttrMap attrs,
                       QuantAttrs(n, x->type().rank(), &zp_type));
  HGC_ASSIGN_OR_RETURN(Value * out, n.Create("dequantize", {x}, attrs));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

}  // namespace hgc::onnx_import
