//! The arithmetic of PTX instructions on register bits: integers at their width, floats with
//! PTX's rounding modes, flush-to-zero, conversions with saturation, and the `.approx`
//! functions (computed in f64 and rounded once: well inside the PTX ISA's stated error).
//!
//! One file per kind of operation: [`integer`], [`floating`] (what the others build on),
//! [`comparison`] (`setp`, `testp`) and [`conversion`] (`cvt`). The 16-bit floats
//! (`float16.rs`) sit between `floating` and the two that dispatch to them.

mod comparison;
mod conversion;
mod floating;
mod integer;
#[cfg(test)]
mod tests;

pub(crate) use comparison::{compare, float_test, setp_pair};
pub(crate) use conversion::convert;
pub(crate) use floating::{
    bits32, f32_of, float, float_source, float_unary, fma, ftz, int_source, min_max,
    round_integral, saturate, saturate_if, two_sum,
};
pub(crate) use integer::{
    bfe, bfi, bfind, funnel_shift, int, int_unary, mask, mul24, mul_wide, permute, sext,
};
