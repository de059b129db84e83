//! Math for kernels: f32 in two tiers, f64 in one.
//!
//! `core` has no `exp` or `ln` for `nvptx64` (and LLVM cannot select its `llvm.exp`/`llvm.log`
//! there), so ferrocuda-std writes its own. The functions (`math::exp(x)`, …) are generic over
//! [`DeviceMath`], implemented for `f32` and `f64`; so are the methods (`x.exp()`). For f32:
//!
//! - **The default tier** (this module's `exp`, `exp2`, `ln`, `log2`, `sqrt`, `sin`, `cos`,
//!   `pow`, `erfc`, `normal_cdf`): CUDA's methods and CUDA's accuracy at CUDA's cost. `exp` and `exp2` use the
//!   GPU's special function unit (`ex2.approx`) after CUDA's range reduction; `ln` and `log2` are
//!   polynomials, as CUDA's `logf` is; `erfc` and `normal_cdf` are one branch-free formula for
//!   every input (the square kept exact into a polynomial exponential, two `rcp.approx`, the
//!   quotient corrected from its exact residual); `pow` has its special cases behind one
//!   branch. Where an approximate instruction is involved, results on the GPU and on
//!   the CPU executor can differ in the last bits, each within the bound. **The kernels of
//!   ferrocuda-kernels use this tier**: a kernel is then as accurate as its CUDA C twin, at
//!   about the same cost.
//! - **[`reproducible`]**: the same functions (and `sincospi`) in plain IEEE arithmetic, under
//!   0.75 ULP and **the same bits on the GPU as on the CPU**, at 2-5 times the instructions.
//!   For results that must not depend on where they were computed (tests that compare the GPU
//!   with the CPU bit for bit, reproducible simulations).
//!
//! Error bounds in ULPs from the correctly rounded result (CUDA's measure, CUDA C Programming
//! Guide, "Mathematical Functions"), and SASS instructions of `out[i] = f(x[i])` for sm_90 (minus
//! the harness; `tools/sass-math/compare.py`):
//!
//! | function | bound on the GPU | CUDA's bound | CPU, measured | SASS ours / CUDA's |
//! | --- | --- | --- | --- | --- |
//! | [`exp`] | 3 (`ex2.approx` at the PTX ISA's 2, plus the reduction) | 2 (`expf`: the same method, measured on hardware) | 0.94 | 10 / 10 |
//! | [`exp2`] | 2 (the PTX ISA's bound for `ex2.approx`) | 2 (`exp2f`) | 0.5 | 4 / 4 |
//! | [`ln`] | 1, the CPU's bits (every float checked: 0.92) | 1 (`logf`) | 0.92 | 27 / 26 |
//! | [`log2`] | 1, the CPU's bits (every float checked: 0.96) | 1 (`log2f`) | 0.96 | 30 / 30 |
//! | [`sqrt`] | 0 (`sqrt.rn`) | 0 (`sqrtf`) | 0 | 37 / 36 |
//! | [`erfc`] | 4 (measured 3) | 4 (`erfcf`) | 2.7 | 47 / 47 |
//! | [`normal_cdf`] | 5 (measured 3) | 5 (`normcdff`) | 2.5 | 47 / 64 |
//! | [`sin`], [`cos`] | 2, the CPU's bits (sweeps: 1.49) | 2 (`sinf`, `cosf`) | 1.49 | 117 / 137 (fast path 19-35 / 28-135) |
//! | [`pow`] | 4 (`ex2.approx`, `rcp.approx` at their bounds: 3) | 4 (`powf`) | 0.86 | 93 / 96 |
//!
//! The GPU bounds follow from the PTX ISA's bounds for the approximate instructions and are
//! checked on the CPU with those instructions' errors set to their worst (this crate's unit
//! tests, `model_tests.rs`), and on a GPU by `tests/math_default_kernel.rs`. The single fast
//! instructions ([`fast_exp`], [`fast_exp2`], [`fast_ln`], [`fast_log2`], CUDA's `__expf`
//! family) are here too, for kernels that accept their larger error.
//!
//! **f64** (the same functions with an `f64` argument): plain IEEE arithmetic, no approximate
//! instruction, so **the same bits on the GPU and the CPU executor**, within CUDA's
//! double-precision bounds. `exp` and `exp2` are Cody-Waite reduction and a polynomial (no
//! division, no table); `normal_cdf` carries -x/√2 to 106 bits into a first-order correction of
//! erfc (without it: 1341 ULP at x = -37.4); `ln` and `log2` are one double-double logarithm
//! (atanh series, the quotient by Newton's reciprocal: no division), rounded once, which `pow`
//! takes into `exp`; `sin`, `cos` and `erfc` are the `libm` crate's (musl's algorithms,
//! Payne-Hanek reduction for large sines). Bounds, the maximum measured against mpmath at 300
//! bits (`tests/data/f64_reference.txt`, about 1100 points per function,
//! `gpu-std/tests/math_f64.rs`; the PTX emulator gives the same bits,
//! `tests/math_f64_kernel.rs`), and SASS instructions for sm_90 (static, all paths, and the
//! shortest-longest path; `tools/sass-math/compare.py`):
//!
//! | function | bound | CUDA's bound | measured | SASS ours / CUDA's (path) |
//! | --- | --- | --- | --- | --- |
//! | [`exp`] | 1 | 1 (`exp`) | 0.54 | 75 / 61 (75 / 49-61) |
//! | [`exp2`] | 1 | 1 (`exp2`) | 0.57 | 75 / 62 (75 / 48-62) |
//! | [`ln`] | 1 | 1 (`log`) | 0.50 | 129 / 84 (9-129 / 22-84) |
//! | [`log2`] | 1 | 1 (`log2`) | 0.50 | 150 / 90 (18-143 / 28-90) |
//! | [`sqrt`] | 0 (`sqrt.rn.f64`) | 0 | 0 | 63 / 62 |
//! | [`sin`], [`cos`] | 2 | 2 (`sin`, `cos`) | 0.63, 0.66 | 1859 / 207 (14-57 / 33-51) |
//! | [`pow`] | 2 | 2 (`pow`) | 0.58 | 297 / 250 (27-249 / 37-58) |
//! | [`erfc`] | 4 | 4 (`erfc`) | 2.20 | 1547 / 168 |
//! | [`normal_cdf`] | 5 | 5 (`normcdf`) | 1.93 | 1662 / 188 |
//!
//! The static size of `sin`, `cos` and `erfc` (libm's) is mostly cold code (the Payne-Hanek
//! reduction, the IEEE division's slow path, subnormal branches), inlined into the kernel;
//! their common paths are about CUDA's length.
//!
//! NaN inputs give NaN everywhere. [`DeviceMath`] makes the default tier methods (`x.exp()`,
//! `x.sqrt()`) of `f32` and `f64`, and [`Float`] adds the `f32`-only ones (`x.sinpi()`,
//! `x.fast_exp()`); inside a `#[kernel]` they are ferrocuda-std's on the host too (see
//! [`DeviceMath`]).

pub use crate::float::Float;

pub(crate) mod approx;
#[cfg(not(target_arch = "nvptx64"))]
mod cpu_exp2;
#[doc(hidden)]
pub mod device_call;
pub(crate) mod device_math;
mod double;
mod exp_log;
mod functions;
mod normal;
mod pow;
pub(crate) mod primitives;
pub mod reproducible;
mod trig;

pub use approx::{fast_exp, fast_exp2, fast_ln, fast_log2};
pub use device_math::DeviceMath;
pub use functions::{cos, erfc, exp, exp2, fma, ln, log2, normal_cdf, pow, sin, sin_cos, sqrt};
pub use reproducible::{cospi, sincospi, sinpi};

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod model_tests;
