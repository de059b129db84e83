#!/usr/bin/env python3
"""Fits the polynomial coefficients of ferrocuda-std's default math tier (gpu-std/src/math/
exp_log.rs and normal.rs), with the same method as scripts/math_coefficients.py (weighted
minimax in f64, coefficients rounded to f32 one at a time, refitting the rest). Pure Python,
about two minutes.

    python3 scripts/fast_math_coefficients.py
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import math_coefficients as mc  # noqa: E402

LN2 = math.log(2)


def main():
    lo, hi = math.sqrt(0.5) - 1, math.sqrt(2) - 1
    # ln(1+f) = f + f²·P(f), weighted relative to ln(1+f).
    mc.minimax_f32(
        "LN_P",
        lambda x: (math.log1p(x) - x) / (x * x) if abs(x) > 1e-4
        else sum((-1) ** (k + 1) * x ** (k - 2) / k for k in range(2, 16)),
        8, lambda x: abs(x * x / math.log1p(x)) if x != 0 else 0.0, lo * 1.0001, hi * 1.0001)
    # log2(1+f) = f·log2(e) + f²·P(f).
    mc.minimax_f32(
        "LOG2_P",
        lambda x: (math.log1p(x) - x) / (x * x) / LN2 if abs(x) > 1e-4
        else sum((-1) ** (k + 1) * x ** (k - 2) / k for k in range(2, 16)) / LN2,
        8, lambda x: abs(x * x / (math.log1p(x) / LN2)) if x != 0 else 0.0, lo * 1.0001, hi * 1.0001)
    # 2^f = 1 + f·G(f), |f| ≤ ½ (with slack).
    mc.minimax_f32(
        "EXP2_G", lambda f: (2 ** f - 1) / f if abs(f) > 1e-6 else LN2 * (1 + f * LN2 / 2),
        5, lambda f: abs(f) / 2 ** f, -0.5001, 0.5001)
    # The tails: h(q) = h(-1) + (q + 1)·G(q), q = (a - K)/(a + K), for h = (1 + 2a)·e^(a²)·erfc(a)
    # (h(-1) = 1) and h = (1 + a)·e^(a²/2)·Φ(-a) (h(-1) = ½), up to the clamp.
    for name, k, clamp, h0, deg, h in [
        ("ERFC_G", 2.0, 11.0, 1.0, 10, lambda a: (1 + 2 * a) * math.exp(a * a) * math.erfc(a)),
        ("PHI_G", 2.5, 15.0, 0.5, 9,
         lambda a: (1 + a) * math.exp(a * a / 2) * 0.5 * math.erfc(a / math.sqrt(2))),
    ]:
        a_of = lambda q, k=k: k * (1 + q) / (1 - q)
        mc.minimax_f32(name, lambda q, h=h, a_of=a_of, h0=h0: (h(a_of(q)) - h0) / (q + 1), deg,
                       lambda q, h=h, a_of=a_of: (q + 1) / h(a_of(q)),
                       -1 + 1e-7, (clamp - k) / (clamp + k))


if __name__ == "__main__":
    main()
