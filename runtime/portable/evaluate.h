// The portable kernels: naive, obviously-correct loops for every op of
// design.md's table, in plain C++ for any CPU, and the function that
// evaluates one op on tensors with them. Three parties run them under their
// own names: the reference interpreter (reference/reference_interpreter.h,
// the correctness oracle of `--check`), fold-constants (passes/) and
// codegen's fallback steps (ops no lowering takes). They favour clarity over
// speed, but stay O(n) per elementwise op with no per-element allocation,
// and matmul uses an i-k-j loop (a 1024^3 matmul takes about 0.7 s for f32,
// bf16 or s8; the library is built with -O2 even in fastbuild).
//
// Numerics (the contract other components are checked against):
//
// * Floating-point ops load every element exactly (bf16/f16 widen to f32,
//   which is exact in double), evaluate in double, and round ONCE to the
//   result dtype: f32 and bf16 round to nearest even, f16 is IEEE
//   round-to-nearest-even. For f32 +,-,*,/,sqrt this equals native f32
//   arithmetic bit for bit; for exp/tanh/erf... it is the correctly rounded
//   (or within 1 ulp) f32 value, which any kernel computing in f32 matches
//   within f32 tolerance. The rounding to bf16/f16 is direct from double (no
//   double rounding through f32).
// * Statistics of reduce_sum/reduce_mean/softmax/layernorm accumulate in
//   double (more accurate than the f32 accumulation design.md requires of the
//   compiler; sequential f32 sums would make the oracle the least accurate
//   party).
// * matmul accumulates in f32 with k ascending (design.md: "accumulate in
//   f32"), then rounds once to bf16/f16 for those dtypes. In a bf16 matmul
//   a denormal operand is read as a zero of its sign (as the AVX512_BF16
//   and AMX dot products read it); f16 and f32 operands are exact. u8/s8
//   pairs give
//   s32: exact products summed modulo 2^32, identical to s32 accumulation
//   with wrapping adds (it cannot wrap for K < 65794).
// * Integer add/sub/mul/neg/abs and reduce_sum wrap in the operand type
//   (two's complement): s8 127+1 = -128, u8 0-1 = 255, abs(s8 -128) = -128,
//   neg(u8 1) = 255. max/min/relu/comparisons are exact. div and the math
//   functions take floats only (the op registry rejects the rest).
// * NaN: max/min/relu/reduce_max/clamp propagate NaN; comparisons with NaN
//   are false (equal(NaN, NaN) = false); softmax of a row with a NaN, or of
//   a row that is all -inf, is NaN in every element of that row.
// * reduce_max over an empty dimension gives -inf (floats) or the dtype's
//   lowest value (s8 -128, u8 0, s32 -2^31); reduce_sum over nothing gives 0,
//   reduce_mean NaN. `axes` absent reduces all dims; `axes = []` none.
// * clamp: absent bounds are -inf/+inf; for integer tensors the bounds
//   become ceil(min) / floor(max) (the integers inside [min, max]) and the
//   result saturates to the dtype; applied as min(max(x, min), max).
// * cast: round half to even and saturate into integers; NaN -> 0;
//   -> bool is x != 0 (so NaN -> true); bool -> 0/1; bf16/f16 -> f32 exact;
//   integer -> integer saturates.
// * quantize / dequantize compute in f32 with the scale rounded to f32 (what
//   a vectorized kernel does, so int8 outputs compare bit-exactly):
//   q = saturate(round_half_even(x /_f32 scale) + zero_point), NaN ->
//   zero_point; y = f32(x - zero_point) *_f32 scale. Per-channel parameters
//   index the `axis` dimension.
// * gelu: "none" = 0.5x(1 + erf(x/sqrt 2)); "tanh" =
//   0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))).
// * layernorm: biased variance (divide by N), two-pass, in double:
//   (x - mean) / sqrt(var + epsilon) * gamma + beta.
// * fusion (the passes' fused groups, docs/compiler.md §1) runs its body
//   graph, found by name in the module holding the op's graph, on its
//   operands: exactly the numbers of the unfused ops. Bodies nest at most 64
//   deep.
// * Rounding uses the default floating-point environment (round to nearest
//   even); nothing in hgc changes it.
//
// Every result (and every scratch buffer) is held to
// Options::max_tensor_bytes: a graph with huge shapes gives
// ResourceExhausted, never an out-of-memory abort. Bad inputs (wrong count or
// types, an unverified graph with a bad op) give InvalidArgument; nothing
// reachable from input aborts.
#ifndef HGC_RUNTIME_PORTABLE_EVALUATE_H_
#define HGC_RUNTIME_PORTABLE_EVALUATE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attribute.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace hgc {
namespace portable {

struct Options {
  // The largest tensor (or scratch buffer) one op may allocate.
  int64_t max_tensor_bytes = Tensor::kDefaultMaxBytes;
};

// Evaluates one op of a graph on `operands` (which must have the types of
// the op's operands). The op must have one result; its type is checked
// against inference. A `fusion` op evaluates its body graph
// (EvaluateGraph), which needs the op's graph to belong to a Module
// (InvalidArgument otherwise).
absl::StatusOr<Tensor> EvaluateOp(const Op& op,
                                  absl::Span<const Tensor> operands,
                                  const Options& options = {});

// Evaluates `kind(operands) {attrs}` without a graph (unit tests, constant
// folding). Runs the op registry's inference first, so any invalid
// combination is InvalidArgument rather than undefined behaviour.
// `result_type` is required for `constant` and, when given for other ops,
// must equal the inferred type. `fusion` is Unimplemented here (it needs
// its module; use the Op overload).
absl::StatusOr<Tensor> EvaluateOp(
    absl::string_view kind, absl::Span<const Tensor> operands,
    const AttrMap& attrs = {},
    const std::optional<TensorType>& result_type = std::nullopt,
    const Options& options = {});

// Evaluates `graph` on `inputs` (one per parameter, in order; each must
// have exactly its parameter's type, else InvalidArgument naming the
// parameter), op by op with EvaluateOp, and returns one Tensor per graph
// result. Errors from an op name the value it defines. Tensors are freed
// after their last use. A result that is a parameter shares the input's
// buffer (Tensor copies share data). This is the walk a fusion op's body
// takes, and the reference interpreter's Interpret.
absl::StatusOr<std::vector<Tensor>> EvaluateGraph(
    const Graph& graph, absl::Span<const Tensor> inputs,
    const Options& options = {});

// Whether EvaluateOp can evaluate `kind` (fusion: through its body).
bool HasKernel(absl::string_view kind);

}  // namespace portable
}  // namespace hgc

#endif  // HGC_RUNTIME_PORTABLE_EVALUATE_H_
