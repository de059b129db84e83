//! The arithmetic of PTX instructions on register bits: integers at their width, floats with
//! PTX's rounding modes, flush-to-zero, conversions with saturation, and the `.approx`
//! functions (computed in f64 and rounded once: well inside the PTX ISA's stated error).

use crate::float16::{self, Half};
use crate::ir::*;

#[inline]
pub(crate) fn mask(bytes: u8) -> u64 {
    if bytes >= 8 {
        u64::MAX
    } else {
        (1u64 << (bytes * 8)) - 1
    }
}

/// `v`'s low `bytes` bytes, sign-extended.
#[inline]
pub(crate) fn sext(v: u64, bytes: u8) -> i64 {
    let shift = 64 - bytes as u32 * 8;
    ((v << shift) as i64) >> shift
}

/// `op` at `t`'s width. The interpreter's common operations are computed here from the masked
/// operands alone; the others (signed ones, division, high multiplies, saturation) in
/// [`int_other`], out of line. Small, it is inlined into the interpreter's loop: with every
/// operation here it was called out of line, saved five registers for the sign-extended
/// operands and the 128-bit products, and cost 39 host instructions a call on average
/// (callgrind, `speed --small`).
#[inline]
pub(crate) fn int(op: IntOp, t: Ty, a: u64, b: u64) -> u64 {
    let m = mask(t.bytes);
    let bits = t.bytes as u32 * 8;
    let (ua, ub) = (a & m, b & m);
    let r = match op {
        IntOp::Add => ua.wrapping_add(ub),
        IntOp::Sub => ua.wrapping_sub(ub),
        IntOp::MulLo => ua.wrapping_mul(ub),
        IntOp::And => ua & ub,
        IntOp::Or => ua | ub,
        IntOp::Xor => ua ^ ub,
        // Shift amounts past the width clamp (PTX): zeros, or sign bits for shr.s.
        IntOp::Shl => (b as u32)
            .checked_sub(bits)
            .map_or(ua << (b as u32 & 63), |_| 0),
        IntOp::Shr if t.kind != Kind::Signed => (b as u32)
            .checked_sub(bits)
            .map_or(ua >> (b as u32 & 63), |_| 0),
        _ => return int_other(op, t, a, b),
    };
    r & m
}

/// [`int`]'s other operations.
#[inline(never)]
fn int_other(op: IntOp, t: Ty, a: u64, b: u64) -> u64 {
    let w = t.bytes;
    let m = mask(w);
    let bits = w as u32 * 8;
    let signed = t.kind == Kind::Signed;
    let (ua, ub) = (a & m, b & m);
    let (sa, sb) = (sext(a, w), sext(b, w));
    let r = match op {
        IntOp::MulHi if signed => ((sa as i128 * sb as i128) >> bits) as u64,
        IntOp::MulHi => ((ua as u128 * ub as u128) >> bits) as u64,
        IntOp::Min if signed => sa.min(sb) as u64,
        IntOp::Min => ua.min(ub),
        IntOp::Max if signed => sa.max(sb) as u64,
        IntOp::Max => ua.max(ub),
        // Division by zero is "unspecified, machine-specific" in PTX: all ones, as hardware gives.
        IntOp::Div if ub == 0 => u64::MAX,
        IntOp::Div if signed => sa.wrapping_div(sb) as u64,
        IntOp::Div => ua / ub,
        IntOp::Rem if ub == 0 => ua,
        IntOp::Rem if signed => sa.wrapping_rem(sb) as u64,
        IntOp::Rem => ua % ub,
        IntOp::Shr => (sa >> (b as u32).min(63)) as u64,
        IntOp::AddSat => (sa as i32).saturating_add(sb as i32) as u32 as u64,
        IntOp::SubSat => (sa as i32).saturating_sub(sb as i32) as u32 as u64,
        IntOp::AbsDiff if signed => sa.abs_diff(sb),
        IntOp::AbsDiff => ua.abs_diff(ub),
        IntOp::Add
        | IntOp::Sub
        | IntOp::MulLo
        | IntOp::And
        | IntOp::Or
        | IntOp::Xor
        | IntOp::Shl => unreachable!("int computes {op:?} itself"),
    };
    r & m
}

#[inline]
pub(crate) fn mul_wide(t: Ty, a: u64, b: u64) -> u64 {
    let w = t.bytes;
    let r = if t.kind == Kind::Signed {
        (sext(a, w).wrapping_mul(sext(b, w))) as u64
    } else {
        (a & mask(w)).wrapping_mul(b & mask(w))
    };
    r & mask(w * 2)
}

pub(crate) fn int_unary(op: UnOp, t: Ty, a: u64) -> u64 {
    let w = t.bytes;
    let m = mask(w);
    let bits = w as u32 * 8;
    match op {
        UnOp::Not => !a & m,
        UnOp::Neg => a.wrapping_neg() & m,
        UnOp::Abs => (sext(a, w).wrapping_abs() as u64) & m,
        UnOp::Popc => (a & m).count_ones() as u64,
        UnOp::Clz => ((a & m).leading_zeros() - (64 - bits)) as u64,
        UnOp::Brev => (a & m).reverse_bits() >> (64 - bits),
    }
}

/// `shf.l`/`shf.r` on `{b:a}` (b the high word) by `c`: clamped to 32 or taken mod 32.
pub(crate) fn funnel_shift(left: bool, wrap: bool, a: u64, b: u64, c: u64) -> u64 {
    let n = if wrap {
        c as u32 & 31
    } else {
        (c as u32).min(32)
    };
    let wide = ((b as u32 as u64) << 32) | a as u32 as u64;
    if left {
        ((wide << n) >> 32) as u32 as u64
    } else {
        (wide >> n) as u32 as u64
    }
}

/// `prmt.b32` default mode: result byte i is byte `c[4i+2:4i]` of `{b, a}`, or with `c[4i+3]`
/// set, that byte's sign bit replicated.
pub(crate) fn permute(a: u64, b: u64, c: u64) -> u64 {
    let bytes = (((b as u32 as u64) << 32) | a as u32 as u64).to_le_bytes();
    let mut d = 0u64;
    for i in 0..4 {
        let selector = (c >> (4 * i)) & 0xf;
        let byte = bytes[(selector & 7) as usize];
        let byte = if selector & 8 != 0 {
            ((byte as i8) >> 7) as u8
        } else {
            byte
        };
        d |= (byte as u64) << (8 * i);
    }
    d
}

pub(crate) fn bfind(t: Ty, shift_amount: bool, a: u64) -> u64 {
    let bits = t.bytes as u32 * 8;
    let v = a & mask(t.bytes);
    // For a negative signed value, the most significant 0 bit.
    let v = if t.kind == Kind::Signed && sext(v, t.bytes) < 0 {
        !v & mask(t.bytes)
    } else {
        v
    };
    if v == 0 {
        return u32::MAX as u64;
    }
    let position = 63 - v.leading_zeros();
    (if shift_amount {
        bits - 1 - position
    } else {
        position
    }) as u64
}

pub(crate) fn float_test(test: FloatTest, f64: bool, a: u64) -> bool {
    let x = if f64 {
        f64::from_bits(a)
    } else {
        f32_of(a) as f64
    };
    let subnormal = if f64 {
        x.is_subnormal()
    } else {
        f32_of(a).is_subnormal()
    };
    match test {
        FloatTest::Finite => x.is_finite(),
        FloatTest::Infinite => x.is_infinite(),
        FloatTest::Number => !x.is_nan(),
        FloatTest::NotANumber => x.is_nan(),
        FloatTest::Normal => x.is_finite() && x != 0.0 && !subnormal,
        FloatTest::Subnormal => subnormal,
    }
}

pub(crate) fn mul24(hi: bool, t: Ty, a: u64, b: u64, c: u64) -> u64 {
    let (x, y) = if t.kind == Kind::Signed {
        (sext(a, 3), sext(b, 3))
    } else {
        ((a & 0xff_ffff) as i64, (b & 0xff_ffff) as i64)
    };
    let product = (x * y) as u64;
    let part = if hi { product >> 16 } else { product };
    part.wrapping_add(c) & mask(4)
}

pub(crate) fn bfe(t: Ty, a: u64, pos: u64, len: u64) -> u64 {
    let bits = t.bytes as u64 * 8;
    let (pos, len) = (pos & 0xff, len & 0xff);
    let msb = bits - 1;
    let sign = t.kind == Kind::Signed && len > 0 && (a >> (pos + len - 1).min(msb)) & 1 == 1;
    let mut d = 0;
    for i in 0..bits {
        let bit = if i < len && pos + i <= msb {
            (a >> (pos + i)) & 1 == 1
        } else {
            sign
        };
        d |= (bit as u64) << i;
    }
    d
}

pub(crate) fn bfi(t: Ty, a: u64, b: u64, pos: u64, len: u64) -> u64 {
    let bits = t.bytes as u64 * 8;
    let (pos, len) = (pos & 0xff, len & 0xff);
    let mut d = b & mask(t.bytes);
    for i in 0..len.min(bits) {
        if pos + i < bits {
            d = (d & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        }
    }
    d
}

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
fn round_f32(s: f64, e: f64, mode: Round) -> f32 {
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
fn round_f64(n: f64, e: f64, mode: Round) -> f64 {
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

pub(crate) fn compare(cmp: Cmp, t: Ty, a: u64, b: u64) -> bool {
    match t.kind {
        Kind::Float | Kind::BFloat => {
            let (x, y) = match t.bytes {
                8 => (f64::from_bits(a), f64::from_bits(b)),
                4 => (f32_of(a) as f64, f32_of(b) as f64),
                _ => float16::values(t, a, b).unwrap_or((f64::NAN, f64::NAN)),
            };
            let unordered = x.is_nan() || y.is_nan();
            match cmp {
                Cmp::Eq => x == y,
                Cmp::Ne => !unordered && x != y,
                Cmp::Lt => x < y,
                Cmp::Le => x <= y,
                Cmp::Gt => x > y,
                Cmp::Ge => x >= y,
                Cmp::Equ => unordered || x == y,
                Cmp::Neu => x != y,
                Cmp::Ltu => unordered || x < y,
                Cmp::Leu => unordered || x <= y,
                Cmp::Gtu => unordered || x > y,
                Cmp::Geu => unordered || x >= y,
                Cmp::Num => !unordered,
                Cmp::Nan => unordered,
            }
        }
        _ => {
            let ord = if t.kind == Kind::Signed {
                sext(a, t.bytes).cmp(&sext(b, t.bytes))
            } else {
                (a & mask(t.bytes)).cmp(&(b & mask(t.bytes)))
            };
            match cmp {
                Cmp::Eq | Cmp::Equ => ord.is_eq(),
                Cmp::Ne | Cmp::Neu => ord.is_ne(),
                Cmp::Lt | Cmp::Ltu => ord.is_lt(),
                Cmp::Le | Cmp::Leu => ord.is_le(),
                Cmp::Gt | Cmp::Gtu => ord.is_gt(),
                Cmp::Ge | Cmp::Geu => ord.is_ge(),
                Cmp::Num => true,
                Cmp::Nan => false,
            }
        }
    }
}

pub(crate) fn round_integral(x: f64, mode: Round) -> f64 {
    match mode {
        Round::Nearest => x.round_ties_even(),
        Round::Zero => x.trunc(),
        Round::Down => x.floor(),
        Round::Up => x.ceil(),
    }
}

/// `cvt`: `None` when the conversion is not supported (a type `cvt` does not take).
///
/// Between integers without `.sat` (an index widened to 64 bits: the commonest `cvt` by far) the
/// result is computed here, inline in the interpreter's loop; every other conversion in
/// [`convert_other`], out of line.
#[inline]
pub(crate) fn convert(cvt: Conversion, a: u64) -> Option<u64> {
    let Conversion { to, from, sat, .. } = cvt;
    let integer = |t: Ty| matches!(t.kind, Kind::Signed | Kind::Unsigned);
    if sat || !integer(from) || !integer(to) {
        return convert_other(cvt, a);
    }
    // The source at its width, then sign- or zero-extended from the destination's (see the end
    // of convert_other).
    let v = match from.kind {
        Kind::Signed => sext(a, from.bytes) as u64,
        _ => a & mask(from.bytes),
    };
    Some(match to.kind {
        Kind::Signed => sext(v, to.bytes) as u64,
        _ => v & mask(to.bytes),
    })
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

/// [`convert`]'s other conversions: floats, 16-bit floats, `.sat`.
#[inline(never)]
fn convert_other(cvt: Conversion, a: u64) -> Option<u64> {
    let Conversion {
        to,
        from,
        round,
        int_round,
        sat,
        flush,
    } = cvt;
    let mode = round.unwrap_or(Round::Nearest);
    if Half::of(to).is_some() || Half::of(from).is_some() {
        let value = float16::convert(cvt, a)?;
        return Some(match to.kind {
            Kind::Signed => sext(value & mask(to.bytes), to.bytes) as u64,
            _ => value & mask(to.bytes),
        });
    }
    let value = match (from.kind, to.kind) {
        (Kind::Float, Kind::Float) => {
            let x = float_source(a, from, flush);
            let x = if int_round {
                round_integral(x, mode)
            } else {
                x
            };
            let x = if sat { saturate(x) } else { x };
            if to.bytes == 8 {
                x.to_bits()
            } else {
                bits32(ftz(round_f32(x, 0.0, mode), flush))
            }
        }
        (Kind::Float, _) => {
            let x = float_source(a, from, flush);
            let x = round_integral(x, mode);
            // Float to integer always saturates, NaN to 0 (PTX), as Rust's `as` does.
            let signed = to.kind == Kind::Signed;
            match (to.bytes, signed) {
                (8, true) => x as i64 as u64,
                (8, false) => x as u64,
                (w, true) => {
                    let lim = (1i64 << (w * 8 - 1)) as f64;
                    (if x.is_nan() {
                        0.0
                    } else {
                        x.clamp(-lim, lim - 1.0)
                    }) as i64 as u64
                }
                (w, false) => {
                    (if x.is_nan() {
                        0.0
                    } else {
                        x.clamp(0.0, mask(w) as f64)
                    }) as u64
                }
            }
        }
        (_, Kind::Float) => {
            let v = int_source(a, from);
            if to.bytes == 8 {
                let n = v as f64;
                let e = (v - n as i128) as f64;
                round_f64(n, e, mode).to_bits()
            } else {
                let n = v as f64;
                let e = (v - n as i128) as f64;
                let r = round_f32(n, e, mode);
                let r = if sat { r.clamp(0.0, 1.0) } else { r };
                bits32(r)
            }
        }
        _ => {
            let v = int_source(a, from);
            if sat {
                let (lo, hi) = if to.kind == Kind::Signed {
                    (
                        -(1i128 << (to.bytes * 8 - 1)),
                        (1i128 << (to.bytes * 8 - 1)) - 1,
                    )
                } else {
                    (0, mask(to.bytes) as i128)
                };
                v.clamp(lo, hi) as u64
            } else if to.kind == Kind::Signed && to.bytes < 8 {
                // Sign-extended into the register's width as PTX's cvt.s64.s32 etc. do.
                (v as u64) & mask(to.bytes)
            } else {
                v as u64
            }
        }
    };
    // An integer result is sign- or zero-extended to the destination register's width (PTX:
    // `cvt.s8.s32 %rs1, %r1` leaves -128 in the 16-bit `%rs1` as 0xff80). Registers hold 64
    // bits here and every reader masks to its type, so a signed result is kept sign-extended
    // to 64 bits, as a signed load leaves it.
    match to.kind {
        Kind::Signed => Some(sext(value & mask(to.bytes), to.bytes) as u64),
        _ => Some(value & mask(to.bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `cvt` from `from` to `to` with no modifiers; the tests add theirs with `..plain(to, from)`.
    fn plain(to: Ty, from: Ty) -> Conversion {
        Conversion {
            to,
            from,
            round: None,
            int_round: false,
            sat: false,
            flush: false,
        }
    }

    const F32: Ty = Ty {
        kind: Kind::Float,
        bytes: 4,
    };

    /// Every integer operation at 32 bits, signed and unsigned, against Rust's own `i32`/`u32`
    /// arithmetic, with garbage in the registers' high halves (which must not matter).
    #[test]
    fn integer_operations_match_native_32_bit_arithmetic() {
        let values = [
            0u32,
            1,
            2,
            7,
            31,
            32,
            33,
            40,
            0x1234_5678,
            0x8000_0000,
            0x7fff_ffff,
        ]
        .into_iter()
        .flat_map(|v| [v, v.wrapping_neg()]);
        let pairs: Vec<(u32, u32)> = values
            .clone()
            .flat_map(|x| values.clone().map(move |y| (x, y)))
            .collect();
        let reference = |op: IntOp, signed: bool, x: u32, y: u32| -> u32 {
            let (sx, sy) = (x as i32, y as i32);
            match (op, signed) {
                (IntOp::Add, _) => x.wrapping_add(y),
                (IntOp::Sub, _) => x.wrapping_sub(y),
                (IntOp::MulLo, _) => x.wrapping_mul(y),
                (IntOp::MulHi, true) => ((sx as i64 * sy as i64) >> 32) as u32,
                (IntOp::MulHi, false) => ((x as u64 * y as u64) >> 32) as u32,
                (IntOp::Min, true) => sx.min(sy) as u32,
                (IntOp::Min, false) => x.min(y),
                (IntOp::Max, true) => sx.max(sy) as u32,
                (IntOp::Max, false) => x.max(y),
                (IntOp::Div, _) if y == 0 => u32::MAX,
                (IntOp::Div, true) => sx.wrapping_div(sy) as u32,
                (IntOp::Div, false) => x / y,
                (IntOp::Rem, _) if y == 0 => x,
                (IntOp::Rem, true) => sx.wrapping_rem(sy) as u32,
                (IntOp::Rem, false) => x % y,
                (IntOp::And, _) => x & y,
                (IntOp::Or, _) => x | y,
                (IntOp::Xor, _) => x ^ y,
                (IntOp::Shl, _) => x.checked_shl(y).unwrap_or(0),
                (IntOp::Shr, true) => (sx >> y.min(31)) as u32,
                (IntOp::Shr, false) => x.checked_shr(y).unwrap_or(0),
                (IntOp::AddSat, _) => sx.saturating_add(sy) as u32,
                (IntOp::SubSat, _) => sx.saturating_sub(sy) as u32,
                (IntOp::AbsDiff, true) => sx.abs_diff(sy),
                (IntOp::AbsDiff, false) => x.abs_diff(y),
            }
        };
        use IntOp::*;
        let ops = [
            Add, Sub, MulLo, MulHi, Min, Max, Div, Rem, And, Or, Xor, Shl, Shr, AddSat, SubSat,
            AbsDiff,
        ];
        for op in ops {
            for signed in [false, true] {
                let kind = if signed { Kind::Signed } else { Kind::Unsigned };
                let t = Ty { kind, bytes: 4 };
                for &(x, y) in &pairs {
                    let garbage = 0xdead_beef_0000_0000;
                    let got = int(op, t, garbage | x as u64, garbage | y as u64);
                    let want = reference(op, signed, x, y) as u64;
                    assert_eq!(got, want, "{op:?} signed={signed} {x:#x} {y:#x}");
                }
            }
        }
    }

    /// `cvt` between integers of every width and signedness against arithmetic on the values
    /// (modulo the widths in i128), and `.sat`'s clamp, which takes the out-of-line path.
    #[test]
    fn integer_conversions_match_the_values_modulo_their_widths() {
        let tys = [1u8, 2, 4, 8]
            .into_iter()
            .flat_map(|bytes| [Kind::Signed, Kind::Unsigned].map(|kind| Ty { kind, bytes }));
        // The value of the `t.bytes` low bytes of `a`, as `t` reads them.
        let value = |t: Ty, a: u64| -> i128 {
            let modulus = 1i128 << (t.bytes as u32 * 8);
            let v = (a as i128).rem_euclid(modulus);
            if t.kind == Kind::Signed && v >= modulus / 2 {
                v - modulus
            } else {
                v
            }
        };
        let samples = [
            0u64,
            1,
            0x7f,
            0x80,
            0xff,
            0x8000,
            0xdead_beef,
            0x8000_0000,
            u64::MAX,
        ];
        for from in tys.clone() {
            for to in tys.clone() {
                for a in samples {
                    let got = convert(plain(to, from), a).unwrap();
                    // Registers keep a signed result sign-extended to 64 bits.
                    let want = value(to, value(from, a) as u64) as i64 as u64;
                    let want = if to.kind == Kind::Signed {
                        want
                    } else {
                        want & mask(to.bytes)
                    };
                    assert_eq!(got, want, "cvt {to:?} <- {from:?} of {a:#x}");
                }
            }
        }
        let s32 = Ty {
            kind: Kind::Signed,
            bytes: 4,
        };
        let u8_ = Ty {
            kind: Kind::Unsigned,
            bytes: 1,
        };
        assert_eq!(
            convert(
                Conversion {
                    sat: true,
                    ..plain(u8_, s32)
                },
                300
            )
            .unwrap(),
            255
        );
        let minus_one = (-1i32) as u32 as u64;
        assert_eq!(
            convert(
                Conversion {
                    sat: true,
                    ..plain(u8_, s32)
                },
                minus_one
            )
            .unwrap(),
            0
        );
    }

    #[test]
    fn directed_rounding_of_a_tiny_addend() {
        let one = bits32(1.0);
        let tiny = bits32(2f32.powi(-30));
        let add = |r| f32_of(float(FloatOp::Add, false, r, false, one, tiny));
        assert_eq!(add(Round::Nearest), 1.0);
        assert_eq!(add(Round::Zero), 1.0);
        assert_eq!(add(Round::Down), 1.0);
        assert_eq!(add(Round::Up), 1.0 + f32::EPSILON);
        let sub = |r| f32_of(float(FloatOp::Sub, false, r, false, one, tiny));
        assert_eq!(sub(Round::Zero), 1.0f32.next_down());
        assert_eq!(sub(Round::Up), 1.0);
    }

    #[test]
    fn float_to_int_saturates_and_nan_is_zero() {
        let s32 = Ty {
            kind: Kind::Signed,
            bytes: 4,
        };
        let cvt = |x: f32| {
            convert(
                Conversion {
                    round: Some(Round::Zero),
                    int_round: true,
                    ..plain(s32, F32)
                },
                bits32(x),
            )
            .unwrap()
        };
        assert_eq!(cvt(3e9), i32::MAX as u64);
        assert_eq!(cvt(-3e9), i32::MIN as i64 as u64);
        assert_eq!(cvt(f32::NAN), 0);
        assert_eq!(cvt(-2.7), (-2i64) as u64);
    }

    /// `cvt.s8.s32 %rs1, %r1` sign-extends into the (16-bit) register, so `setp.lt.s16` and
    /// `max.s16` see -128, not 128: rustc's `i8::max` on a byte from a 32-bit word is that.
    #[test]
    fn a_narrow_signed_conversion_is_sign_extended_into_its_register() {
        let ty = |kind, bytes| Ty { kind, bytes };
        let (s8, s16, s32, u8_) = (
            ty(Kind::Signed, 1),
            ty(Kind::Signed, 2),
            ty(Kind::Signed, 4),
            ty(Kind::Unsigned, 1),
        );
        let narrowed = convert(plain(s8, s32), 0x1234_5680).unwrap();
        assert_eq!(narrowed, -128i64 as u64);
        assert_eq!(int(IntOp::Max, s16, narrowed, 37), 37);
        assert_eq!(int(IntOp::Min, s16, narrowed, 37), 0xff80);
        // Unsigned: zero-extended.
        assert_eq!(convert(plain(u8_, s32), 0x1234_5680).unwrap(), 0x80);
        // Saturating: clamped, then sign-extended.
        assert_eq!(
            convert(
                Conversion {
                    sat: true,
                    ..plain(s8, s32)
                },
                (-1000i64) as u64
            )
            .unwrap(),
            -128i64 as u64
        );
    }

    #[test]
    fn f16_conversions_round_to_nearest_even_and_canonicalise_nan() {
        let f16 = Ty {
            kind: Kind::Float,
            bytes: 2,
        };
        let to_half = |x: f32| {
            convert(
                Conversion {
                    round: Some(Round::Nearest),
                    ..plain(f16, F32)
                },
                bits32(x),
            )
            .unwrap()
        };
        let tiny = 2f32.powi(-24); // the smallest f16 subnormal
        assert_eq!(to_half(1.0), 0x3c00);
        assert_eq!(to_half(-0.0), 0x8000);
        assert_eq!(to_half(65504.0), 0x7bff); // the largest f16
        assert_eq!(to_half(65520.0), 0x7c00); // halfway to 2^16: ties to even, infinity
        assert_eq!(to_half(tiny), 0x0001);
        assert_eq!(to_half(tiny / 2.0), 0x0000); // a tie with 0: even
        assert_eq!(to_half(tiny * 1.5), 0x0002); // a tie between 1 and 2: even
        assert_eq!(to_half(f32::from_bits(0xffc0_1234)), 0x7fff);
        let to_single = |h: u64| f32_of(convert(plain(F32, f16), h).unwrap());
        assert_eq!(to_single(0x0001), tiny);
        assert_eq!(to_single(0xfc00), f32::NEG_INFINITY);
        assert_eq!(to_single(0x7bff), 65504.0);
        assert_eq!(to_single(0x7e01).to_bits(), 0x7fff_ffff);
        // Directed rounding: 1 + 2^-12 is between 1 and the next f16 (1 + 2^-10).
        let just_above_one = bits32(1.0 + 2f32.powi(-12));
        let directed = |mode| {
            convert(
                Conversion {
                    round: Some(mode),
                    ..plain(f16, F32)
                },
                just_above_one,
            )
        };
        assert_eq!(directed(Round::Zero), Some(0x3c00));
        assert_eq!(directed(Round::Down), Some(0x3c00));
        assert_eq!(directed(Round::Up), Some(0x3c01));
        assert_eq!(directed(Round::Nearest), Some(0x3c00));
        // Overflow: to infinity when rounding to nearest or away, else the largest finite.
        let big = bits32(1e6);
        assert_eq!(
            convert(
                Conversion {
                    round: Some(Round::Zero),
                    ..plain(f16, F32)
                },
                big
            ),
            Some(0x7bff)
        );
        assert_eq!(
            convert(
                Conversion {
                    round: Some(Round::Up),
                    ..plain(f16, F32)
                },
                big
            ),
            Some(0x7c00)
        );
    }

    /// `.bf16` in every direction (Numba's bfloat16 tests): f32, f64 and integers in, with the
    /// rounding modes, and back out exactly; integers past 2^53 rounded once, not twice.
    #[test]
    fn bf16_conversions_round_from_every_type() {
        let bf16 = Ty {
            kind: Kind::BFloat,
            bytes: 2,
        };
        let (f64_, s64, u8_) = (
            Ty {
                kind: Kind::Float,
                bytes: 8,
            },
            Ty {
                kind: Kind::Signed,
                bytes: 8,
            },
            Ty {
                kind: Kind::Unsigned,
                bytes: 1,
            },
        );
        let to = |from: Ty, mode: Round, a: u64| {
            convert(
                Conversion {
                    round: Some(mode),
                    ..plain(bf16, from)
                },
                a,
            )
            .unwrap()
        };
        assert_eq!(to(F32, Round::Nearest, bits32(1.0)), 0x3f80);
        assert_eq!(
            to(F32, Round::Nearest, bits32(f32::from_bits(0x3f80_8000))),
            0x3f80
        ); // tie: even
        assert_eq!(
            to(F32, Round::Nearest, bits32(f32::from_bits(0x3f81_8000))),
            0x3f82
        ); // tie: even
        assert_eq!(
            to(F32, Round::Up, bits32(f32::from_bits(0x3f80_0001))),
            0x3f81
        );
        assert_eq!(to(f64_, Round::Nearest, 3.0f64.to_bits()), 0x4040);
        assert_eq!(to(f64_, Round::Nearest, f64::NAN.to_bits()), 0x7fff);
        // (2^8 + 1) · 2^55 + 1 is just above the tie between 2^63 + 0 and the next bf16: up, once.
        let v = ((1i64 << 8) + 1) << 54 | 1;
        assert_eq!(to(s64, Round::Nearest, v as u64), 0x5e81);
        assert_eq!(to(s64, Round::Nearest, (-3i64) as u64), 0xc040);
        assert_eq!(to(u8_, Round::Nearest, 200), 0x4348);
        let back = |to_ty: Ty, mode: Option<Round>, bits: u64| {
            convert(
                Conversion {
                    round: mode,
                    int_round: mode.is_some() && to_ty.kind != Kind::Float,
                    ..plain(to_ty, bf16)
                },
                bits,
            )
            .unwrap()
        };
        assert_eq!(f32_of(back(F32, None, 0x4049)), 3.140625);
        assert_eq!(back(s64, Some(Round::Nearest), 0x4049), 3);
        assert_eq!(back(s64, Some(Round::Down), 0xc049) as i64, -4);
    }
}
