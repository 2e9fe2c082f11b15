// The per-op dispatch: exact semantics of the simple ops against the
// reference interpreter's rules (runtime/portable/elementwise.cc), integer
// signedness and wrap-around, attributes, bf16 result rounding, and errors.
#include "codegen/llvm/elemental_emitter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <vector>

#include "codegen/llvm/array_kernel.h"
#include "gtest/gtest.h"
#include "ir/attribute.h"
#include "llvm/IR/LLVMContext.h"
#include "support/float16.h"

namespace hgc {
namespace codegen {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

const std::vector<float> kFloats = {0.0f,  -0.0f,  1.0f,    -1.0f, 0.5f,  -2.5f,
                                    3.0f,  1e-45f, -1e-45f, kInf,  -kInf, kNaN,
                                    1e30f, -7.25f, 2.0f,    0.25f};

bool SameFloat(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || FloatBits(a) == FloatBits(b);
}

// Runs op(kind) elementwise through EmitElementwise.
template <typename Out, typename In>
std::vector<Out> RunOp(absl::string_view kind, std::vector<DType> dtypes,
                       DType result, Elem in_elem, Elem out_elem,
                       std::initializer_list<std::vector<In>> input_list,
                       const AttrMap& attrs = {}) {
  const std::vector<std::vector<In>> inputs(input_list);
  absl::StatusOr<ArrayKernel> kernel = ArrayKernel::Create(
      std::vector<Elem>(inputs.size(), in_elem), out_elem,
      [&](llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& in) {
        absl::StatusOr<llvm::Value*> r = EmitElementwise(
            b, *OpKindFromName(kind), dtypes, result, in, attrs);
        EXPECT_TRUE(r.ok()) << r.status();
        return r.ok() ? *r : in[0];
      });
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  std::vector<const void*> ptrs;
  for (const auto& v : inputs) ptrs.push_back(v.data());
  std::vector<Out> out(inputs[0].size());
  if (kernel.ok()) kernel->Run(ptrs, out.data(), out.size());
  return out;
}

// All pairs of kFloats as two parallel arrays.
void Pairs(std::vector<float>* a, std::vector<float>* b) {
  for (float x : kFloats) {
    for (float y : kFloats) {
      a->push_back(x);
      b->push_back(y);
    }
  }
}

TEST(ElementalEmitterTest, FloatBinaryMatchesReference) {
  std::vector<float> a, b;
  Pairs(&a, &b);
  const DType f = DType::kF32;
  auto max = RunOp<float>("max", {f, f}, f, Elem::kF32, Elem::kF32, {a, b});
  auto min = RunOp<float>("min", {f, f}, f, Elem::kF32, Elem::kF32, {a, b});
  auto add = RunOp<float>("add", {f, f}, f, Elem::kF32, Elem::kF32, {a, b});
  auto div = RunOp<float>("div", {f, f}, f, Elem::kF32, Elem::kF32, {a, b});
  auto ge = RunOp<uint8_t>("greater_equal", {f, f}, DType::kBool, Elem::kF32,
                           Elem::kI8, {a, b});
  auto eq = RunOp<uint8_t>("equal", {f, f}, DType::kBool, Elem::kF32, Elem::kI8,
                           {a, b});
  for (size_t i = 0; i < a.size(); ++i) {
    const bool nan = std::isnan(a[i]) || std::isnan(b[i]);
    // numpy.maximum: NaN wins; otherwise a > b ? a : b (ties give b).
    const float want_max = nan ? kNaN : (a[i] > b[i] ? a[i] : b[i]);
    const float want_min = nan ? kNaN : (a[i] < b[i] ? a[i] : b[i]);
    EXPECT_TRUE(SameFloat(max[i], want_max)) << a[i] << " " << b[i];
    EXPECT_TRUE(SameFloat(min[i], want_min)) << a[i] << " " << b[i];
    EXPECT_TRUE(SameFloat(add[i], a[i] + b[i]));
    EXPECT_TRUE(SameFloat(div[i], a[i] / b[i]));
    EXPECT_EQ(ge[i], a[i] >= b[i] ? 1 : 0);
    EXPECT_EQ(eq[i], a[i] == b[i] ? 1 : 0);
  }
}

// libm's powf against pow in double rounded once (the reference): at most
// 1 ulp apart on a sweep of bases and exponents, the kPowUlps of
// reference/elementwise_bounds.cc; zeros, infinities and NaNs agree
// exactly.
TEST(ElementalEmitterTest, PowIsWithinOneUlpOfTheReference) {
  std::vector<float> a, b;
  Pairs(&a, &b);
  for (int i = 1; i <= 400; ++i) {
    for (float e : {-7.5f, -2.0f, -0.37f, 0.5f, 1.0f / 3, 2.0f, 3.7f, 11.0f}) {
      a.push_back(i * 0.0137f);
      b.push_back(e);
    }
    a.push_back(-0.25f * i);
    b.push_back(static_cast<float>(i % 7 - 3));
  }
  const DType f = DType::kF32;
  auto pow = RunOp<float>("pow", {f, f}, f, Elem::kF32, Elem::kF32, {a, b});
  int max_ulps = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const float want = static_cast<float>(std::pow(double{a[i]}, double{b[i]}));
    if (!std::isfinite(want) || want == 0) {
      EXPECT_TRUE(SameFloat(pow[i], want)) << a[i] << " ^ " << b[i];
      continue;
    }
    ASSERT_EQ(std::signbit(pow[i]), std::signbit(want));
    const int ulps = std::abs(static_cast<int>(FloatBits(pow[i])) -
                              static_cast<int>(FloatBits(want)));
    max_ulps = std::max(max_ulps, ulps);
  }
  EXPECT_LE(max_ulps, 1);
}

TEST(ElementalEmitterTest, FloatUnaryMatchesReference) {
  const DType f = DType::kF32;
  auto relu = RunOp<float>("relu", {f}, f, Elem::kF32, Elem::kF32, {kFloats});
  auto neg = RunOp<float>("neg", {f}, f, Elem::kF32, Elem::kF32, {kFloats});
  auto abs = RunOp<float>("abs", {f}, f, Elem::kF32, Elem::kF32, {kFloats});
  AttrMap bounds = {{"min", Attribute::Float(-1.0)},
                    {"max", Attribute::Int(2)}};
  auto clamp =
      RunOp<float>("clamp", {f}, f, Elem::kF32, Elem::kF32, {kFloats}, bounds);
  auto lower = RunOp<float>("clamp", {f}, f, Elem::kF32, Elem::kF32, {kFloats},
                            {{"min", Attribute::Float(0.1)}});
  for (size_t i = 0; i < kFloats.size(); ++i) {
    const float x = kFloats[i];
    EXPECT_TRUE(SameFloat(relu[i], std::isnan(x) ? x : (x > 0 ? x : 0.0f)))
        << x;
    EXPECT_TRUE(SameFloat(neg[i], -x));
    EXPECT_TRUE(SameFloat(abs[i], std::fabs(x)));
    float c = x;
    if (c < -1.0f) c = -1.0f;
    if (c > 2.0f) c = 2.0f;
    EXPECT_TRUE(SameFloat(clamp[i], c)) << x;
    // min = 0.1 (not a float): x < 0.1 in double, stored as f32(0.1).
    const double d = x;
    const float want = static_cast<float>(d < 0.1 ? 0.1 : d);
    EXPECT_TRUE(SameFloat(lower[i], want)) << x;
  }
}

TEST(ElementalEmitterTest, IntegerOpsWrapAndRespectSignedness) {
  std::vector<uint8_t> a, b;
  for (int x : {0, 1, 2, 127, 128, 200, 255}) {
    for (int y : {0, 1, 100, 128, 255}) {
      a.push_back(static_cast<uint8_t>(x));
      b.push_back(static_cast<uint8_t>(y));
    }
  }
  for (DType t : {DType::kS8, DType::kU8}) {
    auto add = RunOp<uint8_t>("add", {t, t}, t, Elem::kI8, Elem::kI8, {a, b});
    auto max = RunOp<uint8_t>("max", {t, t}, t, Elem::kI8, Elem::kI8, {a, b});
    auto lt = RunOp<uint8_t>("less", {t, t}, DType::kBool, Elem::kI8, Elem::kI8,
                             {a, b});
    auto abs = RunOp<uint8_t>("abs", {t}, t, Elem::kI8, Elem::kI8, {a});
    auto relu = RunOp<uint8_t>("relu", {t}, t, Elem::kI8, Elem::kI8, {a});
    auto clamp = RunOp<uint8_t>(
        "clamp", {t}, t, Elem::kI8, Elem::kI8, {a},
        {{"min", Attribute::Float(-3.5)}, {"max", Attribute::Float(150.7)}});
    for (size_t i = 0; i < a.size(); ++i) {
      const int x = t == DType::kS8 ? static_cast<int8_t>(a[i]) : a[i];
      const int y = t == DType::kS8 ? static_cast<int8_t>(b[i]) : b[i];
      EXPECT_EQ(add[i], static_cast<uint8_t>(x + y));
      EXPECT_EQ(max[i], static_cast<uint8_t>(std::max(x, y)));
      EXPECT_EQ(lt[i], x < y ? 1 : 0);
      EXPECT_EQ(abs[i], static_cast<uint8_t>(std::abs(x)));  // s8 -128 stays
      EXPECT_EQ(relu[i], static_cast<uint8_t>(std::max(x, 0)));
      // Bounds become ceil(-3.5) = -3 and floor(150.7) = 150, in range.
      const int lo = t == DType::kS8 ? -3 : 0, hi = t == DType::kS8 ? 127 : 150;
      EXPECT_EQ(clamp[i], static_cast<uint8_t>(std::clamp(x, lo, hi))) << x;
    }
  }
  std::vector<int32_t> s = {INT32_MIN, -5, 0, 7, INT32_MAX};
  auto neg = RunOp<int32_t>("neg", {DType::kS32}, DType::kS32, Elem::kI32,
                            Elem::kI32, {s});
  auto mul = RunOp<int32_t>("mul", {DType::kS32, DType::kS32}, DType::kS32,
                            Elem::kI32, Elem::kI32, {s, s});
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(neg[i], static_cast<int32_t>(0u - static_cast<uint32_t>(s[i])));
    EXPECT_EQ(mul[i], static_cast<int32_t>(static_cast<uint32_t>(s[i]) *
                                           static_cast<uint32_t>(s[i])));
  }
}

TEST(ElementalEmitterTest, SelectCastQuantizeAndBf16Rounding) {
  std::vector<uint8_t> cond = {1, 0, 1, 0};
  std::vector<float> a = {1, 2, 3, 4}, b = {-1, -2, -3, -4};
  absl::StatusOr<ArrayKernel> sel = ArrayKernel::Create(
      {Elem::kI8, Elem::kF32, Elem::kF32}, Elem::kF32,
      [](llvm::IRBuilder<>& bld, const std::vector<llvm::Value*>& in) {
        llvm::Value* c = bld.CreateICmpNE(
            in[0], llvm::ConstantInt::get(in[0]->getType(), 0));
        return *EmitElementwise(bld, OpKind::kSelect,
                                {DType::kBool, DType::kF32, DType::kF32},
                                DType::kF32, {c, in[1], in[2]});
      });
  ASSERT_TRUE(sel.ok()) << sel.status();
  std::vector<float> out(4);
  sel->Run({cond.data(), a.data(), b.data()}, out.data(), 4);
  EXPECT_EQ(out, (std::vector<float>{1, -2, 3, -4}));

  // A bf16 add rounds its result to bf16 (held as f32); so does a cast.
  std::vector<float> x = {1.0f, 1.0f, 3.0f},
                     y = {1.0f / 256, 3.0f / 256, 1e-3f};
  auto sum = RunOp<float>("add", {DType::kBF16, DType::kBF16}, DType::kBF16,
                          Elem::kF32, Elem::kF32, {x, y});
  auto cast = RunOp<float>("cast", {DType::kF32}, DType::kBF16, Elem::kF32,
                           Elem::kF32, {y});
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(sum[i], RoundToBf16(x[i] + y[i]));
    EXPECT_EQ(cast[i], RoundToBf16(y[i]));
  }

  std::vector<float> q_in = {0.0f, 0.25f, 0.75f, -100.0f, 1000.0f, kNaN};
  auto q = RunOp<int8_t>(
      "quantize", {DType::kF32}, DType::kS8, Elem::kF32, Elem::kI8, {q_in},
      {{"scale", Attribute::Float(0.5)}, {"zero_point", Attribute::Int(-2)}});
  EXPECT_EQ(q, (std::vector<int8_t>{-2, -2, 0, -128, 127, -2}));
}

TEST(ElementalEmitterTest, ErrorsAreStatuses) {
  llvm::LLVMContext ctx;
  llvm::Module module("m", ctx);
  llvm::Type* f32 = llvm::Type::getFloatTy(ctx);
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Function* fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {f32, i32}, false),
      llvm::Function::ExternalLinkage, "f", &module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value* x = fn->getArg(0);
  llvm::Value* n = fn->getArg(1);
  EXPECT_EQ(EmitUnary(b, UnaryKind::kExp, DType::kS32, n).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EmitUnary(b, UnaryKind::kExp, DType::kS32, x).status().code(),
            absl::StatusCode::kInvalidArgument);  // type mismatch
  EXPECT_EQ(
      EmitElementwise(b, OpKind::kSoftmax, {DType::kF32}, DType::kF32, {x})
          .status()
          .code(),
      absl::StatusCode::kUnimplemented);
  EXPECT_EQ(EmitUnary(b, UnaryKind::kGelu, DType::kF32, x,
                      {{"approximate", Attribute::String("fast")}})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EmitUnary(b, UnaryKind::kClamp, DType::kF32, x,
                      {{"min", Attribute::String("zero")}})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EmitBinary(b, BinaryKind::kDiv, DType::kS32, n, n).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EmitBinary(b, BinaryKind::kPow, DType::kS32, n, n).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EmitElementwise(b, OpKind::kAdd, {DType::kF32}, DType::kF32, {x})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      EmitElementwise(b, OpKind::kQuantize, {DType::kF32}, DType::kS8, {x},
                      {{"scale", Attribute::FloatList({0.5, 0.25})},
                       {"axis", Attribute::Int(0)}})
          .status()
          .code(),
      absl::StatusCode::kUnimplemented);
  EXPECT_TRUE(EmitUnary(b, UnaryKind::kGelu, DType::kF32, x,
                        {{"approximate", Attribute::String("tanh")}})
                  .ok());
}

// The emitter lowers exactly the pointwise kinds (elementwise ops, quantize
// and dequantize), and each of them through EmitElementwise.
TEST(ElementalEmitterTest, KindLists) {
  for (OpKind k : AllOpKinds()) {
    EXPECT_EQ(IsElementalOp(k), IsPointwise(k)) << OpKindName(k);
  }
  EXPECT_FALSE(IsElementalOp(OpKind::kUnknown));
}

}  // namespace
}  // namespace codegen
}  // namespace hgc
