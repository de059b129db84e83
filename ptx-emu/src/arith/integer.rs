//! Integer arithmetic at a register's width: PTX's `add sub mul div rem` and the rest of the
//! integer opcodes (`mul.wide`, `mul24`, funnel shifts, `prmt`, `bfind`, `bfe`, `bfi`).

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
