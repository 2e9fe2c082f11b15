// The quantize and dequantize ops an attention block may hold (the QDQ
// form), judged in one place: MatchAttention and the checks of its
// attributes (attention_attrs_check.cc) must accept exactly the same
// chains, and attention-fusion takes the ops these accept.
#ifndef HGC_ANALYSIS_ATTENTION_QUANT_H_
#define HGC_ANALYSIS_ATTENTION_QUANT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analysis/attention_match.h"
#include "ir/graph.h"

namespace hgc {
namespace attention_quant {

// Whether `op` is a dequantize of a u8 or s8 value with one scale and one
// zero point for the whole tensor (no `axis`, no lists).
bool IsPerTensorDequantize(const Op& op);

// Whether `op` is a quantize to u8 or s8 with one scale and one zero
// point for the whole tensor.
bool IsPerTensorQuantize(const Op& op);

// The scale (as the op rounds it, to f32) and zero point of a per-tensor
// quantize or dequantize.
OperandQuant ParamsOf(const Op& op);

// Which op of a list breaks a rule, and the rule, worded to follow the
// op's name ("op 3 (%kd = dequantize) <why>").
struct QuantProblem {
  size_t at = 0;
  std::string why;
};

// Checks `quant`, the quantization ops on one operand's path in order from
// its parameter (non-empty): a per-tensor dequantize of a u8 or s8 value,
// then (quantize, dequantize) pairs with its scale, zero point and type.
// Each pair gives back exactly the values it read only while every
// dequantized value is a normal, finite f32, which the scale is checked
// for. Whether the ops connect is the caller's walk.
std::optional<QuantProblem> OperandQuantProblem(
    const std::vector<const Op*>& quant);

// Checks `prob_ops`, the ops from softmax to P·V in order: casts to float
// types, and at most one per-tensor quantize to u8 or s8 directly
// followed by a dequantize with the same scale and zero point.
std::optional<QuantProblem> ProbOpsProblem(
    const std::vector<const Op*>& prob_ops);

}  // namespace attention_quant
}  // namespace hgc

#endif  // HGC_ANALYSIS_ATTENTION_QUANT_H_
