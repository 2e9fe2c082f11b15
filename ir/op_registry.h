// The op table: for every op kind, its arity, its attribute schema (with
// defaults) and its type inference. Semantics live here rather than in op
// subclasses, as in XLA's opcodes; the parser, the builder, the verifier and
// the passes all consult this one table.
#ifndef HGC_IR_OP_REGISTRY_H_
#define HGC_IR_OP_REGISTRY_H_

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/op_kind.h"
#include "ir/tensor_type.h"

namespace hgc {

// What an attribute's value must look like.
enum class AttrKind {
  kInt,
  kFloat,        // an INT or FLOAT literal
  kBool,
  kString,
  kDType,
  kIntList,
  kNumberOrList, // a number, or a list of numbers
  kLiteral,      // a number or bool, or a list of them
  kSymbol,
};

struct AttrSpec {
  std::string name;
  AttrKind kind;
  // Used when the attribute is absent; nullopt with !required means "absent
  // has a meaning of its own" (e.g. reduce over all axes).
  std::optional<Attribute> default_value;
  bool required = false;
  // Whether the float values may be +-inf or NaN (the op checks the rest):
  // a constant's data and clamp's bounds. Every other float attribute
  // (epsilon, scales, ...) must be finite.
  bool non_finite = false;
};

// What type inference sees: operand types, attributes as written, and result
// types written after ':' (empty when none were written).
class InferContext {
 public:
  InferContext(absl::Span<const TensorType> operands, const AttrMap& attrs,
               absl::Span<const TensorType> declared_results)
      : operands_(operands), attrs_(attrs), declared_(declared_results) {}

  const TensorType& operand(int i) const { return operands_[i]; }
  int num_operands() const { return static_cast<int>(operands_.size()); }
  absl::Span<const TensorType> declared_results() const { return declared_; }

  // The attribute as written, or nullptr.
  const Attribute* Find(absl::string_view name) const;
  // Typed getters; callers ask only for attributes the schema declares with
  // a default (ValidateAttrs has already checked kinds).
  int64_t GetInt(absl::string_view name, int64_t default_value) const;
  double GetFloat(absl::string_view name, double default_value) const;
  bool GetBool(absl::string_view name, bool default_value) const;

 private:
  absl::Span<const TensorType> operands_;
  const AttrMap& attrs_;
  absl::Span<const TensorType> declared_;
};

using InferFn =
    std::function<absl::StatusOr<std::vector<TensorType>>(const InferContext&)>;

struct OpInfo {
  std::string name;
  OpKind kind = OpKind::kUnknown;  // set by OpRegistry::Register
  int min_operands = 0;
  int max_operands = 0;
  std::vector<AttrSpec> attrs;
  // Checks operand types and attribute values, and returns result types.
  // Errors are InvalidArgument with a message naming the op.
  InferFn infer;
  // Traits the passes use.
  bool elementwise = false;

  const AttrSpec* FindAttr(absl::string_view attr_name) const;
};

// All op kinds of design.md's table. Built once, immutable afterwards, safe
// to read from any thread.
class OpRegistry {
 public:
  static const OpRegistry& Get();

  // nullptr for an unknown kind.
  const OpInfo* Find(OpKind kind) const;
  const OpInfo* Find(absl::string_view name) const;
  // Sorted names, e.g. for "did you mean" suggestions.
  std::vector<std::string> Names() const;

  // Used by the per-family registration functions in ir/ops/.
  void Register(OpInfo info);

 private:
  // Indexed by OpKind.
  std::array<std::unique_ptr<OpInfo>, kNumOpKinds> ops_;
};

// Checks `attrs` against `info`'s schema: no unknown names, the right kinds,
// required ones present, floats finite.
absl::Status ValidateAttrs(const OpInfo& info, const AttrMap& attrs);

// Arity, attributes and inference together: the result types of `kind`
// applied to `operands`. When `declared_results` is not empty it must equal
// what is inferred.
absl::StatusOr<std::vector<TensorType>> InferResultTypes(
    absl::string_view kind, absl::Span<const TensorType> operands,
    const AttrMap& attrs, absl::Span<const TensorType> declared_results);

// The closest registered op name within edit distance 2, or "".
std::string SuggestOpName(absl::string_view unknown);

// numpy broadcasting of two shapes; InvalidArgument naming `op` on mismatch.
absl::StatusOr<Shape> BroadcastShapes(absl::string_view op,
                                      absl::Span<const int64_t> a,
                                      absl::Span<const int64_t> b);

// Registration of each family, defined in ir/ops/*.cc.
void RegisterElementwiseOps(OpRegistry& registry);
void RegisterMatmulOps(OpRegistry& registry);
void RegisterNormalizationOps(OpRegistry& registry);
void RegisterShapeOps(OpRegistry& registry);
void RegisterConcatSliceOps(OpRegistry& registry);
void RegisterQuantOps(OpRegistry& registry);
// `fusion` (ir/ops/fusion.cc): a call to a body graph; its signature is
// checked by the verifier, which sees the whole module.
void RegisterFusionOps(OpRegistry& registry);

}  // namespace hgc

#endif  // HGC_IR_OP_REGISTRY_H_
