//! `cvt`: conversions between integers and floats of every width, with PTX's rounding and
//! saturation.

use super::floating::{
    bits32, float_source, ftz, int_source, round_f32, round_f64, round_integral, saturate,
};
use super::integer::{mask, sext};
use crate::float16::{self, Half};
use crate::ir::*;

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
