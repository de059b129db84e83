#!/usr/bin/env python3
"""Writes gpu-std/tests/data/f64_reference.txt: the high-precision reference of ferrocuda-std's f64
math (gpu-std/tests/math_f64.rs). f64 functions from std are themselves only within about half an
ULP, too coarse to check 1-ULP claims at f64; this file holds, for each input, the value computed
with mpmath at 300 bits, as an f64 `hi` plus `offset` = (exact - hi) / ulp(hi), so that a test
measures |got - exact| in ULPs to about 1e-6 of an ULP whether or not `hi` is the correctly rounded
f64.

One line per input: `name x_bits [y_bits] hi_bits offset` (bits in hex). Inputs: random over each
function's domain (seeded, so the file is reproducible), the edges (overflow, underflow,
subnormal results) and known hard cases (arguments near multiples of pi/2, logarithms near 1).

    python3 scripts/f64_math_reference.py   # needs mpmath (pip install mpmath); a few seconds
"""
import math
import os
import random
import struct

import mpmath

mpmath.mp.prec = 300
PER_FUNCTION = 1200


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def from_bits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def ulp(x):
    """The spacing of f64s at |x| (2^-1074 among subnormals)."""
    x = abs(x)
    if x < 2.0**-1022:
        return 2.0**-1074
    return 2.0 ** (math.frexp(x)[1] - 53)


def log_uniform(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def random_positive(rng):
    """A random positive finite f64 bit pattern: every binade, subnormals included, equally."""
    while True:
        x = from_bits(rng.getrandbits(63))
        if math.isfinite(x) and x > 0:
            return x


def normal_cdf(x):
    return mpmath.ncdf(x)


FUNCTIONS = {
    "exp": mpmath.exp,
    "exp2": lambda x: mpmath.power(2, x),
    "ln": mpmath.log,
    "log2": lambda x: mpmath.log(x, 2),
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "erfc": mpmath.erfc,
    "normal_cdf": normal_cdf,
}


def inputs(name, rng):
    n = PER_FUNCTION
    if name == "exp":
        xs = [rng.uniform(-745.0, 709.7) for _ in range(n // 2)]
        xs += [rng.uniform(-1.0, 1.0) * 10 ** rng.uniform(-20, 0) for _ in range(n // 4)]
        xs += [rng.uniform(-745.1, -708.0) for _ in range(n // 8)]  # subnormal results
        xs += [709.782712893383, 709.78, -745.13, -708.39641853226408, 1e-300, -1e-300]
    elif name == "exp2":
        xs = [rng.uniform(-1074.0, 1023.99) for _ in range(n // 2)]
        xs += [rng.uniform(-1.0, 1.0) * 10 ** rng.uniform(-20, 0) for _ in range(n // 4)]
        xs += [rng.uniform(-1074.5, -1022.0) for _ in range(n // 8)]
        xs += [1023.9999, -1074.0, -1073.5, 0.5, -0.5, 1e-300]
    elif name in ("ln", "log2"):
        xs = [random_positive(rng) for _ in range(n // 2)]
        xs += [1.0 + rng.uniform(-1.0, 1.0) * 10 ** rng.uniform(-16, -0.5) for _ in range(n // 3)]
        xs += [rng.uniform(0.7, 1.42) for _ in range(n // 6)]
        xs += [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.7071067811865476,
               1.4142135623730951, 0.9999999999999999, 1.0000000000000002]
    elif name in ("sin", "cos"):
        xs = [rng.uniform(-10.0, 10.0) for _ in range(n // 3)]
        xs += [rng.choice((-1, 1)) * log_uniform(rng, 1e-10, 1e6) for _ in range(n // 3)]
        xs += [rng.choice((-1, 1)) * log_uniform(rng, 1e6, 1.7e308) for _ in range(n // 6)]
        # Near multiples of pi/2, where the reduction cancels most bits.
        xs += [float(k * mpmath.pi / 2) for k in range(1, 60)]
        # ... below 2^20·π/2 (three Cody-Waite rounds) and above (Payne-Hanek).
        xs += [float(k * mpmath.pi / 2) for k in rng.sample(range(60, 2**20), 60)]
        xs += [float(k * mpmath.pi / 2) for k in rng.sample(range(10**6, 10**15), 40)]
        xs += [6381956970095103 * 2.0**797, 5.319372648326541e255, 1e22, 1e-300, 2.0**-1022]
    elif name == "erfc":
        xs = [rng.uniform(-6.0, 27.2) for _ in range(n // 2)]
        xs += [rng.uniform(-1.0, 1.0) * 10 ** rng.uniform(-10, 0.5) for _ in range(n // 4)]
        xs += [rng.uniform(5.0, 27.22) for _ in range(n // 4)]
        xs += [0.84375, 1.25, 2.857142857142857, 6.0, 26.5, 27.2]
    elif name == "normal_cdf":
        xs = [rng.uniform(-38.4, 8.5) for _ in range(n // 2)]
        xs += [rng.uniform(-1.0, 1.0) * 10 ** rng.uniform(-10, 0.5) for _ in range(n // 4)]
        xs += [rng.uniform(-38.4, -5.0) for _ in range(n // 4)]
        xs += [-1.1932, -1.7677669529663687, -37.5, -38.0, 8.0]
    return xs


def pow_inputs(rng):
    pairs = []
    for _ in range(PER_FUNCTION // 2):
        x = log_uniform(rng, 1e-300, 1e300)
        limit = 700.0 / max(abs(math.log(x)), 1e-300)
        pairs.append((x, rng.uniform(-1.0, 1.0) * min(limit, 1e6)))
    for _ in range(PER_FUNCTION // 4):  # x near 1, large y: the product y log x must be exact
        x = 1.0 + rng.uniform(-1.0, 1.0) * 10 ** rng.uniform(-15, -1)
        limit = 700.0 / max(abs(math.log(x)), 1e-300)
        pairs.append((x, rng.uniform(-1.0, 1.0) * limit))
    for _ in range(PER_FUNCTION // 8):  # negative x, integer y
        x = -log_uniform(rng, 1e-3, 1e3)
        pairs.append((x, float(rng.randint(-100, 100))))
    for _ in range(PER_FUNCTION // 8):
        pairs.append((log_uniform(rng, 1e-5, 1e5), rng.uniform(-4.0, 4.0)))
    pairs += [(2.0, 0.5), (10.0, -3.0), (0.5, 1074.0), (2.0, 1023.5), (1.0000001, 1e9)]
    return pairs


def line(name, args, value):
    value = mpmath.mpf(value)
    hi = float(value)
    if not math.isfinite(hi):
        return None  # beyond f64: the tests check overflow separately
    offset = float((value - mpmath.mpf(hi)) / mpmath.mpf(ulp(hi)))
    return " ".join([name] + [f"{bits(a):016x}" for a in args] + [f"{bits(hi):016x}", f"{offset:.7f}"])


def main():
    rng = random.Random(20261201)
    lines = []
    for name, f in FUNCTIONS.items():
        for x in inputs(name, rng):
            text = line(name, [x], f(mpmath.mpf(x)))
            if text:
                lines.append(text)
    for x, y in pow_inputs(rng):
        text = line("pow", [x, y], mpmath.power(mpmath.mpf(x), mpmath.mpf(y)) if x > 0 else
                    (-1) ** int(y) * mpmath.power(-mpmath.mpf(x), mpmath.mpf(y)))
        if text:
            lines.append(text)
    path = os.path.join(os.path.dirname(__file__), "..", "gpu-std", "tests", "data", "f64_reference.txt")
    with open(path, "w") as out:
        out.write("# gpu-std's f64 math reference: written by scripts/f64_math_reference.py (mpmath, 300 bits)\n")
        out.write("\n".join(lines) + "\n")
    print(f"{len(lines)} lines -> {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
