//! ferrocuda-std's reproducible math tier and fast instructions inside a kernel (test-kernels'
//! `math_functions`): on the CPU executor it is the host's own functions (whose accuracy
//! gpu-std/tests/math_reproducible.rs measures); on a GPU the reproducible functions give the same
//! bits, and the fast ones stay within the PTX ISA's bounds. The default tier: math_default_kernel.rs.

mod support;

use ferrocuda::{launch, Device, Module};
use ferrocuda_std::math::{self, reproducible};
use rand::Rng;
use test_kernels::MATH_OUTPUTS;

/// The functions of `math_functions`, in its output order; `true` for the accurate ones.
const FUNCTIONS: [(&str, bool); MATH_OUTPUTS] = [
    ("exp", true),
    ("exp2", true),
    ("ln", true),
    ("sqrt", true),
    ("sinpi", true),
    ("cospi", true),
    ("erfc", true),
    ("normal_cdf", true),
    ("fast_exp", false),
    ("fast_exp2", false),
    ("fast_ln", false),
    ("fast_log2", false),
    ("fma", true),
];

/// Special values, thresholds and random inputs over the functions' domains.
fn inputs() -> (Vec<f32>, u64) {
    let (mut rng, seed) = support::rng();
    let mut x = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        -f32::from_bits(1),
        f32::MAX,
        f32::MIN,
        88.722_83,
        88.722_84,
        -87.336_55,
        -103.972_08,
        127.999_99,
        -149.5,
        10.054_195,
        -14.170_185,
        -13.0,
        9.2,
        0.476_936_28,
        -0.674_489_75,
        4_194_305.0,
    ];
    x.extend((0..2000).map(|_| rng.random_range(-20.0f32..20.0)));
    x.extend((0..2000).map(|_| rng.random_range(-110.0f32..110.0)));
    x.extend((0..1000).map(|_| f32::from_bits(rng.random())));
    (x, seed)
}

/// `math_functions` on `module`: `MATH_OUTPUTS` results per input.
fn run(module: &Module, x: &[f32]) -> Vec<f32> {
    let mut out = vec![f32::NAN; MATH_OUTPUTS * x.len()];
    let blocks = x.len().div_ceil(128) as u32;
    launch!(module, test_kernels::math_functions[blocks, 128](x, &mut out)).unwrap();
    out
}

/// The same functions called directly on the host.
fn host(v: f32) -> [f32; MATH_OUTPUTS] {
    let (sin, cos) = reproducible::sincospi(v);
    [
        reproducible::exp(v),
        reproducible::exp2(v),
        reproducible::ln(v),
        reproducible::sqrt(v),
        sin,
        cos,
        reproducible::erfc(v),
        reproducible::normal_cdf(v),
        math::fast_exp(v),
        math::fast_exp2(v),
        math::fast_ln(v),
        math::fast_log2(v),
        math::fma(v, v, v),
    ]
}

fn same_bits(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn math_in_a_kernel_on_the_cpu_is_the_host_math() {
    let cpu = Device::cpu().load(support::test_kernels()).unwrap();
    let (x, seed) = inputs();
    let out = run(&cpu, &x);
    for (i, &v) in x.iter().enumerate() {
        for (j, want) in host(v).into_iter().enumerate() {
            let got = out[MATH_OUTPUTS * i + j];
            assert!(
                same_bits(got, want),
                "{}({v:e}): kernel {got:e}, host {want:e} (seed {seed})",
                FUNCTIONS[j].0
            );
        }
    }
}

/// Whether a fast function's GPU result `got` for `v` is within the PTX ISA's bound (ex2: 2 ULP
/// from the correctly rounded result, plus x·log2(e)'s rounding for fast_exp; lg2: 2^-22
/// absolute in (0.5, 2), 2^-22 relative elsewhere, plus the product with ln 2 for fast_ln);
/// flushed subnormals and special values are compared with the CPU's result.
fn fast_within_bound(name: &str, v: f32, got: f32, cpu: f32) -> bool {
    let v64 = v as f64;
    let (want, relative_bound, absolute_bound) = match name {
        "fast_exp2" => (v64.exp2(), 2.5 * f32::EPSILON as f64 / 2.0, 0.0),
        "fast_exp" => (
            v64.exp(),
            2f64.powf(-21.5) + v64.abs() * 2f64.powf(-23.5),
            0.0,
        ),
        "fast_log2" => (v64.log2(), 2f64.powi(-22), 2f64.powi(-22)),
        _ => (v64.ln(), 2f64.powf(-21.5), 2f64.powi(-22)),
    };
    // `.ftz` flushes subnormal inputs as well as results (lg2.approx.ftz of 1e-45 is -inf), and
    // a result at the edge of f32's range may round either way (exp(88.72284) to inf).
    let flushed_input = v != 0.0 && v.abs() < f32::MIN_POSITIVE;
    let edge = !(want as f32).is_finite() || (want.abs() as f32) < f32::MIN_POSITIVE;
    if !want.is_finite() || want == 0.0 || edge || flushed_input {
        return same_bits(got, cpu);
    }
    if absolute_bound > 0.0 && v > 0.5 && v < 2.0 {
        (got as f64 - want).abs() <= absolute_bound
    } else {
        ((got as f64 - want) / want).abs() <= relative_bound
    }
}

#[test]
fn math_on_the_gpu_equals_the_cpu_bit_for_bit_and_fast_math_keeps_its_bounds() {
    let Some(gpu) = support::gpu_or_skip(
        "math_on_the_gpu_equals_the_cpu_bit_for_bit_and_fast_math_keeps_its_bounds",
    ) else {
        return;
    };
    let gpu = gpu.load(support::test_kernels()).unwrap();
    let (x, seed) = inputs();
    let out = run(&gpu, &x);
    for (i, &v) in x.iter().enumerate() {
        for (j, cpu) in host(v).into_iter().enumerate() {
            let (name, accurate) = FUNCTIONS[j];
            let got = out[MATH_OUTPUTS * i + j];
            let fine = if accurate {
                same_bits(got, cpu)
            } else {
                fast_within_bound(name, v, got, cpu)
            };
            assert!(
                fine,
                "{name}({v:e} = {:#010x}): GPU {got:e}, CPU {cpu:e} (seed {seed})",
                v.to_bits()
            );
        }
    }
}
