// Converters of elementwise ops: arithmetic, comparisons, Where,
// activations, Pow, Gelu, Cast, Identity and Constant.
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "frontend/onnx/host_ops.h"
#include "frontend/onnx/import_context.h"
#include "support/status_macros.h"

namespace hgc::onnx_import {
namespace {

using onnx::TensorProto;

// Folds op(input 0, input 1) on the host when both are known and small;
// returns whether it did.
absl::StatusOr<bool> TryFoldBinary(NodeContext& n, const std::string& op, int a,
                                   int b) {
  if (!n.IsHost(a) || !n.IsHost(b)) return false;
  // Large initializers stay tensors: only fold what decodes on the host.
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> da, n.ShapeOf(a));
  HGC_ASSIGN_OR_RETURN(std::vector<int64_t> db, n.ShapeOf(b));
  if (*CheckedNumElements(da) > kMaxHostElements ||
      *CheckedNumElements(db) > kMaxHostElements) {
    return false;
  }
  HGC_ASSIGN_OR_RETURN(const HostTensor* ha, n.Host(a));
  HGC_ASSIGN_OR_RETURN(const HostTensor* hb, n.Host(b));
  if (!FoldsOnHost(*ha, *hb)) return false;
  HGC_ASSIGN_OR_RETURN(HostTensor out, HostBinary(op, *ha, *hb));
  n.SetOutputHost(0, std::move(out));
  return true;
}

absl::Status Binary(NodeContext& n, const std::string& op, int a, int b,
                    Value** result) {
  HGC_ASSIGN_OR_RETURN(Value * va, n.Ir(a));
  HGC_ASSIGN_OR_RETURN(Value * vb, n.Ir(b));
  static const auto* kKinds = new absl::flat_hash_map<std::string, std::string>{
      {"Add", "add"},
      {"Sub", "sub"},
      {"Mul", "mul"},
      {"Div", "div"},
      {"Max", "max"},
      {"Min", "min"},
      {"Equal", "equal"},
      {"Greater", "greater"},
      {"Less", "less"},
      {"GreaterOrEqual", "greater_equal"},
      {"LessOrEqual", "less_equal"}};
  HGC_ASSIGN_OR_RETURN(*result, n.Create(kKinds->at(op), {va, vb}));
  return absl::OkStatus();
}

}  // namespace

absl::Status ConvertElementwiseBinary(NodeContext& n) {
  const std::string& op = n.node().op_type();
  HGC_ASSIGN_OR_RETURN(bool folded, TryFoldBinary(n, op, 0, 1));
  if (folded) return absl::OkStatus();
  Value* result = nullptr;
  HGC_RETURN_IF_ERROR(Binary(n, op, 0, 1, &result));
  n.SetOutput(0, result);
  return absl::OkStatus();
}

absl::Status ConvertCompare(NodeContext& n) {
  return ConvertElementwiseBinary(n);
}

absl::Status ConvertVariadicMinMax(NodeContext& n) {
  const std::string& op = n.node().op_type();
  if (n.num_inputs() < 1) {
    return absl::InvalidArgumentError("needs at least one input");
  }
  if (n.num_inputs() == 1) {
    if (!n.has_input(0)) return absl::InvalidArgumentError("input #0 is empty");
    if (n.output_used(0)) n.ctx().Alias(n.node().output(0), n.input(0));
    return absl::OkStatus();
  }
  if (n.num_inputs() == 2) return ConvertElementwiseBinary(n);
  HGC_ASSIGN_OR_RETURN(Value * acc, n.Ir(0));
  for (int i = 1; i < n.num_inputs(); ++i) {
    HGC_ASSIGN_OR_RETURN(Value * next, n.Ir(i));
    HGC_ASSIGN_OR_RETURN(acc, n.Create(absl::AsciiStrToLower(op), {acc, next}));
  }
  n.SetOutput(0, acc);
  return absl::OkStatus();
}

absl::Status ConvertWhere(NodeContext& n) {
  if (n.IsHost(0) && n.IsHost(1) && n.IsHost(2)) {
    HGC_ASSIGN_OR_RETURN(std::vector<int64_t> da, n.ShapeOf(1));
    if (*CheckedNumElements(da) <= kMaxHostElements) {
      HGC_ASSIGN_OR_RETURN(const HostTensor* c, n.Host(0));
      HGC_ASSIGN_OR_RETURN(const HostTensor* a, n.Host(1));
      HGC_ASSIGN_OR_RETURN(const HostTensor* b, n.Host(2));
      if (!a->is_real() && !b->is_real()) {
        HGC_ASSIGN_OR_RETURN(HostTensor out, HostWhere(*c, *a, *b));
        n.SetOutputHost(0, std::move(out));
        return absl::OkStatus();
      }
    }
  }
  HGC_ASSIGN_OR_RETURN(Value * c, n.Ir(0));
  HGC_ASSIGN_OR_RETURN(Value * a, n.Ir(1));
  HGC_ASSIGN_OR_RETURN(Value * b, n.Ir(2));
  HGC_ASSIGN_OR_RETURN(Value * out, n.Create("select", {c, a, b}));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

absl::Status ConvertUnary(NodeContext& n) {
  const std::string& op = n.node().op_type();
  // Shape arithmetic (a negated index, sqrt of a head size) folds.
  if (n.IsHost(0) && (op == "Neg" || op == "Sqrt" || op == "Abs")) {
    HGC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, n.ShapeOf(0));
    if (*CheckedNumElements(dims) <= kMaxHostElements) {
      HGC_ASSIGN_OR_RETURN(const HostTensor* x, n.Host(0));
      if (!x->is_real() || x->elem_type == TensorProto::FLOAT) {
        HostTensor out = *x;
        for (int64_t i = 0; i < out.size(); ++i) {
          if (out.is_real()) {
            const float v = static_cast<float>(out.reals[i]);
            out.reals[i] = op == "Neg"   ? -v
                           : op == "Abs" ? std::fabs(v)
                                         : std::sqrt(v);
          } else if (op == "Sqrt") {
            return absl::InvalidArgumentError("Sqrt of an integer tensor");
          } else {
            // Wraps for INT64_MIN, as integer arithmetic in the graph does.
            const uint64_t v = static_cast<uint64_t>(out.ints[i]);
            const bool negate = op == "Neg" || out.ints[i] < 0;
            out.ints[i] = static_cast<int64_t>(negate ? 0 - v : v);
          }
        }
        n.SetOutputHost(0, std::move(out));
        return absl::OkStatus();
      }
    }
  }
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  HGC_ASSIGN_OR_RETURN(Value * out, n.Create(absl::AsciiStrToLower(op), {x}));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

absl::Status ConvertReciprocal(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  HGC_ASSIGN_OR_RETURN(Value * one, n.Scalar(1.0, x->type().dtype));
  HGC_ASSIGN_OR_RETURN(Value * out, n.Create("div", {one, x}));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

// Pow: a one-element constant exponent of 1, 2, 0.5, -0.5 or -1 is
// rewritten (x, mul, sqrt, rsqrt, div) as torch's decompositions expect;
// any other exponent runs as the pow op (powf), the exponent cast to x's
// dtype (ONNX allows an integer exponent).
absl::Status ConvertPow(NodeContext& n) {
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  const DType dtype = x->type().dtype;
  Value* out = nullptr;
  if (n.IsHost(1)) {
    HGC_ASSIGN_OR_RETURN(const HostTensor* e, n.Host(1));
    if (e->size() == 1) {
      const double p = e->GetDouble(0);
      if (p == 1) {
        out = x;
      } else if (p == 2) {
        HGC_ASSIGN_OR_RETURN(out, n.Create("mul", {x, x}));
      } else if (p == 0.5) {
        HGC_ASSIGN_OR_RETURN(out, n.Create("sqrt", {x}));
      } else if (p == -0.5) {
        HGC_ASSIGN_OR_RETURN(out, n.Create("rsqrt", {x}));
      } else if (p == -1) {
        HGC_ASSIGN_OR_RETURN(Value * one, n.Scalar(1.0, dtype));
        HGC_ASSIGN_OR_RETURN(out, n.Create("div", {one, x}));
      } else {
        HGC_ASSIGN_OR_RETURN(Value * exponent, n.Scalar(p, dtype));
        HGC_ASSIGN_OR_RETURN(out, n.Create("pow", {x, exponent}));
      }
      n.SetOutput(0, out);
      return absl::OkStatus();
    }
  }
  HGC_ASSIGN_OR_RETURN(Value * exponent, n.Ir(1));
  if (exponent->type().dtype != dtype) {
    HGC_ASSIGN_OR_RETURN(exponent,
                         n.Create("cast", {exponent},
                                  {{"to", Attribute::Type(dtype)}}));
  }
  HGC_ASSIGN_OR_RETURN(out, n.Create("pow", {x, exponent}));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

absl::Status ConvertGelu(NodeContext& n) {
  const std::string& op = n.node().op_type();
  std::string approximate = "none";
  if (op == "FastGelu") approximate = "tanh";
  if (n.node().domain().empty() || n.node().domain() == "ai.onnx") {
    HGC_ASSIGN_OR_RETURN(approximate, n.StringAttr("approximate", "none"));
    if (approximate != "none" && approximate != "tanh") {
      return absl::InvalidArgumentError(
          absl::StrCat("approximate must be \"none\" or \"tanh\", found \"",
                       approximate, "\""));
    }
  }
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  // com.microsoft FastGelu and BiasGelu take an optional bias to add first.
  if (op != "Gelu" || !n.node().domain().empty()) {
    if (n.has_input(1)) {
      HGC_ASSIGN_OR_RETURN(Value * bias, n.Ir(1));
      HGC_ASSIGN_OR_RETURN(x, n.Create("add", {x, bias}));
    }
  }
  HGC_ASSIGN_OR_RETURN(
      Value * out,
      n.Create("gelu", {x}, {{"approximate", Attribute::String(approximate)}}));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

absl::Status ConvertIdentity(NodeContext& n) {
  if (!n.has_input(0) || !n.ctx().IsDefined(n.input(0))) {
    return absl::InvalidArgumentError("input #0 is not defined");
  }
  if (n.node().op_type() == "Dropout") {
    if (n.output_used(1)) {
      return absl::UnimplementedError(
          "Dropout's mask output is not supported (inference only)");
    }
    if (n.IsHost(2)) {
      HGC_ASSIGN_OR_RETURN(const HostTensor* training, n.Host(2));
      if (training->size() == 1 && training->GetDouble(0) != 0) {
        return absl::UnimplementedError(
            "Dropout in training mode is not supported (inference only)");
      }
    } else if (n.has_input(2)) {
      // A mode chosen at run time may be training: random masks.
      return absl::UnimplementedError(
          "Dropout's training_mode is given at run time; hgc runs inference "
          "only (make it a constant false)");
    }
  }
  if (n.output_used(0)) n.ctx().Alias(n.node().output(0), n.input(0));
  return absl::OkStatus();
}

absl::Status ConvertCast(NodeContext& n) {
  const onnx::AttributeProto* attr = n.Attr("to");
  if (attr == nullptr) return absl::InvalidArgumentError("'to' is required");
  HGC_ASSIGN_OR_RETURN(int64_t to, n.IntAttr("to", 0));
  if (n.IsHost(0)) {
    HGC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, n.ShapeOf(0));
    if (*CheckedNumElements(dims) <= kMaxHostElements) {
      HGC_ASSIGN_OR_RETURN(const HostTensor* x, n.Host(0));
      HGC_ASSIGN_OR_RETURN(HostTensor out,
                           HostCast(*x, static_cast<int32_t>(to)));
      n.SetOutputHost(0, std::move(out));
      return absl::OkStatus();
    }
  }
  std::optional<DType> dtype = IrDType(static_cast<int32_t>(to));
  if (!dtype) {
    if (to == TensorProto::INT64) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", n.node().output(0),
          "' is INT64 and is computed at run "
          "time: hgc has no 64-bit integer dtype, and only int64 shape chains "
          "that fold at import are supported"));
    }
    return absl::UnimplementedError(
        absl::StrCat("Cast to ", ElemTypeName(static_cast<int32_t>(to)),
                     " is not supported (hgc has no such dtype)"));
  }
  HGC_ASSIGN_OR_RETURN(Value * x, n.Ir(0));
  HGC_ASSIGN_OR_RETURN(
      Value * out, n.Create("cast", {x}, {{"to", Attribute::Type(*dtype)}}));
  n.SetOutput(0, out);
  return absl::OkStatus();
}

absl::Status ConvertConstant(NodeContext& n) {
  if (n.node().attribute_size() != 1) {
    return absl::InvalidArgumentError("needs exactly one value attribute");
  }
  const onnx::AttributeProto& attr = n.node().attribute(0);
  HostTensor host;
  if (attr.name() == "value" && attr.type() == onnx::AttributeProto::TENSOR) {
    absl::Status checked = CheckTensorData(attr.t());
    if (!checked.ok()) {
      return absl::Status(checked.code(),
                          absl::StrCat("'value' ", checked.message()));
    }
    // Decoded when first used, as an initializer is.
    if (n.output_used(0))
      n.ctx().DefineInitializer(n.node().output(0), &attr.t());
    return absl::OkStatus();
  } else if (attr.name() == "value_float") {
    host = MakeHost(TensorProto::FLOAT, {});
    host.reals[0] = attr.f();
  } else if (attr.name() == "value_floats") {
    host = MakeHost(TensorProto::FLOAT, {attr.floats_size()});
    for (int i = 0; i < attr.floats_size(); ++i) host.reals[i] = attr.floats(i);
  } else if (attr.name() == "value_int") {
    host = MakeHost(TensorProto::INT64, {});
    host.ints[0] = attr.i();
  } else if (attr.name() == "value_ints") {
    host = MakeHost(TensorProto::INT64, {attr.ints_size()});
    for (int i = 0; i < attr.ints_size(); ++i) host.ints[i] = attr.ints(i);
  } else {
    return absl::UnimplementedError(absl::StrCat(
        "a Constant given by '", attr.name(), "' is not supported"));
  }
  n.SetOutputHost(0, std::move(host));
  return absl::OkStatus();
}

}  // namespace hgc::onnx_import
