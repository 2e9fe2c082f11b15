// Which ONNX ops hgc converts, from which opset, with which converter.
#include <cstring>

#include "frontend/onnx/import_context.h"

namespace hgc::onnx_import {
namespace {

struct OpEntry {
  const char* domain;  // "" for the default domain, ai.onnx
  const char* op_type;
  int64_t min_opset;
  int64_t max_opset;
  Converter converter;
};

// The default domain's versions hgc reads are 7..21 (model-level check);
// an op's own range narrows that where it appeared later.
constexpr int64_t kAny = 1000;
const OpEntry kOps[] = {
    {"", "Add", 1, kAny, ConvertElementwiseBinary},
    {"", "Sub", 1, kAny, ConvertElementwiseBinary},
    {"", "Mul", 1, kAny, ConvertElementwiseBinary},
    {"", "Div", 1, kAny, ConvertElementwiseBinary},
    {"", "Max", 1, kAny, ConvertVariadicMinMax},
    {"", "Min", 1, kAny, ConvertVariadicMinMax},
    {"", "Equal", 1, kAny, ConvertCompare},
    {"", "Greater", 1, kAny, ConvertCompare},
    {"", "Less", 1, kAny, ConvertCompare},
    {"", "GreaterOrEqual", 12, kAny, ConvertCompare},
    {"", "LessOrEqual", 12, kAny, ConvertCompare},
    {"", "Where", 9, kAny, ConvertWhere},
    {"", "Relu", 1, kAny, ConvertUnary},
    {"", "Tanh", 1, kAny, ConvertUnary},
    {"", "Sigmoid", 1, kAny, ConvertUnary},
    {"", "Exp", 1, kAny, ConvertUnary},
    {"", "Log", 1, kAny, ConvertUnary},
    {"", "Sqrt", 1, kAny, ConvertUnary},
    {"", "Neg", 1, kAny, ConvertUnary},
    {"", "Abs", 1, kAny, ConvertUnary},
    {"", "Erf", 9, kAny, ConvertUnary},
    {"", "Reciprocal", 1, kAny, ConvertReciprocal},
    {"", "Pow", 1, kAny, ConvertPow},
    {"", "Gelu", 20, kAny, ConvertGelu},
    {"", "Identity", 1, kAny, ConvertIdentity},
    {"", "Dropout", 1, kAny, ConvertIdentity},
    {"", "Cast", 1, kAny, ConvertCast},
    {"", "Constant", 1, kAny, ConvertConstant},
    {"", "MatMul", 1, kAny, ConvertMatMul},
    {"", "Gemm", 7, kAny, ConvertGemm},
    {"", "Softmax", 1, kAny, ConvertSoftmax},
    {"", "LayerNormalization", 17, kAny, ConvertLayerNormalization},
    {"", "ReduceMean", 1, kAny, ConvertReduce},
    {"", "ReduceSum", 1, kAny, ConvertReduce},
    {"", "ReduceMax", 1, kAny, ConvertReduce},
    {"", "QuantizeLinear", 10, kAny, ConvertQuantizeLinear},
    {"", "DequantizeLinear", 10, kAny, ConvertDequantizeLinear},
    {"", "Transpose", 1, kAny, ConvertTranspose},
    {"", "Reshape", 5, kAny, ConvertReshape},
    {"", "Flatten", 1, kAny, ConvertFlatten},
    {"", "Squeeze", 1, kAny, ConvertSqueeze},
    {"", "Unsqueeze", 1, kAny, ConvertUnsqueeze},
    {"", "Shape", 1, kAny, ConvertShape},
    {"", "Size", 1, kAny, ConvertSize},
    {"", "Gather", 1, kAny, ConvertGather},
    {"", "Concat", 4, kAny, ConvertConcat},
    {"", "Slice", 1, kAny, ConvertSlice},
    {"", "Split", 1, kAny, ConvertSplit},
    {"", "Range", 11, kAny, ConvertRange},
    {"", "ConstantOfShape", 9, kAny, ConvertConstantOfShape},
    // onnxruntime's contrib ops that carry GELU.
    {"com.microsoft", "Gelu", 1, kAny, ConvertGelu},
    {"com.microsoft", "FastGelu", 1, kAny, ConvertGelu},
    {"com.microsoft", "BiasGelu", 1, kAny, ConvertGelu},
};

}  // namespace

Converter FindConverter(const std::string& domain, const std::string& op_type,
                        int64_t opset) {
  const std::string d = domain == "ai.onnx" ? "" : domain;
  for (const OpEntry& e : kOps) {
    if (d == e.domain && op_type == e.op_type && opset >= e.min_opset &&
        opset <= e.max_opset) {
      return e.converter;
    }
  }
  return nullptr;
}

}  // namespace hgc::onnx_import
