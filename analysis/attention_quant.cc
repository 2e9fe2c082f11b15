#include "analysis/attention_quant.h"

#include <cstdint>
#include <limits>

#include "analysis/op_predicates.h"
#include "ir/attribute.h"
#include "ir/dtype.h"

namespace hgc {
namespace attention_quant {
namespace {

bool IsInt8(DType t) { return t == DType::kU8 || t == DType::kS8; }

// One number for the scale and at most one for the zero point: a list
// (even of one entry) or an `axis` means per channel, which the attention
// kernel does not apply.
bool PerTensor(const Op& op) {
  if (op.FindAttr("axis") != nullptr) return false;
  const Attribute* scale = op.FindAttr("scale");
  const Attribute* zp = op.FindAttr("zero_point");
  return scale != nullptr && scale->is_number() &&
         (zp == nullptr || zp->is_number());
}

bool SameParams(const Op& a, const Op& b) {
  const OperandQuant x = ParamsOf(a), y = ParamsOf(b);
  return x.scale == y.scale && x.zero_point == y.zero_point;
}

// Whether (x - zero_point) * scale, for every u8 or s8 x and zero point
// (|x - zero_point| <= 255), is 0 or a normal finite f32: then dividing
// it by the scale again lands within 0.5 of x - zero_point, so a
// quantize with the same parameters gives x back.
bool RoundTripsExactly(float scale) {
  return scale >= std::numeric_limits<float>::min() &&
         scale <= std::numeric_limits<float>::max() / 256;
}

}  // namespace

bool IsPerTensorDequantize(const Op& op) {
  return op.kind_id() == OpKind::kDequantize && op.num_operands() == 1 &&
         IsInt8(op.operand(0)->type().dtype) && PerTensor(op);
}

bool IsPerTensorQuantize(const Op& op) {
  const Attribute* to = op.FindAttr("to");
  return op.kind_id() == OpKind::kQuantize && to != nullptr && to->is_dtype() &&
         IsInt8(to->as_dtype()) && PerTensor(op);
}

OperandQuant ParamsOf(const Op& op) {
  OperandQuant q;
  if (const Attribute* scale = op.FindAttr("scale");
      scale != nullptr && scale->is_number()) {
    q.scale = static_cast<float>(scale->as_number());
  }
  if (const Attribute* zp = op.FindAttr("zero_point");
      zp != nullptr && zp->is_number()) {
    q.zero_point = static_cast<int64_t>(zp->as_number());
  }
  return q;
}

std::optional<QuantProblem> OperandQuantProblem(
    const std::vector<const Op*>& quant) {
  if (quant.empty()) return std::nullopt;
  const Op& first = *quant.front();
  if (!IsPerTensorDequantize(first)) {
    return QuantProblem{
        0, "is not a per-tensor dequantize of a u8 or s8 parameter"};
  }
  const DType type = first.operand(0)->type().dtype;
  for (size_t i = 1; i < quant.size(); ++i) {
    const Op& op = *quant[i];
    if (i % 2 == 1) {
      if (!IsPerTensorQuantize(op) || op.FindAttr("to")->as_dtype() != type ||
          !SameParams(op, first)) {
        return QuantProblem{
            i,
            "is not a per-tensor quantize with the first dequantize's "
            "scale, zero point and type"};
      }
    } else if (!IsPerTensorDequantize(op) || !SameParams(op, first)) {
      return QuantProblem{i,
                          "is not a per-tensor dequantize with the first "
                          "dequantize's scale and zero point"};
    }
  }
  if (quant.size() % 2 == 0) {
    return QuantProblem{quant.size() - 1,
                        "is a quantize with no dequantize after it"};
  }
  if (quant.size() > 1 && !RoundTripsExactly(ParamsOf(first).scale)) {
    return QuantProblem{0,
                        "has a scale at which its (quantize, dequantize) "
                        "pairs do not give the values back exactly"};
  }
  return std::nullopt;
}

std::optional<QuantProblem> ProbOpsProblem(
    const std::vector<const Op*>& prob_ops) {
  bool quantized = false;
  for (size_t i = 0; i < prob_ops.size(); ++i) {
    const Op& op = *prob_ops[i];
    if (IsFloatCast(op)) continue;
    if (op.kind_id() == OpKind::kDequantize) {
      return QuantProblem{i, "is not a dequantize right after a quantize"};
    }
    if (op.kind_id() != OpKind::kQuantize) {
      return QuantProblem{
          i, "is not a cast to a float type, a quantize or a dequantize"};
    }
    if (!IsPerTensorQuantize(op)) {
      return QuantProblem{i, "is not a per-tensor quantize to u8 or s8"};
    }
    if (quantized) return QuantProblem{i, "quantizes P a second time"};
    quantized = true;
    if (i + 1 == prob_ops.size() || !IsPerTensorDequantize(*prob_ops[i + 1]) ||
        !SameParams(*prob_ops[i + 1], op)) {
      return QuantProblem{i,
                          "is not followed by a per-tensor dequantize with "
                          "its scale and zero point"};
    }
    ++i;  // its dequantize
  }
  return std::nullopt;
}

}  // namespace attention_quant
}  // namespace hgc
