//! The GPU's approximate instructions (PTX `ex2.approx`, `lg2.approx`, `rcp.approx`) and
//! saturating fma, with their CPU equivalents.
//!
//! On the GPU each is one inline-PTX instruction (the special function unit, a few cycles). On
//! the CPU, where no such unit exists, each is computed correctly rounded (through f64; 2^x by
//! `cpu_exp2`, which gives libm's `exp2` rounded to f32 for every f32 and vectorises), which is
//! within the PTX ISA's bound for the instruction: code built on them (the default tier's `exp`,
//! `erfc`, `normal_cdf`) then runs the same reduction and correction steps on both targets and
//! stays within the bound it states for the GPU.
//!
//! The PTX ISA's bounds: `ex2.approx.f32` at most 2 ULP from the correctly rounded result over
//! the whole range; `lg2.approx.f32` absolute error at most 2^-22 in (0.5, 2), relative 2^-22
//! elsewhere; `rcp.approx.f32` at most 1 ULP. Unit tests of this crate replace the CPU results
//! by ones that far off (see `model`) to check that the bounds stated for the GPU hold.

#[cfg(not(target_arch = "nvptx64"))]
use super::reproducible::exp_ln::ln;

const LOG2_E: f32 = core::f32::consts::LOG2_E;
const LN2_F: f32 = core::f32::consts::LN_2;

/// Runs one PTX instruction `$op {out}, {in}` on f32 registers.
#[cfg(target_arch = "nvptx64")]
macro_rules! ptx_unary {
    ($op:literal, $x:expr) => {{
        let y: f32;
        // SAFETY: a pure arithmetic instruction on registers: no memory, no side effects, defined
        // for every input (NaN and infinities included).
        unsafe {
            core::arch::asm!(concat!($op, " {0}, {1};"), out(reg32) y, in(reg32) $x,
                options(pure, nomem, nostack));
        }
        y
    }};
}

/// Flushes subnormals to zero (keeping the sign), as the GPU's `.ftz` instructions do.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
fn flush_subnormal(x: f32) -> f32 {
    if x.abs() < f32::MIN_POSITIVE {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

/// The unit tests' model of the approximate instructions' error: each CPU result moves this
/// many floats up (positive) or down, to the edge of the PTX ISA's bound, so that a sweep
/// checks the stated GPU bounds with the hardware's worst case instead of the CPU's exact
/// results. Test builds only; per thread.
#[cfg(all(test, not(target_arch = "nvptx64")))]
pub(crate) mod model {
    use core::cell::Cell;

    std::thread_local! {
        /// ULPs added to `ex2` results (the PTX ISA allows ±2) and to `rcp` results (±1).
        pub(crate) static ERROR: Cell<(i32, i32)> = const { Cell::new((0, 0)) };
    }

    /// `y` moved `ulps` floats away from zero (towards it if negative); finite non-zero
    /// results only, never across zero or to infinity.
    pub(crate) fn perturb(y: f32, ulps: i32) -> f32 {
        if ulps == 0 || !y.is_finite() || y == 0.0 {
            return y;
        }
        let moved = f32::from_bits((y.to_bits() as i32).wrapping_add(ulps) as u32);
        if moved.is_finite() && moved != 0.0 && moved.is_sign_negative() == y.is_sign_negative() {
            moved
        } else {
            y
        }
    }

    pub(crate) fn ex2(y: f32) -> f32 {
        perturb(y, ERROR.with(|e| e.get().0))
    }

    pub(crate) fn rcp(y: f32) -> f32 {
        perturb(y, ERROR.with(|e| e.get().1))
    }
}

#[cfg(not(all(test, not(target_arch = "nvptx64"))))]
#[allow(dead_code)]
mod model {
    #[inline(always)]
    pub(crate) fn ex2(y: f32) -> f32 {
        y
    }
    #[inline(always)]
    pub(crate) fn rcp(y: f32) -> f32 {
        y
    }
}

/// `ex2.approx.f32`: 2^x within 2 ULP of the correctly rounded result, subnormal results
/// included (PTX ISA). CPU: correctly rounded.
#[inline(always)]
pub(crate) fn ex2(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        ptx_unary!("ex2.approx.f32", x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        model::ex2(super::cpu_exp2::exp2_rounded(x))
    }
}

/// `ex2.approx.ftz.f32`: as [`ex2`], with subnormal inputs and results flushed to zero.
#[inline(always)]
pub(crate) fn ex2_ftz(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        ptx_unary!("ex2.approx.ftz.f32", x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        flush_subnormal(model::ex2(super::cpu_exp2::exp2_rounded(flush_subnormal(
            x,
        ))))
    }
}

/// `rcp.approx.ftz.f32`: 1/x within 1 ULP (PTX ISA), subnormals flushed. CPU: correctly
/// rounded.
#[inline(always)]
pub(crate) fn rcp_ftz(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        ptx_unary!("rcp.approx.ftz.f32", x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        flush_subnormal(model::rcp(1.0 / flush_subnormal(x)))
    }
}

/// `fma.rn.sat.f32`: `a·b + c` rounded once, then clamped to [0, 1]; NaN gives +0 (PTX ISA).
#[inline(always)]
pub(crate) fn fma_sat(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let y: f32;
        // SAFETY: a pure arithmetic instruction on registers, defined for every input.
        unsafe {
            core::arch::asm!("fma.rn.sat.f32 {0}, {1}, {2}, {3};", out(reg32) y, in(reg32) a,
                in(reg32) b, in(reg32) c, options(pure, nomem, nostack));
        }
        y
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let y = a.mul_add(b, c);
        if y.is_nan() {
            0.0
        } else {
            y.clamp(0.0, 1.0)
        }
    }
}

/// Fast 2^x: PTX `ex2.approx.ftz.f32` on the GPU, at most 2 ULP from the correctly rounded
/// result over the whole range (PTX ISA). Subnormal results flush to +0 (below 2^-126, i.e.
/// x < -126), subnormal inputs count as 0. On the CPU: correctly rounded, with the same
/// flushing.
#[inline(always)]
pub fn fast_exp2(x: f32) -> f32 {
    ex2_ftz(x)
}

/// Fast log2(x): PTX `lg2.approx.ftz.f32` on the GPU, with absolute error at most 2^-22 for x
/// in (0.5, 2) and relative error at most 2^-22 elsewhere (PTX ISA). Subnormal inputs count as
/// ±0 and give -inf. On the CPU: `ln(x) · log2(e)` with the same flushing (measured: absolute
/// error up to 2^-23.4 in (0.5, 2), relative error up to 2^-23 elsewhere).
#[inline(always)]
pub fn fast_log2(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        ptx_unary!("lg2.approx.ftz.f32", x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        ln(flush_subnormal(x)) * LOG2_E
    }
}

/// Fast e^x = [`fast_exp2`]`(x · log2(e))`: relative error at most 2^-21.5 + |x|·2^-23.5 (the
/// 2 ULP of `ex2.approx` plus the rounding of x·log2(e), which grows with |x| as in CUDA's
/// `__expf`). Results below 2^-126 (x < -87.34) flush to +0; x·log2(e) rounds to 128, and the
/// result to inf, from x = 88.72283. For CUDA's accuracy at nearly the same cost, use
/// [`exp`](super::exp).
#[inline(always)]
pub fn fast_exp(x: f32) -> f32 {
    fast_exp2(x * LOG2_E)
}

/// Fast ln(x) = [`fast_log2`]`(x) · ln 2`: absolute error at most 2^-22 for x in (0.5, 2),
/// relative error at most 2^-21.5 elsewhere. Subnormal inputs give -inf. On the CPU
/// (measured): absolute error up to 2^-24.3, relative error up to 2^-22.9.
#[inline(always)]
pub fn fast_ln(x: f32) -> f32 {
    fast_log2(x) * LN2_F
}
