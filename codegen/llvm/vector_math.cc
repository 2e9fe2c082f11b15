// Polynomial coefficients come from vector_math_coefficients.py (mpmath
// Chebyshev fits, rounded to f32); the error analysis behind each algorithm
// is in the comments here, the measured errors in vector_math_test.cc.
#include "codegen/llvm/vector_math.h"

#include <cmath>
#include <limits>

#include "codegen/llvm/llvm_util.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace hgc {
namespace codegen {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// e^r = 1 + r + r^2 P(r) on |r| <= ln2/2.
constexpr float kExpP[] = {0.5f,
                           0.1666666716337204f,
                           0.04166646674275398f,
                           0.0083332983776927f,
                           0.0013933643931522965f,
                           0.00019899275503121316f};
// The same to degree 4, for exp of non-positive arguments: one fma fewer,
// still within an ulp there.
constexpr float kExpShortP[] = {0.5f, 0.16666576266288757f,
                                0.04166646674275398f, 0.008363175205886364f,
                                0.0013933643931522965f};
// 2^f = 1 + f P(f) on [0, 1), for EmitExpOfDifference.
constexpr float kExp2P[] = {0.6931470632553101f,    0.24022932350635529f,
                            0.05548521876335144f,   0.009675532579421997f,
                            0.0012467376654967666f, 0.0002161380834877491f};
// log1p(f) = f - f^2/2 + f^3 P(f) on [sqrt(1/2) - 1, sqrt(2) - 1].
constexpr float kLogP[] = {
    0.3333333134651184f,  -0.2499999701976776f,  0.20000715553760529f,
    -0.1666780263185501f, 0.14249058067798615f,  -0.12425687164068222f,
    0.11685419827699661f, -0.11479733884334564f, 0.06971611827611923f};
// tanh(x) = x + x^3 P(x^2) on |x| <= 0.625.
constexpr float kTanhP[] = {-0.3333333432674408f,   0.13333304226398468f,
                            -0.053959257900714874f, 0.02176891826093197f,
                            -0.008343945257365704f, 0.002292744815349579f};
// erf(x) = x + x P(x^2) on |x| <= 0.875. P(0) = 2/sqrt(pi) - 1: keeping the
// 1 apart makes the leading term exact.
constexpr float kErfP[] = {0.12837916612625122f,  -0.37612634897232056f,
                           0.11283735185861588f,  -0.026861706748604774f,
                           0.00520704872906208f,  -0.0008214570698328316f,
                           8.690368849784136e-05f};
// erfcx(a) = e^(a^2) erfc(a) = t Q(t - kErfcxT0) with t = 2 / (2 + a), for
// a in [0.875, 10.6]. Centering the variable keeps Horner's partial sums
// from cancelling (monomials in t lose ~1.5 ulp).
constexpr float kErfcxT0 = 0.4271911680698395f;
constexpr float kErfcxQ[] = {
    0.46366214752197266f,  0.6083368062973022f,   0.5220699906349182f,
    0.18967849016189575f,  -0.12735643982887268f, -0.13858844339847565f,
    0.059153567999601364f, 0.08724775165319443f,  -0.04873886704444885f};

// gelu's tail: -erfcx(a) / 2 = t Q(t - kGeluT0) with t = 4 / (4 + c),
// c = a sqrt 2 in [0, 15], fitted toward minimax relative error (0.15 ulp
// before rounding to f32). A constant larger than 4 needs fewer terms but
// makes Q steeper near c = 0; a smaller one needs more terms.
constexpr float kGeluT0 = 0.6052631735801697f;
constexpr float kGeluQ[] = {-0.2255709171295166f,   -0.39901062846183777f,
                            -0.5215898156166077f,   -0.4799332618713379f,
                            -0.2620345652103424f,   -0.014037920162081718f,
                            0.08799386769533157f,   0.03392409905791283f,
                            -0.027451274916529655f, -0.017177334055304527f};

// IR for one input shape: f32 scalar or vector `ty`, with i32 lanes `ity`.
class MathBuilder {
 public:
  MathBuilder(llvm::IRBuilder<>& b, llvm::Type* ty)
      : b_(b), ty_(ty), ity_(IntTypeLike(ty, 32)) {}

  llvm::Value* C(double v) { return F32Const(ty_, v); }
  llvm::Value* I(int64_t v) { return IntConst(ity_, v); }
  llvm::Value* Add(llvm::Value* a, llvm::Value* c) {
    return b_.CreateFAdd(a, c);
  }
  llvm::Value* Sub(llvm::Value* a, llvm::Value* c) {
    return b_.CreateFSub(a, c);
  }
  llvm::Value* Mul(llvm::Value* a, llvm::Value* c) {
    return b_.CreateFMul(a, c);
  }
  llvm::Value* Div(llvm::Value* a, llvm::Value* c) {
    return b_.CreateFDiv(a, c);
  }
  // Sign flip (exact, -0 for +0), unlike 0 - x.
  llvm::Value* Neg(llvm::Value* x) { return b_.CreateFNeg(x); }
  // a * c + d with one rounding: the error analyses below depend on it, so
  // it is llvm.fma (always fused), not llvm.fmuladd (fused if profitable).
  llvm::Value* Fma(llvm::Value* a, llvm::Value* c, llvm::Value* d) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fma, {ty_}, {a, c, d});
  }
  llvm::Value* Abs(llvm::Value* x) {
    return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  }
  llvm::Value* CopySign(llvm::Value* mag, llvm::Value* sign) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, mag, sign);
  }
  llvm::Value* Lt(llvm::Value* a, llvm::Value* c) {
    return b_.CreateFCmpOLT(a, c);
  }
  llvm::Value* Ge(llvm::Value* a, llvm::Value* c) {
    return b_.CreateFCmpOGE(a, c);
  }
  llvm::Value* IsNan(llvm::Value* x) { return b_.CreateFCmpUNO(x, x); }
  llvm::Value* Select(llvm::Value* c, llvm::Value* t, llvm::Value* f) {
    return b_.CreateSelect(c, t, f);
  }
  // max(x, lo) / min(x, hi) as compare+select; NaN x gives the bound. The
  // shape matches vmaxps/vminps exactly, unlike llvm.maxnum, which needs
  // extra NaN fix-ups on x86.
  llvm::Value* AtLeast(llvm::Value* x, double lo) {
    llvm::Value* c = C(lo);
    return Select(b_.CreateFCmpOGT(x, c), x, c);
  }
  llvm::Value* AtMost(llvm::Value* x, double hi) {
    llvm::Value* c = C(hi);
    return Select(Lt(x, c), x, c);
  }
  // Horner's rule with fma: coeffs[0] + x coeffs[1] + x^2 coeffs[2] ...,
  // each coefficient times `scale` (a power of two: while every partial sum
  // stays normal, the result is the unscaled one times `scale` exactly).
  template <size_t N>
  llvm::Value* Poly(llvm::Value* x, const float (&coeffs)[N],
                    double scale = 1.0) {
    llvm::Value* r = C(coeffs[N - 1] * scale);
    for (size_t i = N - 1; i-- > 0;) r = Fma(r, x, C(coeffs[i] * scale));
    return r;
  }
  // The float whose exponent field is `biased` (an i32 in [1, 254]).
  llvm::Value* Pow2(llvm::Value* biased) {
    return b_.CreateBitCast(b_.CreateShl(biased, I(23)), ty_);
  }
  llvm::IRBuilder<>& b() { return b_; }
  llvm::Type* ity() { return ity_; }

 private:
  llvm::IRBuilder<>& b_;
  llvm::Type* ty_;
  llvm::Type* ity_;
};

// n = round(x / ln2) and r = x - n ln2 for x in [-104, 100], r exact to
// far below ulp(r): ln2 = 0.693145751953125 + 1.4286068203094172e-06, and
// the high part has 16 significant bits, so n * high is exact for
// |n| < 2^8. n is x / ln2 rounded to an integer (half to even) by adding
// 1.5 * 2^23, where the f32 spacing is 1, in the fma that multiplies, and
// subtracting it again (exactly): two operations, where a multiply and a
// round (vrndscaleps, two uops) would be three. `shifted` (if given)
// receives n + 1.5 * 2^23, whose low bits hold n as a two's-complement
// integer.
llvm::Value* ReduceByLn2(MathBuilder& m, llvm::Value* x, llvm::Value*& n,
                         llvm::Value** shifted = nullptr) {
  constexpr double kRoundingShift = 12582912.0;  // 1.5 * 2^23
  llvm::Value* t = m.Fma(x, m.C(1.44269504088896341), m.C(kRoundingShift));
  if (shifted != nullptr) *shifted = t;
  n = m.Sub(t, m.C(kRoundingShift));
  llvm::Value* r = m.Fma(n, m.C(-0.693145751953125), x);
  return m.Fma(n, m.C(-1.428606765330187045e-06), r);
}

// u * 2^n for integral n in [-150, 145]: 2^n = 2^n1 * 2^n2 with both
// halves normal, so the first product is exact and the second rounds
// once, denormals included.
llvm::Value* TimesPow2(MathBuilder& m, llvm::Value* u, llvm::Value* n) {
  llvm::IRBuilder<>& b = m.b();
  llvm::Value* ni = b.CreateFPToSI(n, m.ity());
  llvm::Value* n1 = b.CreateAShr(ni, m.I(1));
  llvm::Value* n2 = b.CreateSub(ni, n1);
  u = m.Mul(u, m.Pow2(b.CreateAdd(n1, m.I(127))));
  return m.Mul(u, m.Pow2(b.CreateAdd(n2, m.I(127))));
}

// m * e^(x + x_lo) for non-NaN x (m == nullptr: m = 1). x_lo (or nullptr)
// is a correction far below ulp(x), e.g. the rounding error of x = -a*a.
// Folding m into the last fma saves a rounding over multiplying afterwards;
// callers use it to reach the denormal range without a denormal
// intermediate.
llvm::Value* ExpCore(MathBuilder& m, llvm::Value* x, llvm::Value* x_lo,
                     llvm::Value* scale) {
  // Beyond these bounds the result is 0 or inf whatever the rest computes;
  // clamping keeps n (and the exponent arithmetic) in range.
  llvm::Value* xc = m.AtMost(m.AtLeast(x, -104.0), 100.0);
  llvm::Value* n = nullptr;
  llvm::Value* r = ReduceByLn2(m, xc, n);
  if (x_lo != nullptr) r = m.Add(r, x_lo);
  llvm::Value* v = m.Fma(m.Mul(r, r), m.Poly(r, kExpP), r);  // e^r - 1
  llvm::Value* u =
      scale == nullptr ? m.Add(v, m.C(1.0)) : m.Fma(scale, v, scale);
  return TimesPow2(m, u, n);
}

// erfcx(a) = e^(a^2) erfc(a) for a in [0.875, 10.6] (finite elsewhere).
// t = 2/(2+a) is carried as t0 + t_lo: the rounding errors of 2+a and of
// the division would otherwise add ~1 ulp to every erfc.
llvm::Value* ErfcxLarge(MathBuilder& m, llvm::Value* a) {
  llvm::Value* two = m.C(2.0);
  llvm::Value* d = m.Add(two, a);
  // Fast two-sum on (max, min) gives the exact rounding error of 2 + a.
  llvm::Value* a_big = m.Select(m.Lt(a, two), two, a);
  llvm::Value* a_small = m.Select(m.Lt(a, two), a, two);
  llvm::Value* d_err = m.Sub(a_small, m.Sub(d, a_big));
  llvm::Value* t0 = m.Div(two, d);
  llvm::Value* residual = m.Fma(m.Neg(t0), d, two);  // exact
  llvm::Value* t_lo =
      m.Mul(m.Fma(m.Neg(t0), d_err, residual), m.Mul(m.C(0.5), t0));
  llvm::Value* q = m.Poly(m.Sub(t0, m.C(kErfcxT0)), kErfcxQ);
  return m.Fma(t0, q, m.Mul(t_lo, q));
}

// erf(y) for |y| <= 0.875.
llvm::Value* ErfSmall(MathBuilder& m, llvm::Value* y) {
  return m.Fma(y, m.Poly(m.Mul(y, y), kErfP), y);
}

// Final NaN rule: a NaN input is returned as is (keeping its payload).
llvm::Value* PassNan(MathBuilder& m, llvm::Value* x, llvm::Value* r) {
  return m.Select(m.IsNan(x), x, r);
}

}  // namespace

llvm::Value* EmitExp(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x->getType());
  return PassNan(m, x, ExpCore(m, x, nullptr, nullptr));
}

namespace {

// The clamp and the range reduction of EmitExpNonPositive: below -104
// (-inf included) the result is 0, as ExpCore's without its upper clamp.
// The clamp's compare is ordered so that a NaN x stays NaN, which both
// scalings pass on.
llvm::Value* ReduceNonPositive(MathBuilder& m, llvm::Value* x, llvm::Value*& n,
                               llvm::Value*& shifted) {
  llvm::Value* xc = m.Select(m.Lt(x, m.C(-104.0)), m.C(-104.0), x);
  return ReduceByLn2(m, xc, n, &shifted);
}

// e^r = 1 + r (1 + r P(r)), times `scale` (1 or 2^-64, exactly: every
// partial sum of its fmas stays normal): two fmas after P. The inner sum
// rounds near 1 and is then scaled by |r| <= ln2 / 2, so the result stays
// within an ulp, one operation shorter than ExpCore's 1 + (r + r^2 P(r)).
llvm::Value* ExpOfReduced(MathBuilder& m, llvm::Value* r, double scale) {
  return m.Fma(r, m.Fma(r, m.Poly(r, kExpShortP, scale), m.C(scale)),
               m.C(scale));
}

}  // namespace

ExpReduction EmitExpReduce(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x->getType());
  ExpReduction red;
  llvm::Value* n = nullptr;
  red.r = ReduceNonPositive(m, x, n, red.shifted);
  return red;
}

// u 2^-64 times 2^(n + 64) (n in [-151, 0]), the one rounding, into the
// denormals below 2^-126. 2^(n + 64) is built from `shifted` = 1.5 * 2^23
// + n: shifting it into the exponent field drops every bit but n's, so no
// float-to-int conversion is needed, and a NaN x (whose r, and so u, is
// NaN) gives a NaN without a select.
llvm::Value* EmitExpFinish(llvm::IRBuilder<>& b, const ExpReduction& red) {
  MathBuilder m(b, red.r->getType());
  llvm::Value* u = ExpOfReduced(m, red.r, 0x1p-64);
  llvm::Value* bits =
      b.CreateShl(b.CreateBitCast(red.shifted, m.ity()), m.I(23));
  return m.Mul(u, b.CreateBitCast(b.CreateAdd(bits, m.I((127 + 64) << 23)),
                                  red.r->getType()));
}

llvm::Value* EmitExpNonPositive(llvm::IRBuilder<>& b, llvm::Value* x,
                                ExpScaling scaling) {
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  const bool scalef = scaling == ExpScaling::kAvx512Scalef && vt != nullptr &&
                      vt->getNumElements() == 16;
  if (!scalef) return EmitExpFinish(b, EmitExpReduce(b, x));
  MathBuilder m(b, x->getType());
  llvm::Value* n = nullptr;
  llvm::Value* shifted = nullptr;
  llvm::Value* r = ReduceNonPositive(m, x, n, shifted);
  // u * 2^n, rounded once (denormal results too: a softmax weight of
  // 1e-40 times an infinite value is still infinite).
  return b.CreateIntrinsic(
      llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
      {ExpOfReduced(m, r, 1.0), n, llvm::UndefValue::get(vt),
       b.getInt16(0xffff), b.getInt32(4 /* current rounding direction */)});
}

llvm::Value* EmitExpOfDifference(llvm::IRBuilder<>& b, llvm::Value* x,
                                 llvm::Value* m, ExpScaling scaling) {
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (scaling != ExpScaling::kAvx512Scalef || vt == nullptr ||
      vt->getNumElements() != 16) {
    return EmitExpNonPositive(b, b.CreateFSub(x, m), scaling);
  }
  MathBuilder mb(b, vt);
  llvm::Value* t = mb.Mul(mb.Sub(x, m), mb.C(1.44269504088896341));
  // f = t - floor(t) in [0, 1), exact; 0 for t = -inf and for integral t.
  // imm: no fraction bits kept, round down, precision exception masked.
  llvm::Value* f = b.CreateIntrinsic(
      llvm::Intrinsic::x86_avx512_mask_reduce_ps_512, {},
      {t, b.getInt32(0x09), llvm::UndefValue::get(vt), b.getInt16(-1),
       b.getInt32(4 /* current rounding direction */)});
  llvm::Value* p = mb.Fma(f, mb.Poly(f, kExp2P), mb.C(1.0));
  // p * 2^floor(t): 0 for t = -inf, NaN for a NaN t.
  return b.CreateIntrinsic(llvm::Intrinsic::x86_avx512_mask_scalef_ps_512, {},
                           {p, t, llvm::UndefValue::get(vt), b.getInt16(-1),
                            b.getInt32(4 /* current rounding direction */)});
}

llvm::Value* EmitLog(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x->getType());
  // Denormals get 23 more exponent bits by an exact scaling first.
  llvm::Value* denormal = m.Lt(x, m.C(0x1p-126));
  llvm::Value* xs = m.Select(denormal, m.Mul(x, m.C(0x1p23)), x);
  llvm::Value* bits = b.CreateBitCast(xs, m.ity());
  llvm::Value* e = b.CreateSub(b.CreateLShr(bits, m.I(23)),
                               m.Select(denormal, m.I(126 + 23), m.I(126)));
  // The significand with exponent 2^-1: frac in [0.5, 1).
  llvm::Value* frac = b.CreateBitCast(
      b.CreateOr(b.CreateAnd(bits, m.I(0x007fffff)), m.I(0x3f000000)),
      x->getType());
  // Below sqrt(1/2), use 2 frac - 1 and e - 1 so that f = m - 1 stays in
  // [-0.293, 0.414]; both subtractions are exact (Sterbenz).
  llvm::Value* low = m.Lt(frac, m.C(0.70710678118654752));
  llvm::Value* f = m.Sub(m.Select(low, m.Add(frac, frac), frac), m.C(1.0));
  llvm::Value* ef = b.CreateSIToFP(
      b.CreateSub(e, m.Select(low, m.I(1), m.I(0))), x->getType());
  llvm::Value* z = m.Mul(f, f);
  llvm::Value* y = m.Mul(m.Mul(f, z), m.Poly(f, kLogP));
  // e ln2 = e 0.693359375 - e 2.121944400546905827679e-4: the high part
  // has 9 bits, so e * high is exact and is added last, to a result that
  // already carries the low part.
  y = m.Fma(ef, m.C(-2.12194440054690583e-4), y);
  y = m.Fma(m.C(-0.5), z, y);
  llvm::Value* r = m.Fma(ef, m.C(0.693359375), m.Add(f, y));
  llvm::Value* inf = m.C(kInf);
  r = m.Select(b.CreateFCmpOEQ(x, inf), inf, r);
  r = m.Select(b.CreateFCmpOEQ(x, m.C(0.0)), m.C(-kInf), r);
  r = m.Select(m.Lt(x, m.C(0.0)), m.C(kNaN), r);
  return PassNan(m, x, r);
}

llvm::Value* EmitTanh(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x->getType());
  llvm::Value* a = m.Abs(x);
  llvm::Value* x2 = m.Mul(x, x);
  // Near 0 the odd polynomial keeps full relative accuracy (and tanh(-0)
  // = -0); 1 - 2/(e^2a + 1) would cancel there.
  llvm::Value* small = m.Fma(m.Mul(x, x2), m.Poly(x2, kTanhP), x);
  llvm::Value* e = ExpCore(m, m.Add(a, a), nullptr, nullptr);
  llvm::Value* big = m.Sub(m.C(1.0), m.Div(m.C(2.0), m.Add(e, m.C(1.0))));
  // tanh is odd; the final copysign also fixes tanh(-0), which the fma
  // above rounds to +0 (-0 * -1/3 + -0 = +0).
  llvm::Value* r = m.CopySign(m.Select(m.Lt(a, m.C(0.625)), small, big), x);
  return PassNan(m, x, r);
}

llvm::Value* EmitErf(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x->getType());
  llvm::Value* a = m.Abs(x);
  // erf(a) = 1 - e^(-a^2) erfcx(a) with a^2 = h + l exactly; erf rounds to
  // 1 beyond 3.92, so clamping at 10 changes nothing.
  llvm::Value* ac = m.AtMost(a, 10.0);
  llvm::Value* h = m.Mul(ac, ac);
  llvm::Value* l = m.Fma(ac, ac, m.Neg(h));
  llvm::Value* erfc = ExpCore(m, m.Neg(h), m.Neg(l), ErfcxLarge(m, ac));
  llvm::Value* big = m.CopySign(m.Sub(m.C(1.0), erfc), x);
  llvm::Value* r = m.Select(m.Lt(a, m.C(0.875)), ErfSmall(m, x), big);
  return PassNan(m, x, r);
}

llvm::Value* EmitSigmoid(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x->getType());
  // e = e^-|x| never overflows; for x < 0 the result is e / (1 + e), whose
  // relative error stays ~2 ulp all the way into the denormals.
  llvm::Value* e = ExpCore(m, m.Neg(m.Abs(x)), nullptr, nullptr);
  llvm::Value* num = m.Select(m.Ge(x, m.C(0.0)), m.C(1.0), e);
  return PassNan(m, x, m.Div(num, m.Add(m.C(1.0), e)));
}

llvm::Value* EmitGeluErf(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x->getType());
  // One formula for every x, no branches to compute twice: with
  // c = min(|x|, 15), tail = -c/2 erfc(c / sqrt 2) is gelu(x) for x < 0 and
  // gelu(x) - x for x >= 0, and |tail| <= |x|/2, so neither side cancels.
  // Beyond 15 the tail is 0 either way. minps(15, |x|) lets a NaN through,
  // and every step below keeps it NaN, down to the result.
  llvm::Value* c = m.Abs(x);
  c = m.Select(m.Lt(m.C(15.0), c), m.C(15.0), c);
  // tail = c t Q(t - kGeluT0) e^(-c^2/2) with t = 4 / (4 + c). t's rounding
  // errors are carried as t = t0 (1 + corr/4): d_err is the exact error of
  // d = 4 + c (Fast2Sum in either operand order: 4 and d - 4 are multiples
  // of ulp(d)), and 4 - t0 (d + d_err) = corr is exact but for one rounding
  // far below its size. Q's variable gets the correction too: its slope
  // near c = 0 would turn t's error into ~2 ulp.
  llvm::Value* k = m.C(4.0);
  llvm::Value* d = m.Add(k, c);
  llvm::Value* d_err = m.Sub(c, m.Sub(d, k));
  llvm::Value* t0 = m.Div(k, d);
  llvm::Value* corr = m.Fma(m.Neg(t0), d_err, m.Fma(m.Neg(t0), d, k));
  llvm::Value* q = m.Poly(
      m.Fma(corr, m.Mul(t0, m.C(0.25)), m.Sub(t0, m.C(kGeluT0))), kGeluQ);
  // e^(-c^2/2) = 2^n e^r with c^2 = h + l exactly, so the tail keeps its
  // relative accuracy down to the denormals, and t's factor (1 + corr/4)
  // folded into r as + corr/4. n = round(-h/2 log2 e) is rounded by a shift
  // whose low bits then hold n + 191, the exponent field of 2^(n + 64).
  // h + 2 n ln2_hi is exact (see ReduceByLn2). The signs make r = w/2 a +0
  // at c = 0, which keeps gelu(-0) = -0.
  llvm::Value* h = m.Mul(c, c);
  llvm::Value* l = m.Fma(c, c, m.Neg(h));
  constexpr double kShift = 12582912.0 + 191;  // 1.5 * 2^23 + 127 + 64
  llvm::Value* shifted = m.Fma(h, m.C(-0.5 * 1.44269504088896341), m.C(kShift));
  llvm::Value* n = m.Sub(shifted, m.C(kShift));
  llvm::Value* pow2 = b.CreateBitCast(
      b.CreateShl(b.CreateBitCast(shifted, m.ity()), m.I(23)), x->getType());
  llvm::Value* w_lo = m.Fma(
      corr, m.C(0.5), m.Fma(n, m.C(-2 * 1.428606765330187045e-06), m.Neg(l)));
  llvm::Value* w = m.Add(m.Fma(n, m.C(-2 * 0.693145751953125), m.Neg(h)), w_lo);
  llvm::Value* r = m.Mul(w, m.C(0.5));
  // u = c 2^(n + 64) t0 Q e^r (c 2^(n + 64) is exact), scaled by 2^-64 last
  // so that a denormal result is rounded once.
  llvm::Value* scale = m.Mul(m.Mul(m.Mul(c, pow2), t0), q);
  llvm::Value* u =
      m.Fma(r, m.Mul(scale, m.Fma(r, m.Poly(r, kExpShortP), m.C(1.0))), scale);
  llvm::Value* tail = m.Mul(u, m.C(0x1p-64));
  llvm::Value* result = m.Select(m.Ge(x, m.C(0.0)), m.Add(x, tail), tail);
  // -inf * Phi(-inf) = -inf * 0: NaN, as the reference interpreter says.
  return m.Select(b.CreateFCmpOEQ(x, m.C(-kInf)), m.C(kNaN), result);
}

llvm::Value* EmitGeluTanh(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x->getType());
  // z = x (c1 + c2 x^2) with c1 = 2 sqrt(2/pi), c2 = 0.044715 c1, carried as
  // z + z_lo: sigmoid(z) turns an absolute error in z into that much
  // relative error, so rounding z alone would cost |z| ulp in the tail.
  // Split constants: c = c_hi + c_lo with c_hi the nearest float.
  constexpr double kC1Hi = 1.5957691669464111, kC1Lo = -4.534068054340423e-08;
  constexpr double kC2Hi = 0.07135481387376785, kC2Lo = 2.3988324659995897e-09;
  llvm::Value* xc = m.AtMost(m.AtLeast(x, -12.0), 12.0);
  llvm::Value* x2 = m.Mul(xc, xc);
  llvm::Value* x2_lo = m.Fma(xc, xc, m.Neg(x2));
  llvm::Value* p = m.Fma(m.C(kC2Hi), x2, m.C(kC1Hi));
  // The rounding error of p; exact while c2 x^2 <= c1 (|x| < 4.7), and
  // negligible against the result's own conditioning beyond.
  llvm::Value* p_lo = m.Fma(m.C(kC2Hi), x2, m.Sub(m.C(kC1Hi), p));
  p_lo = m.Fma(m.C(kC2Hi), x2_lo, p_lo);
  p_lo = m.Fma(m.C(kC2Lo), x2, m.Add(p_lo, m.C(kC1Lo)));
  llvm::Value* z = m.Mul(xc, p);
  llvm::Value* z_lo = m.Fma(xc, p_lo, m.Fma(xc, p, m.Neg(z)));
  // sigmoid(z) = 1 / (1 + e) for z >= 0 and e / (1 + e) for z < 0, with
  // e = e^-|z| (see EmitSigmoid); -|z + z_lo| = -|z| -+ z_lo.
  llvm::Value* positive = m.Ge(z, m.C(0.0));
  llvm::Value* e = ExpCore(m, m.Neg(m.Abs(z)),
                           m.Select(positive, m.Neg(z_lo), z_lo), nullptr);
  llvm::Value* num = m.Select(positive, x, m.Mul(x, e));
  llvm::Value* r = m.Div(num, m.Add(m.C(1.0), e));
  r = m.Select(b.CreateFCmpOEQ(x, m.C(-kInf)), m.C(kNaN), r);
  return PassNan(m, x, r);
}

llvm::Value* EmitSqrt(llvm::IRBuilder<>& b, llvm::Value* x) {
  return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
}

llvm::Value* EmitRsqrt(llvm::IRBuilder<>& b, llvm::Value* x) {
  MathBuilder m(b, x->getType());
  // 1 / sqrt(±0) = ±inf, spelled out: LLVM 14 takes 1 / sqrt(x) for never
  // negative and folds a later clamp below zero away, but 1 / sqrt(-0) is
  // -inf.
  llvm::Value* r = m.Div(m.C(1.0), EmitSqrt(b, x));
  return m.Select(b.CreateFCmpOEQ(x, m.C(0.0)), m.CopySign(m.C(kInf), x), r);
}

}  // namespace codegen
}  // namespace hgc
