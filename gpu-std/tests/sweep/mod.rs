//! The ULP sweeps shared by the math tests (the integration tests `math_reproducible.rs` and
//! `math_default.rs`, and the unit tests of the approximate instructions' model in
//! `src/math/model_tests.rs`): f64 references, evenly strided and random inputs, the worst error
//! and where.
#![allow(dead_code)]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::format;
use std::io::Write;
use std::vec::Vec;

/// Inputs per strided sweep.
pub const SWEEP: u64 = 4_000_000;
/// Random inputs per function.
pub const RANDOM: usize = 1_000_000;

/// Says something where the person running the tests sees it (libtest captures `println!`).
pub fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// The error of `got` in units of the last place of the f32 nearest to `want` (the ULP of
/// `want`'s binade, 2^-149 for subnormals), 0 when both are the same infinity or NaN. A `want`
/// beyond the largest f32 counts as inf once it rounds to inf.
pub fn ulp_error(got: f32, want: f64) -> f64 {
    if want.is_nan() || got.is_nan() {
        return if want.is_nan() && got.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let want_rounded = want as f32;
    if want_rounded.is_infinite() || got.is_infinite() {
        return if got == want_rounded {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let exponent = ((want.abs().to_bits() >> 52) as i32 - 1023).max(-126);
    let ulp = 2f64.powi(exponent - 23);
    (got as f64 - want).abs() / ulp
}

/// The f32 inputs from `lo` to `hi` (same sign, `|lo| <= |hi|`), `count` of them evenly spaced
/// in bit patterns: every f32 if there are fewer.
pub fn strided(lo: f32, hi: f32, count: u64) -> impl Iterator<Item = f32> {
    let (a, b) = (lo.to_bits() as u64, hi.to_bits() as u64);
    let (a, b) = (a.min(b), a.max(b));
    let step = ((b - a) / count).max(1);
    (a..=b)
        .step_by(step as usize)
        .chain([b])
        .map(|bits| f32::from_bits(bits as u32))
}

/// The worst input of a sweep: largest error and where.
#[derive(Clone, Copy, Debug)]
pub struct Worst {
    pub error: f64,
    pub input: f32,
    pub got: f32,
    pub want: f64,
    pub count: u64,
}

impl Worst {
    pub fn new() -> Self {
        Worst {
            error: 0.0,
            input: 0.0,
            got: 0.0,
            want: 0.0,
            count: 0,
        }
    }
    pub fn add(&mut self, input: f32, got: f32, want: f64, error: f64) {
        self.count += 1;
        if error > self.error || error.is_nan() {
            *self = Worst {
                error,
                input,
                got,
                want,
                count: self.count,
            };
        }
    }
    pub fn merge(mut self, other: Worst) -> Worst {
        let count = self.count + other.count;
        if other.error > self.error {
            self = other;
        }
        self.count = count;
        self
    }
}

/// The largest `error(x)` over `inputs`, evaluated on all cores.
pub fn worst_of(inputs: Vec<f32>, error: impl Fn(f32) -> (f32, f64, f64) + Sync) -> Worst {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = inputs.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = inputs
            .chunks(chunk)
            .map(|part| {
                let error = &error;
                scope.spawn(move || {
                    let mut worst = Worst::new();
                    for &x in part {
                        let (got, want, e) = error(x);
                        worst.add(x, got, want, e);
                    }
                    worst
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .fold(Worst::new(), Worst::merge)
    })
}

/// Every input a function is checked on: strided sweeps of the given ranges (both signs where
/// asked), random inputs from them, and `extra` (thresholds, special values).
pub fn inputs(ranges: &[(f32, f32)], extra: &[f32], rng: &mut StdRng) -> Vec<f32> {
    let per_range = SWEEP / ranges.len() as u64;
    let mut all: Vec<f32> = ranges
        .iter()
        .flat_map(|&(lo, hi)| strided(lo, hi, per_range))
        .collect();
    for _ in 0..RANDOM {
        let (lo, hi) = ranges[rng.random_range(0..ranges.len())];
        let (a, b) = (
            lo.to_bits().min(hi.to_bits()),
            lo.to_bits().max(hi.to_bits()),
        );
        all.push(f32::from_bits(rng.random_range(a..=b)));
    }
    all.extend_from_slice(extra);
    // Each extra value's neighbours, 4 ULPs either way.
    for &x in extra {
        if x.is_finite() && x != 0.0 {
            for d in 1..=4u32 {
                // Same sign only: from the smallest subnormal, downwards stops at 0.
                let bits = x.to_bits();
                if bits & 0x7fff_ffff > d {
                    all.push(f32::from_bits(bits - d));
                }
                all.push(f32::from_bits(bits + d));
            }
        }
    }
    all
}

/// Measures `f` against `reference` in ULPs over `ranges` (+ `extra`), prints the result and
/// asserts it is at most `bound`.
pub fn check_ulp(
    name: &str,
    f: impl Fn(f32) -> f32 + Sync,
    reference: impl Fn(f64) -> f64 + Sync,
    ranges: &[(f32, f32)],
    extra: &[f32],
    bound: f64,
) {
    let seed: u64 = rand::rng().random();
    let mut rng = StdRng::seed_from_u64(seed);
    let worst = worst_of(inputs(ranges, extra, &mut rng), |x| {
        let (got, want) = (f(x), reference(x as f64));
        (got, want, ulp_error(got, want))
    });
    say(&format!(
        "{name}: max error {:.3} ULP over {} inputs (worst: x = {:e} [{:#010x}], got {:e}, want {:e}; seed {seed})",
        worst.error, worst.count, worst.input, worst.input.to_bits(), worst.got, worst.want
    ));
    assert!(
        worst.error <= bound,
        "{name}: {:.3} ULP > {bound} at x = {:e} ({:#010x}): got {:e}, want {:e} (seed {seed})",
        worst.error,
        worst.input,
        worst.input.to_bits(),
        worst.got,
        worst.want
    );
}

pub const MIN_SUB: f32 = f32::from_bits(1);
pub const MAX_SUB: f32 = f32::from_bits(0x007f_ffff);
pub const TINY: f32 = f32::MIN_POSITIVE;

/// Asserts `got` and `want` are the same f32, sign of zero and NaN-ness included.
#[track_caller]
pub fn same(got: f32, want: f32, what: &str) {
    assert!(
        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
        "{what}: got {got:e} ({:#010x}), want {want:e} ({:#010x})",
        got.to_bits(),
        want.to_bits()
    );
}

pub fn normal_cdf_f64(x: f64) -> f64 {
    0.5 * libm::erfc(-x / std::f64::consts::SQRT_2)
}

/// The relative error of `got` against `want` (0 for equal values, inf/NaN included).
pub fn relative(got: f32, want: f64) -> f64 {
    if got as f64 == want || (got.is_nan() && want.is_nan()) {
        0.0
    } else {
        ((got as f64 - want) / want).abs()
    }
}

/// CUDA's measure of a math function's error: how many floats `got` is from the correctly
/// rounded `want` (0 when both are the same infinity or NaN).
pub fn floats_from_rounded(got: f32, want: f64) -> f64 {
    let rounded = want as f32;
    if got.is_nan() || rounded.is_nan() {
        return if got.is_nan() && rounded.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    // Bits as a monotone integer line (negative floats mirrored below zero).
    let line = |x: f32| {
        let b = x.to_bits() as i64;
        if b & 0x8000_0000 != 0 {
            -(b & 0x7fff_ffff)
        } else {
            b
        }
    };
    (line(got) - line(rounded)).abs() as f64
}

/// e^x's thresholds: it overflows above ln(MAX) = 88.72284, is subnormal below -87.33655 and
/// rounds to 0 below -103.97208; plus the reduction's edges (±ln2/2) and tiny inputs.
pub const EXP_EXTRA: [f32; 14] = [
    88.722_84,
    88.722_83,
    -87.336_55,
    -103.972_08,
    -103.972_07,
    -103.28,
    0.346_573_6,
    -0.346_573_6,
    1.0,
    -1.0,
    MIN_SUB,
    -MIN_SUB,
    MAX_SUB,
    TINY,
];

/// e^x's special values, for either tier's `exp`.
pub fn exp_specials(exp: fn(f32) -> f32) {
    same(exp(0.0), 1.0, "exp(0)");
    same(exp(-0.0), 1.0, "exp(-0)");
    same(exp(f32::INFINITY), f32::INFINITY, "exp(inf)");
    same(exp(f32::NEG_INFINITY), 0.0, "exp(-inf)");
    same(exp(f32::NAN), f32::NAN, "exp(NaN)");
    same(exp(f32::MAX), f32::INFINITY, "exp(MAX)");
    same(exp(f32::MIN), 0.0, "exp(MIN)");
    assert!(exp(88.722_83).is_finite());
    assert!(exp(-103.0) > 0.0 && exp(-103.0) < TINY, "subnormal result");
}
