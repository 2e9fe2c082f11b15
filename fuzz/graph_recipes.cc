// The Generator's recipes (fuzz/generator_blocks.h), one per GraphKind
// (Attention's in fuzz/attention_recipe.cc): each builds the body of one
// graph from the building blocks of fuzz/generator_blocks.cc. GraphKind's
// comment (fuzz/graph_generator.h) says what each recipe makes.
#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "fuzz/generator_blocks.h"

namespace hgc {
namespace generator_internal {

Value* Generator::Elementwise() {
  TensorType t(AnyDType(), RandomShape(4, 4096));
  Value* x = Input(t);
  if (rng_.Chance(0.3)) {
    // Broadcast on the left: a small operand grown by a big one.
    Shape big = t.shape;
    big.insert(big.begin(), Dim());
    Value* y = Input(TensorType(t.dtype, big));
    x = Op("add", {x, y});
    if (x == nullptr) return nullptr;
  }
  return Chain(x, static_cast<int>(rng_.Int(1, 6)));
}

Value* Generator::MatmulGraph() {
  const DType d = rng_.Chance(0.7)   ? DType::kF32
                  : rng_.Chance(0.8) ? DType::kBF16
                                     : DType::kF16;
  int64_t m = MatDim(), k = MatDim(), n = MatDim();
  while (m * k * n > 600000) {
    if (k > 16)
      k /= 2;
    else if (m > 16)
      m /= 2;
    else
      n /= 2;
  }
  Shape batch_a, batch_b;
  const int brank = static_cast<int>(rng_.Int(0, 2));
  for (int i = 0; i < brank; ++i) {
    int64_t bd = rng_.Pick(std::vector<int64_t>{1, 2, 3});
    const int mode = static_cast<int>(rng_.Int(0, 2));
    batch_a.push_back(mode == 1 ? 1 : bd);
    batch_b.push_back(mode == 2 ? 1 : bd);
  }
  if (brank > 0 && rng_.Chance(0.3)) batch_b.clear();  // B shared by batch
  const bool ta = rng_.Chance(0.25), tb = rng_.Chance(0.35);
  // How the transposition is spelled: attribute or a transpose op.
  const bool ta_op = ta && rng_.Chance(0.4), tb_op = tb && rng_.Chance(0.4);
  auto make = [&](Shape batch, int64_t r, int64_t c, bool trans, bool op,
                  bool is_const) -> Value* {
    Shape s = batch;
    if (trans) {
      s.push_back(c);
      s.push_back(r);
    } else {
      s.push_back(r);
      s.push_back(c);
    }
    Value* v = Input(TensorType(d, s), is_const);
    if (trans && op) {
      std::vector<int64_t> perm(s.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
      v = Op("transpose", {v}, {{"perm", Attribute::IntList(perm)}});
    }
    return v;
  };
  Value* a = make(batch_a, m, k, ta, ta_op, false);
  Value* b = make(batch_b, k, n, tb, tb_op, rng_.Chance(0.5));
  if (a == nullptr || b == nullptr) return nullptr;
  if (rng_.Chance(0.2)) a = Chain(a, 1);  // a producer before the matmul
  AttrMap attrs;
  if (ta && !ta_op) attrs["transpose_a"] = Attribute::Bool(true);
  if (tb && !tb_op) attrs["transpose_b"] = Attribute::Bool(true);
  Value* c = Op("matmul", {a, b}, std::move(attrs));
  if (c == nullptr) return nullptr;
  if (rng_.Chance(0.6)) {
    Value* bias = Input(TensorType(d, {n}), rng_.Chance(0.7));
    Value* cb = Op("add", {c, bias});
    if (cb != nullptr) c = cb;
  }
  c = Chain(c, static_cast<int>(rng_.Int(0, 3)));
  if (rng_.Chance(0.2)) {
    Value* t = TransposeOp(c);
    if (t != nullptr) c = Chain(t, 1);
  }
  return c;
}

Value* Generator::Mlp() {
  const int mode = static_cast<int>(rng_.Int(0, 2));  // f32, bf16, casts
  const DType d = mode == 1 ? DType::kBF16 : DType::kF32;
  const int64_t batch = MatDim();
  int64_t width = MatDim();
  Value* x = Input(TensorType(d, {batch, width}));
  const int layers = static_cast<int>(rng_.Int(1, 4));
  for (int i = 0; i < layers; ++i) {
    const int64_t next = MatDim();
    Value* a = x;
    DType wd = d;
    if (mode == 2) {
      a = Op("cast", {x}, {{"to", Attribute::Type(DType::kBF16)}});
      wd = DType::kBF16;
      if (a == nullptr) return nullptr;
    }
    Value* w = Input(TensorType(wd, {width, next}), true);
    Value* y = Op("matmul", {a, w});
    if (y == nullptr) return nullptr;
    if (mode == 2) y = Op("cast", {y}, {{"to", Attribute::Type(DType::kF32)}});
    if (rng_.Chance(0.85)) {
      y = Op("add", {y, Input(TensorType(d, {next}), true)});
    }
    if (y == nullptr) return nullptr;
    Value* act = Activation(y);
    x = act != nullptr ? act : y;
    width = next;
  }
  return x;
}

Value* Generator::Rowwise() {
  TensorType t(FloatDType(), RandomShape(4, 4096));
  if (t.shape.empty()) t.shape.push_back(Dim());
  Value* x = Input(t);
  if (rng_.Chance(0.5)) x = Chain(x, 1);
  Value* y = RowOp(x);
  if (y == nullptr) return x;
  if (rng_.Chance(0.3)) {
    Value* z = RowOp(y);
    if (z != nullptr) y = z;
  }
  return Chain(y, static_cast<int>(rng_.Int(0, 2)));
}

Value* Generator::Shapes() {
  TensorType t(AnyDType(), RandomShape(4, 4096));
  Value* x = Input(t);
  const int steps = static_cast<int>(rng_.Int(2, 5));
  for (int i = 0; i < steps; ++i) {
    Value* y = nullptr;
    switch (rng_.Int(0, 5)) {
      case 0:
        y = TransposeOp(x);
        break;
      case 1:
        y = ReshapeOp(x);
        break;
      case 2:
        y = SliceOp(x);
        break;
      case 3:
        y = ConcatOp(x);
        break;
      default:
        y = ElementwiseOp(x);
        break;
    }
    if (y != nullptr) x = y;
  }
  return x;
}

Value* Generator::Bf16() {
  TensorType t(rng_.Chance(0.6) ? DType::kF32 : DType::kBF16,
               RandomShape(3, 4096));
  Value* x = Input(t);
  const int steps = static_cast<int>(rng_.Int(2, 5));
  for (int i = 0; i < steps; ++i) {
    Value* y;
    if (rng_.Chance(0.5)) {
      DType to = x->type().dtype == DType::kF32
                     ? (rng_.Chance(0.8) ? DType::kBF16 : DType::kF16)
                     : DType::kF32;
      y = Op("cast", {x}, {{"to", Attribute::Type(to)}});
    } else {
      y = ElementwiseOp(x);
    }
    if (y != nullptr) x = y;
  }
  return x;
}

Value* Generator::Int8() {
  const int64_t m = MatDim(), k = std::min<int64_t>(MatDim(), 65), n = MatDim();
  const DType ad = rng_.Chance(0.6) ? DType::kU8 : DType::kS8;
  Value* xq;
  if (rng_.Chance(0.4)) {
    // f32 activations quantized in the graph.
    Value* x = Input(TensorType(DType::kF32, {m, k}));
    xq = Op("quantize", {x}, QuantAttrs(ad, k, 1, true));
  } else {
    xq = Input(TensorType(ad, {m, k}));
  }
  if (xq == nullptr) return nullptr;
  if (rng_.Chance(0.25)) {
    // The integer matmul itself, to s32, then dequantized.
    const DType wd = rng_.Chance(0.7) ? DType::kS8 : DType::kU8;
    Value* wq = Input(TensorType(wd, {k, n}), rng_.Chance(0.8));
    Value* acc = Op("matmul", {xq, wq});
    if (acc == nullptr) return nullptr;
    Value* y = Op("dequantize", {acc}, QuantAttrs(DType::kS32, n, 1, false));
    return y == nullptr ? acc : Chain(y, static_cast<int>(rng_.Int(0, 2)));
  }
  // The QDQ form: s8 or u8 weights (any zero points, per channel along N),
  // stored [K, N] or [N, K].
  const DType wd = rng_.Chance(0.6) ? DType::kS8 : DType::kU8;
  const bool transpose_b = rng_.Chance(0.3);
  Value* wq = Input(TensorType(wd, transpose_b ? Shape{n, k} : Shape{k, n}),
                    rng_.Chance(0.8));
  Value* xf = Op("dequantize", {xq}, QuantAttrs(ad, 0, 0, false));
  Value* wf =
      Op("dequantize", {wq}, QuantAttrs(wd, n, transpose_b ? 0 : 1, false));
  if (xf == nullptr || wf == nullptr) return nullptr;
  Value* y =
      Op("matmul", {xf, wf}, {{"transpose_b", Attribute::Bool(transpose_b)}});
  if (y == nullptr) return nullptr;
  if (rng_.Chance(0.7))
    y = Op("add", {y, Input(TensorType(DType::kF32, {n}), true)});
  if (y == nullptr) return nullptr;
  Value* act = Activation(y);
  if (act != nullptr) y = act;
  if (rng_.Chance(0.7)) {
    const DType to = rng_.Chance(0.5) ? DType::kU8 : DType::kS8;
    Value* q = Op("quantize", {y}, QuantAttrs(to, n, 1, true));
    if (q == nullptr) return y;
    if (rng_.Chance(0.5)) {
      Value* dq = Op("dequantize", {q}, QuantAttrs(to, n, 1, false));
      if (dq != nullptr) return dq;
    }
    return q;
  }
  return y;
}

Value* Generator::Mixed() {
  Value* x = Input(TensorType(AnyDType(), RandomShape(4, 4096)));
  const int steps = static_cast<int>(rng_.Int(3, 10));
  for (int i = 0; i < steps; ++i) {
    if (rng_.Chance(0.25) && !pool_.empty()) x = rng_.Pick(pool_);
    Value* y = nullptr;
    switch (rng_.Int(0, 9)) {
      case 0:
        y = RowOp(x);
        break;
      case 1:
        y = TransposeOp(x);
        break;
      case 2:
        y = ReshapeOp(x);
        break;
      case 3: {
        const Shape& s = x->type().shape;
        if (s.size() >= 1 && IsFloatType(x->type().dtype)) {
          Shape ws = {s.back(), MatDim()};
          y = Op("matmul",
                 {x, Input(TensorType(x->type().dtype, ws), rng_.Chance(0.5))});
          if (s.size() == 1) y = nullptr;
        }
        break;
      }
      case 4: {
        if (x->type().dtype == DType::kF32) {
          const DType to = rng_.Chance(0.5) ? DType::kU8 : DType::kS8;
          y = Op("quantize", {x}, QuantAttrs(to, 0, 0, true));
        } else if (IsIntType(x->type().dtype)) {
          y = Op("dequantize", {x}, QuantAttrs(x->type().dtype, 0, 0, false));
        }
        break;
      }
      default:
        y = ElementwiseOp(x);
        break;
    }
    if (y != nullptr) x = y;
  }
  return x;
}

}  // namespace generator_internal
}  // namespace hgc
