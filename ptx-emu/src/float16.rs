//! 16-bit floats, `.f16` (IEEE binary16) and `.bf16` (bfloat16): `cvt` to and from them and
//! their arithmetic (`add sub mul fma min max neg abs ex2 tanh`, scalar and packed `x2`).
//!
//! Values are decoded exactly to f64 (the `half` crate), computed there and rounded once to
//! the 16-bit format. That is exact for every operation but `fma` and sums of far-apart
//! `.bf16` values, so those are first rounded *to odd* in f64 (the exact result's f64
//! neighbours, the one with the odd last bit): 53 bits rounded to odd, then to 11 or 8
//! bits, gives the correctly rounded result in every rounding mode (Boldo and Melquiond,
//! "Emulation of FMA and correctly rounded sums: proved algorithms using rounding to odd").

use crate::arith::{
    bits32, float_source, ftz, int_source, min_max, round_integral, saturate, two_sum,
};
use crate::ir::*;

/// A 16-bit float format: `.f16` (IEEE binary16) or `.bf16` (bfloat16).
#[derive(Clone, Copy)]
pub(crate) struct Half {
    /// Significand bits, the hidden one included.
    precision: i32,
    /// The smallest normal exponent and the largest exponent.
    min_exp: i32,
    max_exp: i32,
    bfloat: bool,
}

pub(crate) const F16: Half = Half {
    precision: 11,
    min_exp: -14,
    max_exp: 15,
    bfloat: false,
};
pub(crate) const BF16: Half = Half {
    precision: 8,
    min_exp: -126,
    max_exp: 127,
    bfloat: true,
};

impl Half {
    pub(crate) fn of(t: Ty) -> Option<Half> {
        match (t.kind, t.bytes) {
            (Kind::Float, 2) => Some(F16),
            (Kind::BFloat, _) => Some(BF16),
            _ => None,
        }
    }

    /// The largest finite value.
    fn max(self) -> f64 {
        (2.0 - 2f64.powi(1 - self.precision)) * 2f64.powi(self.max_exp)
    }

    fn decode(self, bits: u64) -> f64 {
        match self.bfloat {
            true => half::bf16::from_bits(bits as u16).to_f64(),
            false => half::f16::from_bits(bits as u16).to_f64(),
        }
    }

    /// Whether the finite nonzero `x` is below the smallest normal value.
    fn subnormal(self, x: f64) -> bool {
        x != 0.0 && x.abs() < 2f64.powi(self.min_exp)
    }

    /// `x`, a subnormal flushed to zero of its sign when `on` (`.ftz`).
    fn flush(self, x: f64, on: bool) -> f64 {
        match on && self.subnormal(x) {
            true => 0.0f64.copysign(x),
            false => x,
        }
    }

    /// The bits of `x`, which is NaN, infinite or exactly representable (rounded by `round`).
    fn encode(self, x: f64) -> u64 {
        if x.is_nan() {
            // The canonical NaN the hardware's cvt produces.
            return 0x7fff;
        }
        match self.bfloat {
            true => half::bf16::from_f64(x).to_bits() as u64,
            false => half::f16::from_f64(x).to_bits() as u64,
        }
    }

    /// `x` rounded to this format by `mode`, as a (then exactly representable) f64: subnormals
    /// kept, overflow to infinity or the largest finite value as IEEE's directed modes say.
    fn round(self, x: f64, mode: Round) -> f64 {
        if x == 0.0 || !x.is_finite() {
            return x;
        }
        let exponent = ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        let exponent = exponent.max(self.min_exp);
        // A power of two: dividing and multiplying by it is exact.
        let ulp = 2f64.powi(exponent - (self.precision - 1));
        let q = x / ulp;
        let r = match mode {
            Round::Nearest => q.round_ties_even(),
            Round::Zero => q.trunc(),
            Round::Down => q.floor(),
            Round::Up => q.ceil(),
        } * ulp;
        let max = self.max();
        if r.abs() <= max {
            return r;
        }
        let toward_zero = match mode {
            Round::Nearest => false,
            Round::Zero => true,
            Round::Down => x > 0.0,
            Round::Up => x < 0.0,
        };
        match toward_zero {
            true => max.copysign(x),
            false => f64::INFINITY.copysign(x),
        }
    }

    /// The integer `v` rounded to this format by `mode`.
    fn round_integer(self, v: i128, mode: Round) -> f64 {
        if v.unsigned_abs() < 1 << 53 {
            return self.round(v as f64, mode);
        }
        // Rounded in the integers: `v as f64` would round once more first.
        let magnitude = v.unsigned_abs();
        let shift = 128 - magnitude.leading_zeros() as i32 - self.precision;
        let (q, rem) = (magnitude >> shift, magnitude & ((1u128 << shift) - 1));
        let half = 1u128 << (shift - 1);
        let up = match mode {
            Round::Nearest => rem > half || (rem == half && q & 1 == 1),
            Round::Zero => false,
            Round::Down => v < 0 && rem > 0,
            Round::Up => v > 0 && rem > 0,
        };
        let value = (q + u128::from(up)) as f64 * 2f64.powi(shift);
        self.round(if v < 0 { -value } else { value }, mode)
    }
}

/// `cvt` with an `.f16` or `.bf16` on either side: every direction, every rounding mode; a
/// NaN becomes the GPU's canonical one (`0x7fff`, `0x7fff_ffff`). With `int_round` (`.rni`
/// `.rzi` `.rmi` `.rpi`) a float is rounded to an integral value in its own format
/// (`cvt.rzi.bf16.bf16` is bfloat16's `trunc`).
pub(crate) fn convert(cvt: Conversion, a: u64) -> Option<u64> {
    let Conversion { to, from, .. } = cvt;
    let mode = cvt.round.unwrap_or(Round::Nearest);
    let integer = |t: Ty| matches!(t.kind, Kind::Signed | Kind::Unsigned);
    // The source's exact value (an integer apart, as it may not fit an f64 exactly).
    let value = match Half::of(from) {
        Some(h) => Some(h.decode(a)),
        None if from.kind == Kind::Float => Some(float_source(a, from, cvt.flush)),
        None => None,
    };
    let clamp = |x: f64| if cvt.sat { saturate(x) } else { x };
    if let Some(h) = Half::of(to) {
        let rounded = match value {
            Some(x) if cvt.int_round => h.round(round_integral(x, mode), mode),
            Some(x) => h.round(x, mode),
            None if integer(from) => h.round_integer(int_source(a, from), mode),
            None => return None,
        };
        return Some(h.encode(clamp(rounded)));
    }
    // From a 16-bit float to something wider: exact, or an integer by `cvt`'s integer rounding.
    let x = value?;
    let x = if cvt.int_round {
        round_integral(x, mode)
    } else {
        x
    };
    match to.kind {
        // A NaN widens to the canonical NaN, as the hardware's cvt gives it.
        Kind::Float if x.is_nan() && to.bytes == 8 => Some(0x7fff_ffff_ffff_ffff),
        Kind::Float if x.is_nan() => Some(0x7fff_ffff),
        Kind::Float if to.bytes == 8 => Some(clamp(x).to_bits()),
        Kind::Float => Some(bits32(ftz(clamp(x) as f32, cvt.flush))),
        Kind::Signed | Kind::Unsigned => {
            let x = round_integral(x, mode);
            let w = to.bytes as u32 * 8;
            let (lo, hi) = match to.kind {
                Kind::Signed => (-(2f64.powi(w as i32 - 1)), 2f64.powi(w as i32 - 1) - 1.0),
                _ => (0.0, 2f64.powi(w as i32) - 1.0),
            };
            // Float to integer saturates, NaN to 0 (PTX).
            let x = if x.is_nan() { 0.0 } else { x.clamp(lo, hi) };
            Some(match to.kind {
                Kind::Signed => (x as i64) as u64,
                _ => x as u64,
            })
        }
        _ => None,
    }
}

/// The bits of the "OOB-NaN" that `fma.oob` recognises. The PTX ISA names it (the NaN that a
/// bulk tensor copy's `.nan_request_zero_fma` fill stores out of bounds) without giving its bits;
/// the emulator takes the format's canonical NaN, which is also the NaN its arithmetic makes.
pub(crate) const OOB_NAN: u64 = 0x7fff;

/// `a * b + c` rounded to odd at f64's 53 bits (see the module's comment), for `a` `b` `c`
/// decoded from 16-bit floats: their product is exact in f64 (at most 22 significant bits,
/// exponents far inside f64's range), so only the sum's error needs keeping.
fn fma_to_odd(a: f64, b: f64, c: f64) -> f64 {
    let (s, e) = two_sum(a * b, c);
    if !s.is_finite() || e == 0.0 || s.to_bits() & 1 == 1 {
        return s;
    }
    // s is even and not exact: the exact value lies between s and its neighbour towards e.
    let away_from_zero = (e > 0.0) == (s > 0.0);
    f64::from_bits(if away_from_zero {
        s.to_bits() + 1
    } else {
        s.to_bits() - 1
    })
}

/// One 16-bit lane of [`Op::Half`]: `[a, b, c]` are the lane's operand bits.
fn lane(op: HalfOp, h: Half, round: Round, flush: bool, clamp: Clamp, [a, b, c]: [u64; 3]) -> u64 {
    const SIGN: u64 = 0x8000;
    if matches!(clamp, Clamp::Oob { .. }) && [a, b, c].contains(&OOB_NAN) {
        return 0;
    }
    let value = |bits: u64| h.flush(h.decode(bits), flush);
    let (x, y) = (value(a), value(b));
    let exact = match op {
        HalfOp::Add => fma_to_odd(x, 1.0, y),
        HalfOp::Sub => fma_to_odd(x, 1.0, -y),
        HalfOp::Mul => fma_to_odd(x, y, -0.0),
        HalfOp::Fma => fma_to_odd(x, y, value(c)),
        // The sign bit alone, as the hardware does (a NaN keeps its payload).
        HalfOp::Neg if x.is_nan() => return a ^ SIGN,
        HalfOp::Abs if x.is_nan() => return a & !SIGN,
        HalfOp::Neg => -x,
        HalfOp::Abs => x.abs(),
        HalfOp::Min | HalfOp::Max if x.is_nan() && y.is_nan() => f64::NAN,
        HalfOp::MinNaN | HalfOp::MaxNaN if x.is_nan() || y.is_nan() => f64::NAN,
        HalfOp::Min | HalfOp::MinNaN => min_max(x, y, false),
        HalfOp::Max | HalfOp::MaxNaN => min_max(x, y, true),
        HalfOp::MinXorsign { nan } | HalfOp::MaxXorsign { nan } => {
            let max = matches!(op, HalfOp::MaxXorsign { .. });
            // A NaN result ignores `.xorsign.abs` (the canonical NaN, below).
            if (x.is_nan() && y.is_nan()) || (nan && (x.is_nan() || y.is_nan())) {
                f64::NAN
            } else {
                let magnitude = min_max(x.abs(), y.abs(), max);
                // The signs of the operands as given, before `.abs`.
                match (a ^ b) & SIGN != 0 {
                    true => -magnitude,
                    false => magnitude,
                }
            }
        }
        // `.approx`: computed in f64 and rounded once, well inside the stated error.
        HalfOp::Ex2 => x.exp2(),
        HalfOp::Tanh => x.tanh(),
    };
    let r = h.flush(h.round(exact, round), flush);
    let r = match clamp {
        Clamp::None => r,
        Clamp::Sat if r.is_nan() => 0.0,
        Clamp::Sat => r.clamp(0.0, 1.0),
        Clamp::Relu | Clamp::Oob { relu: true } if r.is_nan() => r,
        Clamp::Relu | Clamp::Oob { relu: true } => r.max(0.0),
        Clamp::Oob { relu: false } => r,
    };
    h.encode(r)
}

/// [`Op::Half`]: on the low 16 bits, or with `packed` (`.f16x2`, `.bf16x2`) on both halves
/// of a 32-bit register independently. Out of line: the interpreter's loop stays as it was.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub(crate) fn arithmetic(
    op: HalfOp,
    bfloat: bool,
    packed: bool,
    round: Round,
    flush: bool,
    clamp: Clamp,
    a: u64,
    b: u64,
    c: u64,
) -> u64 {
    let h = if bfloat { BF16 } else { F16 };
    let at = |shift: u32| {
        let bits = |v: u64| (v >> shift) & 0xffff;
        lane(op, h, round, flush, clamp, [bits(a), bits(b), bits(c)]) << shift
    };
    match packed {
        true => at(0) | at(16),
        false => at(0),
    }
}

/// `setp` on `.f16` or `.bf16` operands: their values, exactly. Out of line and cold, so that
/// the interpreter's f32/f64 comparisons stay as small as they were.
#[cold]
#[inline(never)]
pub(crate) fn values(t: Ty, a: u64, b: u64) -> Option<(f64, f64)> {
    Half::of(t).map(|h| (h.decode(a & 0xffff), h.decode(b & 0xffff)))
}
