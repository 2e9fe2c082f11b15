// The Generator's building blocks (fuzz/generator_blocks.h): parameters,
// literal constants, random shapes and dtypes, operands, and the op helpers
// the recipes (fuzz/graph_recipes.cc) share.
#include "fuzz/generator_blocks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/builder.h"

namespace hgc {
namespace generator_internal {

bool IsFloatType(DType d) {
  return d == DType::kF32 || d == DType::kBF16 || d == DType::kF16;
}
bool IsIntType(DType d) {
  return d == DType::kS32 || d == DType::kS8 || d == DType::kU8;
}

int64_t NumElements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// ---- Parameters and constants -----------------------------------------------

Value* Generator::Op(absl::string_view kind, std::vector<Value*> operands,
                     AttrMap attrs, std::vector<TensorType> declared) {
  for (Value* operand : operands) {
    if (operand == nullptr) return nullptr;
  }
  Builder b(graph_);
  absl::StatusOr<Value*> v = b.Create(kind, std::move(operands),
                                      std::move(attrs), std::move(declared));
  if (!v.ok()) return nullptr;
  pool_.push_back(*v);
  return *v;
}

Value* Generator::Input(TensorType type, bool is_const) {
  std::string name = absl::StrCat(is_const ? "w" : "x", graph_->num_params());
  Value* p = graph_->AddParam(std::move(name), std::move(type), is_const);
  pool_.push_back(p);
  return p;
}

double Generator::ConstValue(DType d) {
  if (options_.special_values && rng_.Chance(0.5) && IsFloatType(d)) {
    static const std::vector<double> kSpecial = {
        -0.0, 0.0,        1e-40,      -1e-39,  0.5, 1.5,
        -2.5, 1.00390625, 1.01171875, 65520.0, 6e-8};
    return rng_.Pick(kSpecial);
  }
  switch (d) {
    case DType::kS8:
      return static_cast<double>(rng_.Int(-128, 127));
    case DType::kU8:
      return static_cast<double>(rng_.Int(0, 255));
    case DType::kS32:
      return static_cast<double>(rng_.Int(-100000, 100000));
    case DType::kBool:
      return static_cast<double>(rng_.Int(0, 1));
    default: {
      // Values on a coarse grid, exact in every float type.
      const std::vector<double> simple = {
          0.0, 1.0, -1.0, 0.5, 2.0, 0.125, -3.0, 0.7071067811865476, 7.0};
      return rng_.Chance(0.6) ? rng_.Pick(simple)
                              : std::round(rng_.Real(-4, 4) * 256) / 256;
    }
  }
}

Attribute Generator::NumberAttr(double v, DType d) {
  if (IsFloatType(d)) return Attribute::Float(v);
  return Attribute::Int(static_cast<int64_t>(v));
}

Value* Generator::Const(TensorType type) {
  AttrMap attrs;
  const int64_t n = NumElements(type.shape);
  if (n > 1 && n <= 64 && rng_.Chance(0.5)) {
    Attribute::List list;
    for (int64_t i = 0; i < n; ++i) {
      list.push_back(NumberAttr(ConstValue(type.dtype), type.dtype));
    }
    attrs["value"] = Attribute::MakeList(std::move(list));
  } else {
    attrs["value"] = NumberAttr(ConstValue(type.dtype), type.dtype);
  }
  return Op("constant", {}, std::move(attrs), {type});
}

// ---- Shapes, dtypes and operands --------------------------------------------

int64_t Generator::Dim() {
  static const std::vector<int64_t> kDims = {1,  2,  3,  4,  5,  7,  8, 15,
                                             16, 17, 31, 32, 33, 64, 65};
  if (options_.special_values && rng_.Chance(0.04) && options_.empty_tensors) {
    return 0;
  }
  return rng_.Pick(kDims);
}

int64_t Generator::MatDim() {
  static const std::vector<int64_t> kDims = {1,  2,  3,  5,  7,  13,  16,  17,
                                             31, 33, 48, 64, 65, 100, 127, 129};
  if (options_.special_values && rng_.Chance(0.05) && options_.empty_tensors) {
    return 0;
  }
  return rng_.Pick(kDims);
}

Shape Generator::RandomShape(int max_rank, int64_t max_elements) {
  const int rank = static_cast<int>(rng_.Int(0, max_rank));
  Shape s;
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    int64_t d = Dim();
    if (n * std::max<int64_t>(d, 1) > max_elements) d = 1;
    n *= std::max<int64_t>(d, 1);
    s.push_back(d);
  }
  return s;
}

Shape Generator::BroadcastShape(const Shape& s) {
  Shape r(s.begin() + rng_.Int(0, static_cast<int64_t>(s.size())), s.end());
  for (int64_t& d : r) {
    if (rng_.Chance(0.35)) d = 1;
  }
  return r;
}

DType Generator::FloatDType() {
  const double r = rng_.Real(0, 1);
  return r < 0.7 ? DType::kF32 : r < 0.9 ? DType::kBF16 : DType::kF16;
}

DType Generator::AnyDType() {
  const double r = rng_.Real(0, 1);
  if (r < 0.6) return DType::kF32;
  if (r < 0.72) return DType::kBF16;
  if (r < 0.77) return DType::kF16;
  if (r < 0.86) return DType::kS32;
  if (r < 0.93) return DType::kS8;
  return DType::kU8;
}

TensorType Generator::FloatType(Shape s) {
  return TensorType(FloatDType(), std::move(s));
}

Value* Generator::Operand(DType d, const Shape& shape) {
  const double r = rng_.Real(0, 1);
  if (r < 0.25) {
    std::vector<Value*> fits;
    for (Value* v : pool_) {
      if (v->type().dtype != d) continue;
      const Shape& vs = v->type().shape;
      if (vs.size() > shape.size()) continue;
      bool ok = true;
      for (size_t i = 0; i < vs.size(); ++i) {
        int64_t want = shape[shape.size() - vs.size() + i];
        if (vs[i] != want && vs[i] != 1) ok = false;
      }
      if (ok) fits.push_back(v);
    }
    if (!fits.empty()) return rng_.Pick(fits);
  }
  if (r < 0.45) {
    Shape s = rng_.Chance(0.6) ? Shape{} : BroadcastShape(shape);
    return Const(TensorType(d, s));
  }
  return Input(TensorType(d, BroadcastShape(shape)), rng_.Chance(0.3));
}

// ---- Elementwise ops --------------------------------------------------------

Value* Generator::ElementwiseOp(Value* x) {
  const DType d = x->type().dtype;
  const Shape& s = x->type().shape;
  if (d == DType::kBool) {
    Value* a = Operand(DType::kF32, s);
    return Op("select", {x, a, Operand(DType::kF32, s)});
  }
  const int choice = static_cast<int>(rng_.Int(0, 9));
  if (IsFloatType(d)) {
    static const std::vector<std::string> kUnary = {
        "relu", "sigmoid", "tanh", "exp", "log",
        "sqrt", "rsqrt",   "neg",  "abs", "erf"};
    static const std::vector<std::string> kBinary = {
        "add", "sub", "mul", "div", "max", "min", "pow"};
    switch (choice) {
      case 0:
      case 1: {
        const std::string& k = rng_.Pick(kUnary);
        if ((k == "log" || k == "sqrt" || k == "rsqrt") && rng_.Chance(0.7)) {
          x = Op("abs", {x});
          if (x == nullptr) return nullptr;
        }
        return Op(k, {x});
      }
      case 2:
      case 3:
      case 4: {
        Value* y = Operand(d, s);
        const std::string& k = rng_.Pick(kBinary);
        if (rng_.Chance(0.25)) std::swap(x, y);
        // Mostly a positive base: a negative one to a non-integer power is NaN.
        if (k == "pow" && rng_.Chance(0.7)) {
          x = Op("abs", {x});
          if (x == nullptr) return nullptr;
        }
        return Op(k, {x, y});
      }
      case 5:
        return Op("gelu", {x},
                  {{"approximate",
                    Attribute::String(rng_.Chance(0.5) ? "none" : "tanh")}});
      case 6: {
        AttrMap attrs;
        double lo = rng_.Real(-1, 0.5);
        if (rng_.Chance(0.8)) attrs["min"] = Attribute::Float(lo);
        if (rng_.Chance(0.8))
          attrs["max"] = Attribute::Float(lo + rng_.Real(0, 1.5));
        return Op("clamp", {x}, std::move(attrs));
      }
      case 7: {
        static const std::vector<std::string> kCmp = {
            "equal", "greater", "greater_equal", "less", "less_equal"};
        Value* y = Operand(d, s);
        Value* c = Op(rng_.Pick(kCmp), {x, y});
        if (c == nullptr) return nullptr;
        return Op("select", {c, x, Operand(d, s)});
      }
      case 8: {
        // A round trip through another type.
        static const std::vector<DType> kTo = {DType::kBF16, DType::kF16,
                                               DType::kF32,  DType::kS32,
                                               DType::kS8,   DType::kU8};
        DType to = rng_.Pick(kTo);
        Value* c = Op("cast", {x}, {{"to", Attribute::Type(to)}});
        if (c == nullptr || rng_.Chance(0.3)) return c;
        return Op("cast", {c}, {{"to", Attribute::Type(d)}});
      }
      default:
        return Op("mul", {x, Operand(d, s)});
    }
  }
  // Integers.
  static const std::vector<std::string> kIntBinary = {"add", "sub", "mul",
                                                      "max", "min"};
  switch (choice % 5) {
    case 0: {
      static const std::vector<std::string> kIntUnary = {"relu", "neg", "abs"};
      return Op(rng_.Pick(kIntUnary), {x});
    }
    case 1: {
      Value* y = Operand(d, s);
      return Op(rng_.Pick(kIntBinary), {x, y});
    }
    case 2:
      return Op("clamp", {x},
                {{"min", Attribute::Float(rng_.Real(-40, 0))},
                 {"max", Attribute::Float(rng_.Real(0, 40))}});
    case 3: {
      Value* c =
          Op(rng_.Chance(0.5) ? "greater" : "less_equal", {x, Operand(d, s)});
      if (c == nullptr) return nullptr;
      return Op("select", {c, x, Operand(d, s)});
    }
    default: {
      DType to = rng_.Chance(0.5) ? DType::kF32 : DType::kS32;
      if (to == d) to = DType::kS8;
      return Op("cast", {x}, {{"to", Attribute::Type(to)}});
    }
  }
}

Value* Generator::Chain(Value* x, int n) {
  for (int i = 0; i < n; ++i) {
    Value* y = ElementwiseOp(x);
    if (y != nullptr) x = y;
  }
  return x;
}

Value* Generator::Activation(Value* x) {
  switch (rng_.Int(0, 5)) {
    case 0:
      return x;
    case 1:
      return Op("sigmoid", {x});
    case 2:
      return Op("tanh", {x});
    case 3:
      return Op("gelu", {x});
    default:
      return Op("relu", {x});
  }
}

// ---- Row-wise and shape ops -------------------------------------------------

Value* Generator::Softmax(Value* x, int64_t axis, bool axis_attr) {
  if (!rng_.Chance(0.2)) {
    return Op("softmax", {x},
              axis_attr ? AttrMap{{"axis", Attribute::Int(axis)}} : AttrMap{});
  }
  const AttrMap reduce = {{"axes", Attribute::IntList({axis})},
                          {"keep_dims", Attribute::Bool(true)}};
  Value* max = Op("reduce_max", {x}, reduce);
  Value* e = Op("exp", {Op("sub", {x, max})});
  return Op("div", {e, Op("reduce_sum", {e}, reduce)});
}

Value* Generator::RowOp(Value* x) {
  const Shape& s = x->type().shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  const int choice = static_cast<int>(rng_.Int(0, 4));
  if (x->type().dtype != DType::kF32 && x->type().dtype != DType::kBF16 &&
      x->type().dtype != DType::kF16 && choice < 2) {
    return Op("reduce_sum", {x});
  }
  if (choice == 0 && rank > 0) {
    int64_t axis = rng_.Chance(0.7) ? -1 : rng_.Int(-rank, rank - 1);
    return Softmax(x, axis);
  }
  if (choice == 1 && rank > 0) {
    int64_t axis = rng_.Chance(0.7) ? rank - 1 : rng_.Int(0, rank - 1);
    Shape ns(s.begin() + axis, s.end());
    TensorType nt(x->type().dtype, ns);
    Value* gamma = rng_.Chance(0.5) ? Input(nt, rng_.Chance(0.7)) : Const(nt);
    Value* beta = rng_.Chance(0.5) ? Input(nt, rng_.Chance(0.7)) : Const(nt);
    AttrMap attrs = {
        {"axis", Attribute::Int(rng_.Chance(0.5) ? axis : axis - rank)}};
    if (rng_.Chance(0.3))
      attrs["epsilon"] = Attribute::Float(rng_.Chance(0.5) ? 1e-12 : 0.1);
    return Op("layernorm", {x, gamma, beta}, std::move(attrs));
  }
  static const std::vector<std::string> kReduce = {"reduce_sum", "reduce_max",
                                                   "reduce_mean"};
  AttrMap attrs;
  if (rng_.Chance(0.85)) {
    std::vector<int64_t> axes;
    for (int64_t i = 0; i < rank; ++i) {
      if (rng_.Chance(0.4)) axes.push_back(rng_.Chance(0.5) ? i : i - rank);
    }
    if (axes.empty() && rank > 0 && rng_.Chance(0.8)) axes.push_back(-1);
    attrs["axes"] = Attribute::IntList(axes);
  }
  if (rng_.Chance(0.5)) attrs["keep_dims"] = Attribute::Bool(true);
  return Op(rng_.Pick(kReduce), {x}, std::move(attrs));
}

Value* Generator::TransposeOp(Value* x) {
  const int64_t rank = x->type().rank();
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng_.engine());
  if (rng_.Chance(0.2)) {
    for (int64_t& p : perm) p -= rank;
  }
  if (rank > 0 && rng_.Chance(0.1)) return Op("transpose", {x});
  return Op("transpose", {x}, {{"perm", Attribute::IntList(perm)}});
}

Value* Generator::ReshapeOp(Value* x) {
  const Shape& s = x->type().shape;
  const int64_t n = NumElements(s);
  std::vector<int64_t> shape;
  const int choice = static_cast<int>(rng_.Int(0, 3));
  if (choice == 0 || n == 0) {
    // Merge two adjacent dims, or add a unit dim.
    shape.assign(s.begin(), s.end());
    if (shape.size() >= 2) {
      size_t i = static_cast<size_t>(rng_.Int(0, shape.size() - 2));
      shape[i] *= shape[i + 1];
      shape.erase(shape.begin() + i + 1);
    } else {
      shape.insert(shape.begin(), 1);
    }
  } else if (choice == 1) {
    shape = {n};
  } else {
    // Split n into factors.
    int64_t rest = n;
    while (rest > 1 && shape.size() < 4) {
      std::vector<int64_t> divisors;
      for (int64_t f = 2; f <= rest; ++f) {
        if (rest % f == 0) divisors.push_back(f);
      }
      int64_t f = rng_.Pick(divisors);
      shape.push_back(f);
      rest /= f;
    }
    if (rest > 1) shape.back() *= rest;
  }
  if (!shape.empty() && n > 0 && rng_.Chance(0.4)) {
    shape[static_cast<size_t>(rng_.Int(0, shape.size() - 1))] = -1;
  }
  return Op("reshape", {x}, {{"shape", Attribute::IntList(shape)}});
}

Value* Generator::SliceOp(Value* x) {
  const Shape& s = x->type().shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  std::vector<int64_t> starts, ends, axes, steps;
  auto bound = [&](int64_t n) -> int64_t {
    if (rng_.Chance(0.1)) {
      return rng_.Chance(0.5) ? std::numeric_limits<int64_t>::max()
                              : std::numeric_limits<int64_t>::min();
    }
    return rng_.Int(-n - 2, n + 2);
  };
  static const std::vector<int64_t> kSteps = {1, 1, 1, 2, 3, -1, -2};
  for (int64_t d = 0; d < rank; ++d) {
    if (!rng_.Chance(0.6)) continue;
    axes.push_back(rng_.Chance(0.3) ? d - rank : d);
    starts.push_back(bound(s[d]));
    ends.push_back(bound(s[d]));
    steps.push_back(rng_.Pick(kSteps));
  }
  AttrMap attrs = {{"starts", Attribute::IntList(starts)},
                   {"ends", Attribute::IntList(ends)},
                   {"axes", Attribute::IntList(axes)}};
  if (rng_.Chance(0.8)) attrs["steps"] = Attribute::IntList(steps);
  if (rng_.Chance(0.7)) {
    // Keep the slice non-empty most of the time: a wider range.
    for (size_t i = 0; i < starts.size(); ++i) {
      const int64_t n = s[axes[i] < 0 ? axes[i] + rank : axes[i]];
      if (rng_.Chance(0.5)) starts[i] = steps[i] > 0 ? -n : n;
      if (rng_.Chance(0.5)) ends[i] = steps[i] > 0 ? n : -n - 1;
    }
    attrs["starts"] = Attribute::IntList(starts);
    attrs["ends"] = Attribute::IntList(ends);
    attrs["steps"] = Attribute::IntList(steps);
  }
  return Op("slice", {x}, std::move(attrs));
}

Value* Generator::ConcatOp(Value* x) {
  const Shape& s = x->type().shape;
  if (s.empty()) return nullptr;
  const int64_t rank = static_cast<int64_t>(s.size());
  const int64_t axis = rng_.Int(0, rank - 1);
  Shape other = s;
  other[axis] = rng_.Int(0, 4);
  Value* y = Input(TensorType(x->type().dtype, other));
  std::vector<Value*> operands = {x, y};
  if (rng_.Chance(0.3)) operands.push_back(x);
  if (rng_.Chance(0.5)) std::swap(operands[0], operands[1]);
  return Op("concat", operands,
            {{"axis", Attribute::Int(rng_.Chance(0.3) ? axis - rank : axis)}});
}

// ---- Quantization -----------------------------------------------------------

AttrMap Generator::QuantAttrs(DType to, int64_t channels, int64_t axis,
                              bool quantize) {
  AttrMap attrs;
  auto scale = [&] {
    static const std::vector<double> kScales = {0.01, 0.05, 0.1,
                                                0.25, 0.02, 0.0078125};
    return rng_.Pick(kScales);
  };
  auto zp = [&]() -> int64_t {
    if (to == DType::kU8) return rng_.Int(0, 20) + 100 * rng_.Int(0, 1);
    if (to == DType::kS8) return rng_.Chance(0.6) ? 0 : rng_.Int(-10, 10);
    return 0;
  };
  if (channels > 0 && rng_.Chance(0.4)) {
    std::vector<double> scales;
    std::vector<int64_t> zps;
    for (int64_t i = 0; i < channels; ++i) {
      scales.push_back(scale());
      zps.push_back(zp());
    }
    attrs["scale"] = Attribute::FloatList(scales);
    if (rng_.Chance(0.5)) attrs["zero_point"] = Attribute::IntList(zps);
    attrs["axis"] = Attribute::Int(axis);
  } else {
    attrs["scale"] = Attribute::Float(scale());
    const int64_t z = zp();
    if (z != 0 || rng_.Chance(0.2)) attrs["zero_point"] = Attribute::Int(z);
  }
  if (quantize) attrs["to"] = Attribute::Type(to);
  return attrs;
}

}  // namespace generator_internal
}  // namespace hgc
