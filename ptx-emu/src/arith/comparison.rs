//! `setp` and `testp`: comparisons of integers and floats at every width, packed `.f16x2`/
//! `.bf16x2` pairs included, and float classification.

use super::floating::f32_of;
use super::integer::{mask, sext};
use crate::float16;
use crate::ir::*;

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

/// Runs [`Op::SetpX2`] on a thread's registers (from the block's scheduler: `rare.rs`).
pub(crate) fn setp_pair(regs: &mut [u64], op: &Op) {
    let Op::SetpX2 {
        cmp,
        bfloat,
        ftz,
        d,
        q,
        a,
        b,
        combine,
    } = *op
    else {
        return;
    };
    let get = |s: Src| match s {
        Src::Reg(r) => regs[r as usize],
        Src::Imm(v) => v,
    };
    let c = combine.map(|(op, c, negate)| (op, (get(c) & 1 == 1) != negate));
    let [p, r] = compare_pair(cmp, bfloat, ftz, get(a), get(b), c);
    regs[d as usize] = p as u64;
    regs[q as usize] = r as u64;
}

/// Each 16-bit half of `a` compared with that of `b` (subnormals flushed to zero of their sign
/// with `flush`), low halves first, each combined with `c` (the Boolean operation and the
/// predicate's value).
fn compare_pair(
    cmp: Cmp,
    bfloat: bool,
    flush: bool,
    a: u64,
    b: u64,
    c: Option<(BoolOp, bool)>,
) -> [bool; 2] {
    let (t, exponent) = match bfloat {
        true => (
            Ty {
                kind: Kind::BFloat,
                bytes: 2,
            },
            0x7f80,
        ),
        false => (
            Ty {
                kind: Kind::Float,
                bytes: 2,
            },
            0x7c00,
        ),
    };
    let half = |v: u64, shift: u32| {
        let bits = (v >> shift) & 0xffff;
        match flush && bits & exponent == 0 {
            true => bits & 0x8000,
            false => bits,
        }
    };
    [0, 16].map(|shift| {
        let holds = compare(cmp, t, half(a, shift), half(b, shift));
        match c {
            Some((BoolOp::And, c)) => holds && c,
            Some((BoolOp::Or, c)) => holds || c,
            Some((BoolOp::Xor, c)) => holds != c,
            None => holds,
        }
    })
}
