#include "fuzz/graph_generator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/attribute.h"
#include "ir/builder.h"
#include "ir/dtype.h"
#include "ir/tensor_type.h"

namespace hgc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(SplitMix(seed)) {}
  // Uniform in [lo, hi].
  int64_t Int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(engine_);
  }
  double Real(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(engine_);
  }
  bool Chance(double p) { return Real(0, 1) < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int64_t>(v.size()) - 1))];
  }
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

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

class Generator {
 public:
  Generator(uint64_t seed, const GenerateOptions& options)
      : rng_(seed), options_(options) {
    graph_ = result_.module.AddGraph("fuzz");
  }

  absl::StatusOr<GeneratedGraph> Run() {
    result_.kind = options_.fixed_kind
                       ? options_.kind
                       : kAllGraphKinds[rng_.Int(
                             0, std::size(kAllGraphKinds) - 1)];
    Value* last = nullptr;
    switch (result_.kind) {
      case GraphKind::kElementwise: last = Elementwise(); break;
      case GraphKind::kMatmul: last = MatmulGraph(); break;
      case GraphKind::kMlp: last = Mlp(); break;
      case GraphKind::kRowwise: last = Rowwise(); break;
      case GraphKind::kShapes: last = Shapes(); break;
      case GraphKind::kBf16: last = Bf16(); break;
      case GraphKind::kInt8: last = Int8(); break;
      case GraphKind::kAttention: last = Attention(); break;
      case GraphKind::kMixed: last = Mixed(); break;
    }
    if (last == nullptr) {
      // A recipe that could not build anything: a plain chain instead.
      last = Chain(Input(FloatType(RandomShape(2, 512))), 3);
    }
    // A short random tail.
    if (rng_.Chance(0.3)) last = Chain(last, static_cast<int>(rng_.Int(1, 3)));
    std::vector<Value*> results = {last};
    // Several results: intermediates (then used twice) or a parameter.
    int extra = rng_.Chance(0.3) ? static_cast<int>(rng_.Int(1, 2)) : 0;
    for (int i = 0; i < extra && !pool_.empty(); ++i) {
      Value* v = rng_.Pick(pool_);
      if (std::find(results.begin(), results.end(), v) == results.end()) {
        results.push_back(v);
      }
    }
    if (rng_.Chance(0.02) && graph_->num_params() > 0) {
      results.push_back(graph_->param(0));
    }
    if (rng_.Chance(0.3)) std::shuffle(results.begin(), results.end(), rng_.engine());
    std::vector<TensorType> types;
    for (Value* v : results) types.push_back(v->type());
    graph_->SetResults(results);
    graph_->SetDeclaredResultTypes(std::move(types));
    return std::move(result_);
  }

 private:
  // ---- Building blocks ------------------------------------------------------

  Value* Op(absl::string_view kind, std::vector<Value*> operands,
            AttrMap attrs = {}, std::vector<TensorType> declared = {}) {
    for (Value* operand : operands) {
      if (operand == nullptr) return nullptr;
    }
    Builder b(graph_);
    absl::StatusOr<Value*> v =
        b.Create(kind, std::move(operands), std::move(attrs), std::move(declared));
    if (!v.ok()) return nullptr;
    pool_.push_back(*v);
    return *v;
  }

  Value* Input(TensorType type, bool is_const = false) {
    std::string name =
        absl::StrCat(is_const ? "w" : "x", graph_->num_params());
    Value* p = graph_->AddParam(std::move(name), std::move(type), is_const);
    pool_.push_back(p);
    return p;
  }

  double ConstValue(DType d) {
    if (options_.special_values && rng_.Chance(0.5) && IsFloatType(d)) {
      static const std::vector<double> kSpecial = {
          -0.0, 0.0, 1e-40, -1e-39, 0.5, 1.5, -2.5, 1.00390625, 1.01171875,
          65520.0, 6e-8};
      return rng_.Pick(kSpecial);
    }
    switch (d) {
      case DType::kS8: return static_cast<double>(rng_.Int(-128, 127));
      case DType::kU8: return static_cast<double>(rng_.Int(0, 255));
      case DType::kS32: return static_cast<double>(rng_.Int(-100000, 100000));
      case DType::kBool: return static_cast<double>(rng_.Int(0, 1));
      default: {
        // Values on a coarse grid, exact in every float type.
        const std::vector<double> simple = {0.0, 1.0, -1.0, 0.5, 2.0, 0.125,
                                            -3.0, 0.7071067811865476, 7.0};
        return rng_.Chance(0.6) ? rng_.Pick(simple)
                                : std::round(rng_.Real(-4, 4) * 256) / 256;
      }
    }
  }

  Attribute NumberAttr(double v, DType d) {
    if (IsFloatType(d)) return Attribute::Float(v);
    return Attribute::Int(static_cast<int64_t>(v));
  }

  // A literal constant of `type` (a scalar, a splat or a full list).
  Value* Const(TensorType type) {
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

  int64_t Dim() {
    static const std::vector<int64_t> kDims = {1, 2, 3, 4, 5, 7, 8, 15, 16,
                                               17, 31, 32, 33, 64, 65};
    if (options_.special_values && rng_.Chance(0.04) &&
        options_.empty_tensors) {
      return 0;
    }
    return rng_.Pick(kDims);
  }

  Shape RandomShape(int max_rank, int64_t max_elements) {
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

  // A shape that broadcasts to `s` under numpy's rules.
  Shape BroadcastShape(const Shape& s) {
    Shape r(s.begin() + rng_.Int(0, static_cast<int64_t>(s.size())), s.end());
    for (int64_t& d : r) {
      if (rng_.Chance(0.35)) d = 1;
    }
    return r;
  }

  DType FloatDType() {
    const double r = rng_.Real(0, 1);
    return r < 0.7 ? DType::kF32 : r < 0.9 ? DType::kBF16 : DType::kF16;
  }
  DType AnyDType() {
    const double r = rng_.Real(0, 1);
    if (r < 0.6) return DType::kF32;
    if (r < 0.72) return DType::kBF16;
    if (r < 0.77) return DType::kF16;
    if (r < 0.86) return DType::kS32;
    if (r < 0.93) return DType::kS8;
    return DType::kU8;
  }
  TensorType FloatType(Shape s) { return TensorType(FloatDType(), std::move(s)); }

  // An operand of dtype `d` broadcasting to `shape`: a new parameter (const
  // or not), a literal constant, or a pool value that fits (used twice).
  Value* Operand(DType d, const Shape& shape) {
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

  // One random elementwise op on x (keeping x's dtype, mostly).
  Value* ElementwiseOp(Value* x) {
    const DType d = x->type().dtype;
    const Shape& s = x->type().shape;
    if (d == DType::kBool) {
      Value* a = Operand(DType::kF32, s);
      return Op("select", {x, a, Operand(DType::kF32, s)});
    }
    const int choice = static_cast<int>(rng_.Int(0, 9));
    if (IsFloatType(d)) {
      static const std::vector<std::string> kUnary = {
          "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "neg", "abs"};
      static const std::vector<std::string> kBinary = {"add", "sub", "mul",
                                                       "div", "max", "min"};
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
          return rng_.Chance(0.75) ? Op(rng_.Pick(kBinary), {x, y})
                                   : Op(rng_.Pick(kBinary), {y, x});
        }
        case 5:
          return Op("gelu", {x},
                    {{"approximate",
                      Attribute::String(rng_.Chance(0.5) ? "none" : "tanh")}});
        case 6: {
          AttrMap attrs;
          double lo = rng_.Real(-1, 0.5);
          if (rng_.Chance(0.8)) attrs["min"] = Attribute::Float(lo);
          if (rng_.Chance(0.8)) attrs["max"] = Attribute::Float(lo + rng_.Real(0, 1.5));
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
                                                 DType::kF32, DType::kS32,
                                                 DType::kS8, DType::kU8};
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
        Value* c = Op(rng_.Chance(0.5) ? "greater" : "less_equal",
                      {x, Operand(d, s)});
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

  // n elementwise ops after x (skipping refused ones).
  Value* Chain(Value* x, int n) {
    for (int i = 0; i < n; ++i) {
      Value* y = ElementwiseOp(x);
      if (y != nullptr) x = y;
    }
    return x;
  }

  // ---- Row-wise and shape ops -------------------------------------------------

  Value* RowOp(Value* x) {
    const Shape& s = x->type().shape;
    const int64_t rank = static_cast<int64_t>(s.size());
    const int choice = static_cast<int>(rng_.Int(0, 4));
    if (x->type().dtype != DType::kF32 && x->type().dtype != DType::kBF16 &&
        x->type().dtype != DType::kF16 && choice < 2) {
      return Op("reduce_sum", {x});
    }
    if (choice == 0 && rank > 0) {
      int64_t axis = rng_.Chance(0.7) ? -1 : rng_.Int(-rank, rank - 1);
      return Op("softmax", {x}, {{"axis", Attribute::Int(axis)}});
    }
    if (choice == 1 && rank > 0) {
      int64_t axis = rng_.Chance(0.7) ? rank - 1 : rng_.Int(0, rank - 1);
      Shape ns(s.begin() + axis, s.end());
      TensorType nt(x->type().dtype, ns);
      Value* gamma = rng_.Chance(0.5) ? Input(nt, rng_.Chance(0.7)) : Const(nt);
      Value* beta = rng_.Chance(0.5) ? Input(nt, rng_.Chance(0.7)) : Const(nt);
      AttrMap attrs = {{"axis", Attribute::Int(rng_.Chance(0.5) ? axis : axis - rank)}};
      if (rng_.Chance(0.3)) attrs["epsilon"] = Attribute::Float(rng_.Chance(0.5) ? 1e-12 : 0.1);
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

  Value* TransposeOp(Value* x) {
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

  Value* ReshapeOp(Value* x) {
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

  // ---- Recipes ---------------------------------------------------------------

  Value* Elementwise() {
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

  int64_t MatDim() {
    static const std::vector<int64_t> kDims = {1,  2,  3,  5,  7,  13, 16,  17,
                                               31, 33, 48, 64, 65, 100, 127, 129};
    if (options_.special_values && rng_.Chance(0.05) &&
        options_.empty_tensors) {
      return 0;
    }
    return rng_.Pick(kDims);
  }

  Value* MatmulGraph() {
    const DType d = rng_.Chance(0.7) ? DType::kF32
                    : rng_.Chance(0.8) ? DType::kBF16
                                       : DType::kF16;
    int64_t m = MatDim(), k = MatDim(), n = MatDim();
    while (m * k * n > 600000) {
      if (k > 16) k /= 2; else if (m > 16) m /= 2; else n /= 2;
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
      if (trans) { s.push_back(c); s.push_back(r); }
      else { s.push_back(r); s.push_back(c); }
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

  Value* Activation(Value* x) {
    switch (rng_.Int(0, 5)) {
      case 0: return x;
      case 1: return Op("sigmoid", {x});
      case 2: return Op("tanh", {x});
      case 3: return Op("gelu", {x});
      default: return Op("relu", {x});
    }
  }

  Value* Mlp() {
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

  Value* Rowwise() {
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

  Value* Shapes() {
    TensorType t(AnyDType(), RandomShape(4, 4096));
    Value* x = Input(t);
    const int steps = static_cast<int>(rng_.Int(2, 5));
    for (int i = 0; i < steps; ++i) {
      Value* y = nullptr;
      switch (rng_.Int(0, 3)) {
        case 0: y = TransposeOp(x); break;
        case 1: y = ReshapeOp(x); break;
        default: y = ElementwiseOp(x); break;
      }
      if (y != nullptr) x = y;
    }
    return x;
  }

  Value* Bf16() {
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

  AttrMap QuantAttrs(DType to, int64_t channels, int64_t axis, bool quantize) {
    AttrMap attrs;
    auto scale = [&] {
      static const std::vector<double> kScales = {0.01, 0.05, 0.1, 0.25, 0.02,
                                                  0.0078125};
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

  Value* Int8() {
    const int64_t m = MatDim(), k = std::min<int64_t>(MatDim(), 65),
                  n = MatDim();
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
    Value* wq = Input(TensorType(DType::kS8, {k, n}), rng_.Chance(0.8));
    if (rng_.Chance(0.25)) {
      // The integer matmul itself, to s32, then dequantized.
      Value* acc = Op("matmul", {xq, wq});
      if (acc == nullptr) return nullptr;
      Value* y = Op("dequantize", {acc}, QuantAttrs(DType::kS32, n, 1, false));
      return y == nullptr ? acc : Chain(y, static_cast<int>(rng_.Int(0, 2)));
    }
    Value* xf = Op("dequantize", {xq}, QuantAttrs(ad, 0, 0, false));
    Value* wf = Op("dequantize", {wq}, QuantAttrs(DType::kS8, n, 1, false));
    if (xf == nullptr || wf == nullptr) return nullptr;
    Value* y = Op("matmul", {xf, wf});
    if (y == nullptr) return nullptr;
    if (rng_.Chance(0.7)) y = Op("add", {y, Input(TensorType(DType::kF32, {n}), true)});
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

  Value* Attention() {
    static const std::vector<int64_t> kSeq = {1, 3, 7, 16, 33, 64};
    static const std::vector<int64_t> kHead = {8, 16, 32, 64, 24};
    const int64_t b = rng_.Int(1, 2), h = rng_.Int(1, 4);
    const int64_t sq = rng_.Pick(kSeq);
    const int64_t skv = rng_.Chance(0.6) ? sq : rng_.Pick(kSeq);
    const int64_t dh = rng_.Pick(kHead);
    const int64_t dv = rng_.Chance(0.8) ? dh : rng_.Pick(kHead);
    const DType d = rng_.Chance(0.7) ? DType::kF32 : DType::kBF16;
    const bool bshd = rng_.Chance(0.25);  // inputs as [B, S, H, D]
    const bool mqa = rng_.Chance(0.15);   // one K/V head for all
    const int64_t kvh = mqa ? 1 : h;
    auto input = [&](int64_t heads, int64_t seq, int64_t dim) -> Value* {
      if (!bshd) return Input(TensorType(d, {b, heads, seq, dim}));
      Value* v = Input(TensorType(d, {b, seq, heads, dim}));
      return Op("transpose", {v}, {{"perm", Attribute::IntList({0, 2, 1, 3})}});
    };
    Value* q = input(h, sq, dh);
    Value* v = input(kvh, skv, dv);
    if (q == nullptr || v == nullptr) return nullptr;
    const double scale = 1.0 / std::sqrt(static_cast<double>(dh));
    if (rng_.Chance(0.2)) {
      Value* c = Op("constant", {}, {{"value", Attribute::Float(scale)}},
                    {TensorType(d, {})});
      if (c == nullptr) return nullptr;
      q = Op("mul", {q, c});
      if (q == nullptr) return nullptr;
    }
    Value* s;
    const int kform = static_cast<int>(rng_.Int(0, 2));
    if (kform == 0) {
      Value* k = input(kvh, skv, dh);
      s = Op("matmul", {q, k}, {{"transpose_b", Attribute::Bool(true)}});
    } else if (kform == 1) {
      Value* k = input(kvh, skv, dh);
      Value* kt = Op("transpose", {k}, {{"perm", Attribute::IntList({0, 1, 3, 2})}});
      s = Op("matmul", {q, kt});
    } else {
      Value* kt = Input(TensorType(d, {b, kvh, dh, skv}));
      s = Op("matmul", {q, kt});
    }
    if (s == nullptr) return nullptr;
    if (d == DType::kBF16 && rng_.Chance(0.5)) {
      s = Op("cast", {s}, {{"to", Attribute::Type(DType::kF32)}});
      if (s == nullptr) return nullptr;
    }
    const DType sd = s->type().dtype;
    if (rng_.Chance(0.7)) {
      Value* c = Op("constant", {},
                    {{"value", Attribute::Float(rng_.Chance(0.5)
                                                    ? scale
                                                    : std::sqrt(dh))}},
                    {TensorType(sd, {})});
      if (c == nullptr) return nullptr;
      s = Op(rng_.Chance(0.7) ? "mul" : "div", {s, c});
      if (s == nullptr) return nullptr;
    }
    switch (rng_.Int(0, 4)) {
      case 0:
        break;
      case 1:
      case 2: {
        Shape ms = rng_.Chance(0.6) ? Shape{b, 1, 1, skv} : Shape{1, 1, sq, skv};
        Value* mask = rng_.Chance(0.7) ? Input(TensorType(sd, ms))
                                       : Const(TensorType(sd, ms));
        s = Op("add", {s, mask});
        break;
      }
      case 3: {
        Value* cond = Input(TensorType(DType::kBool, {1, 1, sq, skv}));
        Value* neg = Op("constant", {},
                        {{"value", Attribute::Float(rng_.Chance(0.5) ? -1e9 : -3.0e38)}},
                        {TensorType(sd, {})});
        if (neg == nullptr) return nullptr;
        s = Op("select", {cond, s, neg});
        break;
      }
      default: {
        Value* floor = Input(TensorType(sd, {b, 1, 1, skv}));
        s = Op("max", {s, floor});
        break;
      }
    }
    if (s == nullptr) return nullptr;
    Value* p = Op("softmax", {s}, rng_.Chance(0.5) ? AttrMap{}
                                  : AttrMap{{"axis", Attribute::Int(3)}});
    if (p == nullptr) return nullptr;
    if (p->type().dtype != d) {
      p = Op("cast", {p}, {{"to", Attribute::Type(d)}});
      if (p == nullptr) return nullptr;
    }
    Value* o = Op("matmul", {p, v});
    if (o == nullptr) return nullptr;
    if (rng_.Chance(0.5)) {
      Value* t = Op("transpose", {o}, {{"perm", Attribute::IntList({0, 2, 1, 3})}});
      if (t == nullptr) return o;
      o = t;
      if (rng_.Chance(0.7)) {
        Value* r = Op("reshape", {o}, {{"shape", Attribute::IntList({b, sq, h * dv})}});
        if (r != nullptr) o = r;
      }
    }
    if (d == DType::kBF16 && rng_.Chance(0.3)) {
      Value* c = Op("cast", {o}, {{"to", Attribute::Type(DType::kF32)}});
      if (c != nullptr) o = c;
    }
    return o;
  }

  Value* Mixed() {
    Value* x = Input(TensorType(AnyDType(), RandomShape(4, 4096)));
    const int steps = static_cast<int>(rng_.Int(3, 10));
    for (int i = 0; i < steps; ++i) {
      if (rng_.Chance(0.25) && !pool_.empty()) x = rng_.Pick(pool_);
      Value* y = nullptr;
      switch (rng_.Int(0, 9)) {
        case 0: y = RowOp(x); break;
        case 1: y = TransposeOp(x); break;
        case 2: y = ReshapeOp(x); break;
        case 3: {
          const Shape& s = x->type().shape;
          if (s.size() >= 1 && IsFloatType(x->type().dtype)) {
            Shape ws = {s.back(), MatDim()};
            y = Op("matmul", {x, Input(TensorType(x->type().dtype, ws),
                                       rng_.Chance(0.5))});
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
        default: y = ElementwiseOp(x); break;
      }
      if (y != nullptr) x = y;
    }
    return x;
  }

  Rng rng_;
  GenerateOptions options_;
  GeneratedGraph result_;
  Graph* graph_;
  std::vector<Value*> pool_;
};

}  // namespace

absl::string_view GraphKindName(GraphKind kind) {
  switch (kind) {
    case GraphKind::kElementwise: return "elementwise";
    case GraphKind::kMatmul: return "matmul";
    case GraphKind::kMlp: return "mlp";
    case GraphKind::kRowwise: return "rowwise";
    case GraphKind::kShapes: return "shapes";
    case GraphKind::kBf16: return "bf16";
    case GraphKind::kInt8: return "int8";
    case GraphKind::kAttention: return "attention";
    case GraphKind::kMixed: return "mixed";
  }
  return "?";
}

bool ParseGraphKind(absl::string_view name, GraphKind* kind) {
  for (GraphKind k : kAllGraphKinds) {
    if (GraphKindName(k) == name) {
      *kind = k;
      return true;
    }
  }
  return false;
}

absl::StatusOr<GeneratedGraph> GenerateGraph(uint64_t seed,
                                             const GenerateOptions& options) {
  return Generator(seed, options).Run();
}

Tensor SpecialTensor(const TensorType& type, uint64_t seed, uint64_t stream) {
  Tensor t = *Tensor::Create(type);
  Rng rng(SplitMix(seed) ^ SplitMix(stream + 0x1234));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  static const std::vector<double> kFloat = {
      0.0, -0.0, kInf, -kInf, nan, 1e-40, -1e-40, 1.4e-45, -2.5, -0.5, 0.5,
      1.5, 2.5, 1.00390625, 1.01171875, -1.00390625, 65520.0, 6e-8, 1e-5,
      100.0, -100.0, 1.0, -1.0};
  static const std::vector<double> kS8 = {-128, 127, 0, -1, 1, 126, -127};
  static const std::vector<double> kU8 = {0, 255, 1, 128, 127, 254};
  static const std::vector<double> kS32 = {-2147483648.0, 2147483647.0, 0, -1,
                                           1, 65536, -65536};
  const double special = rng.Real(0.1, 0.6);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const bool sp = rng.Chance(special);
    double v;
    switch (type.dtype) {
      case DType::kS8: v = sp ? rng.Pick(kS8) : rng.Int(-32, 32); break;
      case DType::kU8: v = sp ? rng.Pick(kU8) : rng.Int(0, 64); break;
      case DType::kS32: v = sp ? rng.Pick(kS32) : rng.Int(-1000, 1000); break;
      case DType::kBool: v = rng.Int(0, 1); break;
      default:
        v = sp ? rng.Pick(kFloat) : std::round(rng.Real(-4, 4) * 4096) / 4096;
    }
    t.SetDouble(i, v);
  }
  return t;
}

}  // namespace hgc
