// Op kinds and fusion kinds as enums, and the questions passes and codegen
// ask about them. The tables are ir/op_kinds.def and ir/fusion_kinds.def;
// everything here is derived from them.
//
// Ops keep their kind name (Op::kind(), what the printer and diagnostics
// use) and cache its enumerator (Op::kind_id()); code that decides
// something by kind uses the enumerator and the predicates below.
#ifndef HGC_IR_OP_KIND_H_
#define HGC_IR_OP_KIND_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace hgc {

// The families of op_kinds.def's third column.
enum class OpClass : uint8_t {
  kMatmul,
  kBinary,         // add sub mul div max min
  kUnary,          // relu ... abs, gelu, clamp
  kComparison,     // equal greater greater_equal less less_equal
  kSelect,
  kCast,
  kQuant,          // quantize dequantize
  kNormalization,  // softmax layernorm
  kReduction,      // reduce_sum reduce_max reduce_mean
  kShape,          // reshape transpose concat slice: data movement
  kConstant,
  kFusion,
  kUnknown,
};

enum class OpKind : uint8_t {
#define HGC_OP_KIND(e, name, cls) e,
#include "ir/op_kinds.def"
  // An op whose name is not in the table (only graphs that fail
  // verification have one).
  kUnknown,
};

// The number of known kinds; OpKind values 0 .. kNumOpKinds - 1.
inline constexpr int kNumOpKinds = static_cast<int>(OpKind::kUnknown);

// Every known kind, in table order.
absl::Span<const OpKind> AllOpKinds();
// "matmul", "reduce_sum", ...; "<unknown>" for kUnknown.
absl::string_view OpKindName(OpKind kind);
// The kind named `name`; nullopt for a name not in the table.
std::optional<OpKind> OpKindFromName(absl::string_view name);

constexpr OpClass OpClassOf(OpKind kind) {
  constexpr OpClass kClasses[] = {
#define HGC_OP_KIND(e, name, cls) OpClass::cls,
#include "ir/op_kinds.def"
      OpClass::kUnknown,
  };
  return kClasses[static_cast<int>(kind)];
}

// One operand, elementwise: relu, sigmoid, tanh, exp, log, sqrt, rsqrt,
// neg, abs, gelu, clamp.
constexpr bool IsUnary(OpKind kind) {
  return OpClassOf(kind) == OpClass::kUnary;
}
// Elementwise comparisons (result bool).
constexpr bool IsComparison(OpKind kind) {
  return OpClassOf(kind) == OpClass::kComparison;
}
// Two operands, elementwise with broadcasting: add, sub, mul, div, max,
// min and the comparisons.
constexpr bool IsBinary(OpKind kind) {
  return OpClassOf(kind) == OpClass::kBinary || IsComparison(kind);
}
// The op registry's `elementwise` trait: unary, binary, select and cast.
constexpr bool IsElementwise(OpKind kind) {
  return IsUnary(kind) || IsBinary(kind) || kind == OpKind::kSelect ||
         kind == OpKind::kCast;
}
// quantize and dequantize.
constexpr bool IsQuantOp(OpKind kind) {
  return OpClassOf(kind) == OpClass::kQuant;
}
// Elementwise in the fusion sense: elementwise ops plus quantize and
// dequantize (per element, with per-channel parameters).
constexpr bool IsPointwise(OpKind kind) {
  return IsElementwise(kind) || IsQuantOp(kind);
}
// reduce_sum, reduce_max, reduce_mean.
constexpr bool IsReduction(OpKind kind) {
  return OpClassOf(kind) == OpClass::kReduction;
}
// The ops a row group is built around: softmax, layernorm, reduce_*.
constexpr bool IsRowOp(OpKind kind) {
  return OpClassOf(kind) == OpClass::kNormalization || IsReduction(kind);
}

// The families code dispatches on member by member, each an enum of its own
// listing the family's rows of op_kinds.def, so that a `switch` over one
// without `default` (the build has -Werror=switch) fails to compile until
// every member has its case: a kind added to the table is flagged at every
// site that must handle it.
enum class UnaryKind : uint8_t {
#define HGC_UNARY_OP_KIND(e, name) e,
#include "ir/op_kinds.def"
};
enum class BinaryKind : uint8_t {  // arithmetic; comparisons are apart
#define HGC_BINARY_OP_KIND(e, name) e,
#include "ir/op_kinds.def"
};
enum class CompareKind : uint8_t {
#define HGC_COMPARE_OP_KIND(e, name) e,
#include "ir/op_kinds.def"
};
enum class ReduceKind : uint8_t {
#define HGC_REDUCE_OP_KIND(e, name) e,
#include "ir/op_kinds.def"
};

namespace op_kind_internal {
// For each OpKind, its index in its family's enum, or -1.
inline constexpr int8_t kUnaryIndex[] = {
#define HGC_OP_KIND(e, name, cls) -1,
#define HGC_UNARY_OP_KIND(e, name) static_cast<int8_t>(UnaryKind::e),
#include "ir/op_kinds.def"
    -1};
inline constexpr int8_t kBinaryIndex[] = {
#define HGC_OP_KIND(e, name, cls) -1,
#define HGC_BINARY_OP_KIND(e, name) static_cast<int8_t>(BinaryKind::e),
#include "ir/op_kinds.def"
    -1};
inline constexpr int8_t kCompareIndex[] = {
#define HGC_OP_KIND(e, name, cls) -1,
#define HGC_COMPARE_OP_KIND(e, name) static_cast<int8_t>(CompareKind::e),
#include "ir/op_kinds.def"
    -1};
inline constexpr int8_t kReduceIndex[] = {
#define HGC_OP_KIND(e, name, cls) -1,
#define HGC_REDUCE_OP_KIND(e, name) static_cast<int8_t>(ReduceKind::e),
#include "ir/op_kinds.def"
    -1};

template <typename Family>
constexpr std::optional<Family> InFamily(const int8_t* index, OpKind kind) {
  const int8_t i = index[static_cast<int>(kind)];
  if (i < 0) return std::nullopt;
  return static_cast<Family>(i);
}
}  // namespace op_kind_internal

// The family member `kind` is, or nullopt when it is not in the family.
constexpr std::optional<UnaryKind> AsUnary(OpKind kind) {
  return op_kind_internal::InFamily<UnaryKind>(op_kind_internal::kUnaryIndex,
                                               kind);
}
constexpr std::optional<BinaryKind> AsBinary(OpKind kind) {
  return op_kind_internal::InFamily<BinaryKind>(op_kind_internal::kBinaryIndex,
                                                kind);
}
constexpr std::optional<CompareKind> AsCompare(OpKind kind) {
  return op_kind_internal::InFamily<CompareKind>(
      op_kind_internal::kCompareIndex, kind);
}
constexpr std::optional<ReduceKind> AsReduce(OpKind kind) {
  return op_kind_internal::InFamily<ReduceKind>(op_kind_internal::kReduceIndex,
                                                kind);
}

// The OpKind of a family member.
constexpr OpKind ToOpKind(UnaryKind k) {
  constexpr OpKind kKinds[] = {
#define HGC_UNARY_OP_KIND(e, name) OpKind::e,
#include "ir/op_kinds.def"
  };
  return kKinds[static_cast<int>(k)];
}
constexpr OpKind ToOpKind(BinaryKind k) {
  constexpr OpKind kKinds[] = {
#define HGC_BINARY_OP_KIND(e, name) OpKind::e,
#include "ir/op_kinds.def"
  };
  return kKinds[static_cast<int>(k)];
}
constexpr OpKind ToOpKind(CompareKind k) {
  constexpr OpKind kKinds[] = {
#define HGC_COMPARE_OP_KIND(e, name) OpKind::e,
#include "ir/op_kinds.def"
  };
  return kKinds[static_cast<int>(k)];
}
constexpr OpKind ToOpKind(ReduceKind k) {
  constexpr OpKind kKinds[] = {
#define HGC_REDUCE_OP_KIND(e, name) OpKind::e,
#include "ir/op_kinds.def"
  };
  return kKinds[static_cast<int>(k)];
}

// What a `fusion` op's `kind` attribute says: how codegen lowers the group
// (docs/compiler.md §1).
enum class FusionKind : uint8_t {
#define HGC_FUSION_KIND(e, name) e,
#include "ir/fusion_kinds.def"
};

// Every fusion kind, in table order.
absl::Span<const FusionKind> AllFusionKinds();
// "matmul", "mlp", ...
absl::string_view FusionKindName(FusionKind kind);
// The fusion kind named `name`; nullopt for a name not in the table.
std::optional<FusionKind> FusionKindFromName(absl::string_view name);

// Groups lowered around BRGEMM calls: "matmul" and "mlp".
constexpr bool IsMatmulFusion(FusionKind kind) {
  return kind == FusionKind::kMatmul || kind == FusionKind::kMlp;
}
// Groups built around one row op: "softmax", "layernorm", "reduce".
constexpr bool IsRowFusion(FusionKind kind) {
  return kind == FusionKind::kSoftmax || kind == FusionKind::kLayernorm ||
         kind == FusionKind::kReduce;
}

}  // namespace hgc

#endif  // HGC_IR_OP_KIND_H_
