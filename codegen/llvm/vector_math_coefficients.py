#!/usr/bin/env python3
"""Regenerates the polynomial coefficients of vector_math.cc.

Each fit is a near-minimax polynomial (Chebyshev interpolation, mpmath
`chebyfit`, or a least-squares fit on Chebyshev nodes where `chebyfit`
misbehaves) of the *correction* part of a function, evaluated in 40-digit
arithmetic and printed rounded to f32:

  exp    e^r = 1 + r + r^2 P(r),            |r| <= ln2/2,          deg 5
         (kExpShortP: the same to deg 4, for exp of x <= 0)
  exp2   2^f = 1 + f P(f),                  f in [0, 1),           deg 5
         (kExp2P, for e^(x - m) by vreduceps and vscalefps)
  log    log1p(f) = f - f^2/2 + f^3 P(f),   f in [sqrt(.5)-1, sqrt(2)-1], deg 8
  tanh   tanh(x) = x + x^3 P(x^2),          |x| <= 0.625,          deg 5
  erf    erf(x) = x + x P(x^2),             |x| <= 0.875,          deg 6
  erfcx  erfcx(a) = t Q(t - t0), t = 2/(2+a), a in [0.875, 10.6],  deg 8
  gelu   -erfcx(c/sqrt 2)/2 = t Q(t - t0), t = 4/(4+c), c in [0, 15], deg 9
         (least squares on Chebyshev nodes in t, reweighted (Lawson)
         toward minimax relative error: 0.15 ulp before rounding)

and the split constants of gelu's tanh form.

Fitting the correction keeps the leading terms exact, so the f32 rounding of
the coefficients costs far less than an ulp. The resulting accuracy is
measured, not derived: vector_math_test.cc sweeps the JIT-compiled code.

Usage: python3 vector_math_coefficients.py   (needs python3-mpmath)
"""
import struct

import mpmath as mp

mp.mp.dps = 40


def f32(v):
  return struct.unpack('f', struct.pack('f', float(v)))[0]


def show(name, coeffs):
  print(f'{name} = {{' + ', '.join(repr(f32(c)) + 'f' for c in coeffs) + '}')


def cheb(f, lo, hi, degree):
  coeffs, err = mp.chebyfit(f, [lo, hi], degree + 1, error=True)
  return list(reversed(coeffs)), err  # lowest degree first


def least_squares(f, half_width, degree, nodes=200):
  xs = [half_width * mp.cos(mp.pi * (i + 0.5) / nodes) for i in range(nodes)]
  a = mp.matrix([[x**j for j in range(degree + 1)] for x in xs])
  y = mp.matrix([f(x) for x in xs])
  c = mp.lu_solve(a.T * a, a.T * y)
  return [c[j] for j in range(degree + 1)]


def exp2_fit(degree, nodes=300):
  """(2^f - 1) / f on [0, 1), least squares on Chebyshev nodes weighted by
  f / 2^f, so that 1 + f P(f) has near-uniform relative error."""
  xs = [(1 + mp.cos(mp.pi * (i + 0.5) / nodes)) / 2 for i in range(nodes)]
  weight = lambda f: f / mp.power(2, f)
  a = mp.matrix([[weight(x) * x**j for j in range(degree + 1)] for x in xs])
  y = mp.matrix([weight(x) * (mp.power(2, x) - 1) / x for x in xs])
  c = mp.lu_solve(a.T * a, a.T * y)
  return [c[j] for j in range(degree + 1)]


def gelu_tail_fit(k=4, c_max=15, degree=9, nodes=600, iterations=50):
  """Q and t0 of gelu's tail, -erfcx(c / sqrt 2) / 2 = t Q(t - t0) with
  t = k / (k + c): least squares in relative error, each pass reweighting
  the nodes by their error (Lawson's iteration toward minimax)."""
  k, c_max = mp.mpf(k), mp.mpf(c_max)
  t_lo, t_hi = k / (k + c_max), mp.mpf(1)
  t0 = mp.mpf(f32((t_lo + t_hi) / 2))
  ts = [(t_lo + t_hi) / 2 +
        (t_hi - t_lo) / 2 * mp.cos(mp.pi * (i + mp.mpf(0.5)) / nodes)
        for i in range(nodes)]

  def q(t):
    a = (k / t - k) / mp.sqrt(2)
    return -mp.erfc(a) * mp.exp(a * a) / (2 * t)

  ys = [q(t) for t in ts]
  rows = [[(t - t0)**j for j in range(degree + 1)] for t in ts]
  lawson = [mp.mpf(1)] * nodes
  for _ in range(iterations):
    w = [mp.sqrt(lawson[i]) / abs(ys[i]) for i in range(nodes)]
    a = mp.matrix([[w[i] * x for x in rows[i]] for i in range(nodes)])
    y = mp.matrix([w[i] * ys[i] for i in range(nodes)])
    c = mp.lu_solve(a.T * a, a.T * y)
    err = [abs(sum(c[j] * rows[i][j] for j in range(degree + 1)) - ys[i]) /
           abs(ys[i]) for i in range(nodes)]
    lawson = [lawson[i] * err[i] for i in range(nodes)]
    total = sum(lawson)
    lawson = [v / total for v in lawson]
  return t0, [c[j] for j in range(degree + 1)]


def main():
  h = mp.log(2) / 2
  exp_p = lambda r: (mp.exp(r) - 1 - r) / r**2 if r != 0 else mp.mpf(0.5)
  show('kExpP', least_squares(exp_p, h, 5))
  show('kExpShortP', least_squares(exp_p, h, 4))
  show('kExp2P', exp2_fit(5))

  c, _ = cheb(lambda f: (mp.log1p(f) - f + f * f / 2) / f**3
              if f != 0 else mp.mpf(1) / 3,
              mp.sqrt(0.5) - 1, mp.sqrt(2) - 1, 8)
  show('kLogP', c)

  c, _ = cheb(lambda t: (mp.tanh(mp.sqrt(t)) - mp.sqrt(t)) / t**1.5
              if t > 0 else -mp.mpf(1) / 3,
              0, mp.mpf('0.625')**2, 5)
  show('kTanhP', c)

  c, _ = cheb(lambda t: mp.erf(mp.sqrt(t)) / mp.sqrt(t) - 1
              if t > 0 else 2 / mp.sqrt(mp.pi) - 1,
              0, mp.mpf('0.875')**2, 6)
  show('kErfP', c)

  k, lo, hi = mp.mpf(2), mp.mpf('0.875'), mp.mpf('10.6')
  t_lo, t_hi = k / (k + hi), k / (k + lo)
  t0 = mp.mpf(f32((t_lo + t_hi) / 2))
  print(f'kErfcxT0 = {f32(t0)!r}f')

  def q(u):
    t = u + t0
    a = k / t - k
    return mp.erfc(a) * mp.exp(a * a) / t

  c, _ = cheb(q, t_lo - t0, t_hi - t0, 8)
  show('kErfcxQ', c)

  t0, c = gelu_tail_fit()
  print(f'kGeluT0 = {f32(t0)!r}f')
  show('kGeluQ', c)

  # gelu(tanh) argument constants split as f32 high + f32 low parts.
  c1 = 2 * mp.sqrt(2 / mp.pi)
  for name, v in (('kC1', c1), ('kC2', c1 * mp.mpf('0.044715'))):
    high = f32(v)
    print(f'{name}Hi = {high!r}, {name}Lo = {f32(v - high)!r}')


if __name__ == '__main__':
  main()
