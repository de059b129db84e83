//! Half precision: [`f16`](struct@f16) (IEEE binary16) and [`bf16`] (bfloat16) as storage types of kernel
//! slices and outputs (`&[f16]`, `Out<f16>`, `Array2<bf16>`...), computed with in `f32`.
//!
//! The types are the `half` crate's (plain data, so host `Vec<f16>`s are launch arguments). Its
//! own conversions work in kernels too, in software; these use the GPU's: PTX `cvt.rn.f16.f32` and
//! `cvt.f32.f16` (one instruction each), and on the CPU an exact software conversion that gives
//! the same bits, NaNs included:
//!
//! - [`f32_to_f16`] rounds to nearest, ties to even; too large is ±infinity, too small a
//!   subnormal or ±0; every NaN becomes `0x7fff`, as on a GPU.
//! - [`f16_to_f32`] is exact; every NaN becomes `0x7fff_ffff`, as on a GPU.
//! - [`f32_to_bf16`] and [`bf16_to_f32`] are shifts with rounding (no `cvt` for bf16 before
//!   sm_80, whose PTX ferrocuda does not build by default), the same code on both.

pub use half::{bf16, f16};

/// The NaN a GPU's `cvt` to f16 gives for any NaN.
pub const F16_NAN_BITS: u16 = 0x7fff;
/// The NaN a GPU's `cvt.f32.f16` gives for any NaN.
pub const F32_NAN_BITS: u32 = 0x7fff_ffff;

/// `x` as the nearest `f16` (ties to even); a NaN is [`F16_NAN_BITS`].
#[inline(always)]
pub fn f32_to_f16(x: f32) -> f16 {
    // The GPU's conversion instruction; the host's software conversion, with the GPU's NaN.
    #[cfg(target_arch = "nvptx64")]
    {
        let bits: u16;
        // SAFETY: a register-to-register conversion.
        unsafe {
            core::arch::asm!(
                "cvt.rn.f16.f32 {h}, {f};",
                h = out(reg16) bits,
                f = in(reg32) x,
                options(pure, nomem, nostack)
            );
        }
        f16::from_bits(bits)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        if x.is_nan() {
            f16::from_bits(F16_NAN_BITS)
        } else {
            f16::from_f32(x)
        }
    }
}

/// `x` as an `f32`, exactly; a NaN is [`F32_NAN_BITS`].
#[inline(always)]
pub fn f16_to_f32(x: f16) -> f32 {
    // As `f32_to_f16`: the GPU's instruction, or software with the GPU's NaN.
    #[cfg(target_arch = "nvptx64")]
    {
        let value: f32;
        // SAFETY: a register-to-register conversion.
        unsafe {
            core::arch::asm!(
                "cvt.f32.f16 {f}, {h};",
                f = out(reg32) value,
                h = in(reg16) x.to_bits(),
                options(pure, nomem, nostack)
            );
        }
        value
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        if x.is_nan() {
            f32::from_bits(F32_NAN_BITS)
        } else {
            x.to_f32()
        }
    }
}

/// `x` as the nearest `bf16` (ties to even); a NaN stays a (quiet) NaN.
#[inline(always)]
pub fn f32_to_bf16(x: f32) -> bf16 {
    bf16::from_f32(x)
}

/// `x` as an `f32`, exactly.
#[inline(always)]
pub fn bf16_to_f32(x: bf16) -> f32 {
    x.to_f32()
}
