#!/usr/bin/env python3
"""Fits the polynomial coefficients of ferrocuda-std's accurate f32 math (gpu-std/src/math.rs).

Each approximation is a weighted minimax polynomial (Lawson's iteratively reweighted least squares
in f64, with Householder QR), whose coefficients are rounded to f32 one at a time, refitting the
remaining ones after each rounding, so the rounding is compensated (a greedy form of Sollya's
fpminimax). The reference functions are Python's f64 `math` functions, far more accurate than f32.

Prints the constants as Rust source, with each fit's maximum weighted error in units of 2^-24
(the approximation error alone, before f32 evaluation). Pure Python, no packages; about a minute.

    python3 scripts/math_coefficients.py
"""
import math
import struct
import sys


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def shortest(x):
    """The shortest decimal that reads back as the f32 x (what Rust's clippy asks for)."""
    for digits in range(1, 10):
        text = f"{x:.{digits}e}"
        if f32(float(text)) == x:
            return text
    raise ValueError(x)


def lstsq(a, b):
    """Least squares a·x ≈ b by Householder QR (a: m rows of n)."""
    m, n = len(a), len(a[0])
    a = [row[:] for row in a]
    b = b[:]
    for k in range(n):
        norm = math.sqrt(sum(a[i][k] ** 2 for i in range(k, m)))
        alpha = -norm if a[k][k] > 0 else norm
        v = [0.0] * m
        v[k] = a[k][k] - alpha
        for i in range(k + 1, m):
            v[i] = a[i][k]
        vn = sum(v[i] ** 2 for i in range(k, m))
        if vn == 0:
            continue
        for j in range(k, n):
            s = sum(v[i] * a[i][j] for i in range(k, m)) * 2 / vn
            for i in range(k, m):
                a[i][j] -= s * v[i]
        s = sum(v[i] * b[i] for i in range(k, m)) * 2 / vn
        for i in range(k, m):
            b[i] -= s * v[i]
    x = [0.0] * n
    for k in reversed(range(n)):
        x[k] = (b[k] - sum(a[k][j] * x[j] for j in range(k + 1, n))) / a[k][k]
    return x


def minimax(f, basis, w, lo, hi, points=600, iterations=40):
    """Coefficients c minimising max |w(x)·(f(x) - Σ c_j·basis_j(x))| over [lo, hi] (Lawson)."""
    xs = [lo + (hi - lo) * (0.5 - 0.5 * math.cos(math.pi * (i + 0.5) / points)) for i in range(points)]
    fx = [f(x) for x in xs]
    wx = [w(x) for x in xs]
    rows = [[bj(x) for bj in basis] for x in xs]
    u = [1.0 / points] * points
    for _ in range(iterations):
        s = [math.sqrt(ui) * wi for ui, wi in zip(u, wx)]
        c = lstsq([[si * r for r in row] for si, row in zip(s, rows)], [si * fi for si, fi in zip(s, fx)])
        e = [abs(wi * (fi - sum(cj * r for cj, r in zip(c, row)))) for wi, fi, row in zip(wx, fx, rows)]
        u = [ui * ei for ui, ei in zip(u, e)]
        total = sum(u)
        u = [ui / total for ui in u]
    return c


def max_error(f, basis, w, lo, hi, c, n=20000):
    return max(
        abs(w(x) * (f(x) - sum(cj * b(x) for cj, b in zip(c, basis))))
        for x in (lo + (hi - lo) * i / n for i in range(n + 1))
    )


def rounded_in_order(f, basis, w, lo, hi, order):
    """Rounds the coefficients to f32 one at a time in `order`, refitting the others after each."""
    fixed = {}
    for j in order:
        free = [k for k in range(len(basis)) if k not in fixed]
        done = dict(fixed)
        g = lambda x, done=done: f(x) - sum(c * basis[k](x) for k, c in done.items())
        c = minimax(g, [basis[k] for k in free], w, lo, hi)
        fixed[j] = f32(c[free.index(j)])
    c = [fixed[k] for k in range(len(basis))]
    return max_error(f, basis, w, lo, hi, c), c


def minimax_f32(name, f, degree, w, lo, hi):
    """Greedy f32 rounding (lowest or highest degree first, whichever fits better)."""
    basis = [(lambda k: (lambda x: x ** k))(k) for k in range(degree + 1)]
    up = list(range(degree + 1))
    err, c = min(rounded_in_order(f, basis, w, lo, hi, order) for order in [up, up[::-1]])
    print(f"/// {name}: fit error {err / 2**-24:.4f} × 2^-24 on [{lo:.6}, {hi:.6}].")
    print(f"const {name}: [f32; {degree + 1}] = [{', '.join(shortest(x) for x in c)}];")
    sys.stdout.flush()
    return c


def series_or(f, small, x, cutoff):
    return small(x) if abs(x) < cutoff else f(x)


def main():
    pi = math.pi
    # exp(r) = 1 + r + r²·Q(r), |r| ≤ ln2/2 (plus the slack of an f32 rounding of x·log2e).
    half_ln2 = math.log(2) / 2 + 1e-5
    minimax_f32(
        "EXP_Q",
        lambda r: series_or(
            lambda r: (math.expm1(r) - r) / (r * r),
            lambda r: sum(r ** (k - 2) / math.factorial(k) for k in range(2, 12)),
            r, 1e-3),
        4,
        lambda r: r * r / math.exp(r),
        -half_ln2, half_ln2,
    )
    # ln(1+f) = f - f²/2 + f³·R(f), 1+f in [√½, √2].
    minimax_f32(
        "LN_R",
        lambda x: series_or(
            lambda x: (math.log1p(x) - x + 0.5 * x * x) / x ** 3,
            lambda x: sum((-1) ** (k + 1) * x ** (k - 3) / k for k in range(3, 20)),
            x, 1e-3),
        8,
        lambda x: abs(x ** 3 / math.log1p(x)) if x != 0 else 0.0,
        math.sqrt(0.5) - 1, math.sqrt(2) - 1,
    )
    # sin(πr) = r·π + r·u·S(u), cos(πr) = 1 + u·C(u), u = r², |r| ≤ 1/4.
    minimax_f32(
        "SINPI_S",
        lambda u: series_or(
            lambda u: (math.sin(pi * math.sqrt(u)) / math.sqrt(u) - pi) / u,
            lambda u: sum((-1) ** k * pi ** (2 * k + 1) * u ** (k - 1) / math.factorial(2 * k + 1) for k in range(1, 10)),
            u, 1e-6),
        3,
        lambda u: u * math.sqrt(u) / math.sin(pi * math.sqrt(u)) if u > 0 else 0.0,
        0.0, 1 / 16,
    )
    minimax_f32(
        "COSPI_C",
        lambda u: series_or(
            lambda u: (math.cos(pi * math.sqrt(u)) - 1) / u,
            lambda u: sum((-1) ** k * pi ** (2 * k) * u ** (k - 1) / math.factorial(2 * k) for k in range(1, 10)),
            u, 1e-6),
        3,
        lambda u: u / math.cos(pi * math.sqrt(u)),
        0.0, 1 / 16,
    )
    # Near 0: erfc(a) = 1 - a·P(a²) and Φ(x) = 1/2 + x·P(x²), where the result is ≥ 1/2 (|a| ≤
    # 0.4769) or ≥ 1/4 (|x| ≤ 0.6745); the error is weighted relative to that result.
    erfc_half = 0.47693627620446993
    phi_quarter = erfc_half * math.sqrt(2)
    minimax_f32(
        "ERF_SMALL",
        lambda u: math.erf(math.sqrt(u)) / math.sqrt(u) if u > 1e-12 else 2 / math.sqrt(pi),
        5,
        lambda u: math.sqrt(u) / math.erfc(math.sqrt(u)),
        0.0, erfc_half ** 2 * 1.001,
    )
    minimax_f32(
        "PHI_SMALL",
        lambda u: (0.5 * math.erfc(-math.sqrt(u / 2)) - 0.5) / math.sqrt(u) if u > 1e-12 else 1 / math.sqrt(2 * pi),
        5,
        lambda u: math.sqrt(u) / (0.5 * math.erfc(math.sqrt(u / 2))),
        0.0, phi_quarter ** 2 * 1.001,
    )
    # Tails: erfc(a) = exp(-a²)·h(a)/(1 + 2a) and Φ(-a) = exp(-a²/2)·H(a)/(1 + a), with h, H
    # polynomials in q = (a - K)/(a + K), up to where the result underflows to 0. Both h and H
    # are nearly flat (h in [1.13, 1.29], H in [0.40, 0.53]); each is split in two pieces (at
    # a = 2 and 2√2) so that |q| ≤ 0.45 and the polynomial's terms after the first add up to
    # under 6% of its value: its f32 evaluation then adds little error. The constant coefficient
    # is h(K), which no other term can correct at q = 0: each K (a multiple of 1/256 within 15%
    # of the middle of its piece) is the one, of the four whose h(K) is closest to an f32, that
    # gave the smallest fit error.
    for name, k, lo, hi, h in [
        ("ERFC_TAIL_LO", 1.08984375, erfc_half, 2.0, erfc_h),
        ("ERFC_TAIL_HI", 3.859375, 2.0, 10.06, erfc_h),
        ("PHI_TAIL_LO", 1.46875, phi_quarter, 2 * math.sqrt(2), phi_h),
        ("PHI_TAIL_HI", 5.578125, 2 * math.sqrt(2), 14.18, phi_h),
    ]:
        q = lambda a, k=k: (a - k) / (a + k)
        a_of = lambda q, k=k: k * (1 + q) / (1 - q)
        minimax_f32(name, lambda x, h=h, a_of=a_of: h(a_of(x)), 8,
                    lambda x, h=h, a_of=a_of: 1 / h(a_of(x)), q(lo * 0.999), q(hi * 1.001))


def erfc_h(a):
    return (1 + 2 * a) * math.exp(a * a) * math.erfc(a)


def phi_h(a):
    return (1 + a) * math.exp(a * a / 2) * 0.5 * math.erfc(a / math.sqrt(2))


if __name__ == "__main__":
    main()
