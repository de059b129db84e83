//! The arithmetic against native Rust operations and exact references.

use super::*;
use crate::ir::*;

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
        Add, Sub, MulLo, MulHi, Min, Max, Div, Rem, And, Or, Xor, Shl, Shr, AddSat, SubSat, AbsDiff,
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
