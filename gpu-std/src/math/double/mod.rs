//! The f64 default tier: the functions behind [`math::exp`](crate::math::exp) and the others for
//! `f64` (reached through [`DeviceMath`](crate::math::DeviceMath)).
//!
//! The GPU has no special function unit for f64 (CUDA's double-precision functions are
//! polynomials too), so every function here is plain IEEE arithmetic: **the same bits on the GPU
//! as on the CPU executor**, within CUDA's double-precision bounds. `exp`, `exp2`,
//! `ln`, `log2` (one double-double logarithm, no division), `normal_cdf` and `pow` (that
//! logarithm into `exp`) are written here; `sin`, `cos` and `erfc` are the `libm` crate's (musl's FreeBSD-derived algorithms, in Rust,
//! `no_std`, which build for nvptx64 as they are); `sqrt` and `fma` are single PTX instructions.

mod exp;
mod ieee;
mod log;
mod normal;
mod pow;

pub(crate) use exp::{exp, exp2};
pub(crate) use ieee::{cos, erfc, sin, sin_cos, sqrt};
pub(crate) use log::{ln, log2};
pub(crate) use normal::normal_cdf;
pub(crate) use pow::pow;
