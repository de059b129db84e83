//! Float arithmetic on f32/f64 register bits: PTX's rounding modes (directed ones from the
//! exact error of the round-to-nearest result), flush-to-zero, `.sat`, the `.approx` functions,
//! and the float helpers `cvt` and the 16-bit floats share.

use super::integer::{mask, sext};
use crate::ir::*;

#[inline]
pub(crate) fn f32_of(v: u64) -> f32 {
    f32::from_bits(v as u32)
}

#[inline]
pub(crate) fn bits32(x: f32) -> u64 {
    x.to_bits() as u64
}

#[inline]
pub(crate) fn ftz(x: f32, on: bool) -> f32 {
    if on && x.is_subnormal() {
        0f32.copysign(x)
    } else {
        x
    }
}

/// `a + b` exactly, as the rounded sum and its error (Knuth's TwoSum).
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// The exact value `s + e` (|e| at most half an f64 ulp of `s`) rounded to f32 in `mode`.
pub(super) fn round_f32(s: f64, e: f64, mode: Round) -> f32 {
    let n = s as f32;
    if !s.is_finite() {
        return n;
    }
    let d = s - n as f64;
    // The exact value compared with n: above (1), below (-1) or equal.
    let side = if d != 0.0 {
        d.signum()
    } else if e != 0.0 {
        e.signum()
    } else {
        0.0
    };
    if side == 0.0 {
        return n;
    }
    match mode {
        Round::Nearest => {
            // Only a tie in s that e breaks needs care (double rounding).
            let other = if d > 0.0 { n.next_up() } else { n.next_down() };
            let tie = d != 0.0 && (other as f64 - n as f64) / 2.0 == d;
            if tie && e != 0.0 && e.signum() == d.signum() {
                other
            } else {
                n
            }
        }
        Round::Up if side > 0.0 => {
            if n == f32::NEG_INFINITY {
                f32::MIN
            } else {
                n.next_up()
            }
        }
        Round::Down if side < 0.0 => {
            if n == f32::INFINITY {
                f32::MAX
            } else {
                n.next_down()
            }
        }
        Round::Up | Round::Down => {
            if n.is_infinite() {
                f32::MAX.copysign(n)
            } else {
                n
            }
        }
        Round::Zero if n.is_infinite() => f32::MAX.copysign(n),
        Round::Zero if (n > 0.0 && side < 0.0) || (n < 0.0 && side > 0.0) => {
            if n > 0.0 {
                n.next_down()
            } else {
                n.next_up()
            }
        }
        Round::Zero => n,
    }
}

/// The exact value `n + e` (n already rounded to nearest f64, e its error) in `mode`.
pub(super) fn round_f64(n: f64, e: f64, mode: Round) -> f64 {
    if e == 0.0 || !n.is_finite() {
        return n;
    }
    match mode {
        Round::Nearest => n,
        Round::Up if e > 0.0 => n.next_up(),
        Round::Down if e < 0.0 => n.next_down(),
        Round::Zero if n > 0.0 && e < 0.0 => n.next_down(),
        Round::Zero if n < 0.0 && e > 0.0 => n.next_up(),
        _ => n,
    }
}

pub(crate) fn min_max(a: f64, b: f64, max: bool) -> f64 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        // -0 is the smaller zero.
        return if (a.is_sign_negative() && !max) || (a.is_sign_positive() && max) {
            a
        } else {
            b
        };
    }
    if (a < b) != max {
        a
    } else {
        b
    }
}

pub(crate) fn float(op: FloatOp, f64: bool, round: Round, flush: bool, a: u64, b: u64) -> u64 {
    if f64 {
        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
        let r = match op {
            FloatOp::Add | FloatOp::Sub => {
                let y = if op == FloatOp::Sub { -y } else { y };
                let (s, e) = two_sum(x, y);
                round_f64(s, e, round)
            }
            FloatOp::Mul => {
                let p = x * y;
                round_f64(p, x.mul_add(y, -p), round)
            }
            FloatOp::Div => {
                let q = x / y;
                round_f64(q, -(q.mul_add(y, -x)) / y, round)
            }
            FloatOp::Min => min_max(x, y, false),
            FloatOp::Max => min_max(x, y, true),
            FloatOp::Copysign => y.copysign(x),
        };
        return r.to_bits();
    }
    let (x, y) = (ftz(f32_of(a), flush), ftz(f32_of(b), flush));
    let r = match (op, round) {
        (FloatOp::Add, Round::Nearest) => x + y,
        (FloatOp::Sub, Round::Nearest) => x - y,
        (FloatOp::Mul, Round::Nearest) => x * y,
        (FloatOp::Div, Round::Nearest) => x / y,
        (FloatOp::Add | FloatOp::Sub, _) => {
            let y = if op == FloatOp::Sub { -y } else { y };
            let (s, e) = two_sum(x as f64, y as f64);
            round_f32(s, e, round)
        }
        (FloatOp::Mul, _) => round_f32(x as f64 * y as f64, 0.0, round),
        (FloatOp::Div, _) => {
            let q = x as f64 / y as f64;
            round_f32(q, -(q.mul_add(y as f64, -(x as f64))) / y as f64, round)
        }
        (FloatOp::Min, _) => min_max(x as f64, y as f64, false) as f32,
        (FloatOp::Max, _) => min_max(x as f64, y as f64, true) as f32,
        (FloatOp::Copysign, _) => y.copysign(x),
    };
    bits32(ftz(r, flush))
}

pub(crate) fn fma(f64: bool, round: Round, flush: bool, a: u64, b: u64, c: u64) -> u64 {
    if f64 {
        let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
        let r = x.mul_add(y, z);
        if round == Round::Nearest || !r.is_finite() {
            return r.to_bits();
        }
        // The error of the fused result: exact product as p + pe, then the sums' errors.
        let p = x * y;
        let pe = x.mul_add(y, -p);
        let (s, e1) = two_sum(p, z);
        let (s2, e2) = two_sum(s, pe);
        let (n, e3) = two_sum(s2, e1 + e2);
        let _ = r;
        return round_f64(n, e3, round).to_bits();
    }
    let (x, y, z) = (
        ftz(f32_of(a), flush),
        ftz(f32_of(b), flush),
        ftz(f32_of(c), flush),
    );
    let r = if round == Round::Nearest {
        x.mul_add(y, z)
    } else {
        let (s, e) = two_sum(x as f64 * y as f64, z as f64);
        round_f32(s, e, round)
    };
    bits32(ftz(r, flush))
}

/// A float result under `.sat` (when `sat`): clamped to [0.0, 1.0], NaN to 0.0 (PTX ISA).
pub(crate) fn saturate_if(sat: bool, f64: bool, bits: u64) -> u64 {
    if !sat {
        return bits;
    }
    if f64 {
        let x = f64::from_bits(bits);
        (if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }).to_bits()
    } else {
        let x = f32_of(bits);
        bits32(if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) })
    }
}

pub(crate) fn float_unary(op: FloatUnOp, f64: bool, flush: bool, a: u64) -> u64 {
    if f64 {
        let x = f64::from_bits(a);
        let r = match op {
            FloatUnOp::Neg => -x,
            FloatUnOp::Abs => x.abs(),
            FloatUnOp::Sqrt | FloatUnOp::SqrtApprox => x.sqrt(),
            FloatUnOp::Rcp | FloatUnOp::RcpApprox => 1.0 / x,
            FloatUnOp::Rsqrt => 1.0 / x.sqrt(),
            FloatUnOp::Ex2 => x.exp2(),
            FloatUnOp::Lg2 => x.log2(),
            FloatUnOp::Sin => x.sin(),
            FloatUnOp::Cos => x.cos(),
            FloatUnOp::Tanh => x.tanh(),
        };
        return r.to_bits();
    }
    let x = ftz(f32_of(a), flush);
    let wide = x as f64;
    let r = match op {
        FloatUnOp::Neg => -x,
        FloatUnOp::Abs => x.abs(),
        FloatUnOp::Sqrt | FloatUnOp::SqrtApprox => x.sqrt(),
        FloatUnOp::Rcp | FloatUnOp::RcpApprox => 1.0 / x,
        FloatUnOp::Rsqrt => (1.0 / wide.sqrt()) as f32,
        FloatUnOp::Ex2 => wide.exp2() as f32,
        FloatUnOp::Lg2 => wide.log2() as f32,
        FloatUnOp::Sin => wide.sin() as f32,
        FloatUnOp::Cos => wide.cos() as f32,
        FloatUnOp::Tanh => wide.tanh() as f32,
    };
    bits32(ftz(r, flush))
}

pub(crate) fn round_integral(x: f64, mode: Round) -> f64 {
    match mode {
        Round::Nearest => x.round_ties_even(),
        Round::Zero => x.trunc(),
        Round::Down => x.floor(),
        Round::Up => x.ceil(),
    }
}

/// A float `cvt` source (f32 or f64) as an f64, an f32 subnormal flushed under `.ftz`.
pub(crate) fn float_source(a: u64, from: Ty, flush: bool) -> f64 {
    if from.bytes == 8 {
        f64::from_bits(a)
    } else {
        ftz(f32_of(a), flush) as f64
    }
}

/// An integer `cvt` source at its width, sign- or zero-extended by its type (i128: a u64 above
/// i64's range stays positive).
pub(crate) fn int_source(a: u64, from: Ty) -> i128 {
    match from.kind {
        Kind::Signed => sext(a, from.bytes) as i128,
        _ => (a & mask(from.bytes)) as i128,
    }
}

/// `.sat` on a float: clamped to [0, 1], NaN to 0 (PTX).
pub(crate) fn saturate(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}
