//! ferrocuda-std's default math tier inside a kernel (test-kernels' `default_math_functions`): on
//! the CPU executor the same bits as the host functions (whose CPU accuracy
//! gpu-std/tests/math_default.rs measures); on a GPU (or the PTX emulator) a sweep over the f32
//! line against f64 references, each function within the bound it states for the GPU, counted as
//! CUDA counts (floats from the correctly rounded result), and `ln`, `log2`, `sqrt`, `sin`, `cos`
//! (no approximate instruction) bit-identical to the CPU.

mod support;
#[path = "../gpu-std/tests/sweep/mod.rs"]
mod sweep;

use ferrocuda::{launch, Device, Module};
use sweep::{floats_from_rounded, normal_cdf_f64};
use test_kernels::{default_math_results as host, DEFAULT_MATH_OUTPUTS};

/// name, f64 reference, the GPU bound (floats from the correctly rounded result), whether the
/// GPU must give the CPU's bits; in `default_math_functions`' output order.
type Reference = fn(f64) -> f64;
const FUNCTIONS: [(&str, Reference, f64, bool); DEFAULT_MATH_OUTPUTS] = [
    ("exp", f64::exp, 3.0, false),
    ("exp2", f64::exp2, 2.0, false),
    ("ln", f64::ln, 1.0, true),
    ("log2", f64::log2, 1.0, true),
    ("sqrt", f64::sqrt, 0.0, true),
    ("erfc", libm::erfc, 4.0, false),
    ("normal_cdf", normal_cdf_f64, 5.0, false),
    ("sin", f64::sin, 2.0, true),
    ("cos", f64::cos, 2.0, true),
    ("pow(_, 0.75)", pow_three_quarters, 4.0, false),
];

fn pow_three_quarters(x: f64) -> f64 {
    x.powf(0.75)
}

/// Every `stride`-th f32 bit pattern of both signs (finite and not), plus random ones.
fn inputs(stride: u32) -> (Vec<f32>, u64) {
    let (mut rng, seed) = support::rng();
    let mut x: Vec<f32> = (0..=u32::MAX / stride)
        .map(|i| f32::from_bits(i * stride))
        .collect();
    x.extend((0..100_000).map(|_| f32::from_bits(rand::Rng::random(&mut rng))));
    x.extend([
        0.0,
        -0.0,
        1.0,
        88.722_84,
        -103.972_08,
        10.054_195,
        -14.170_185,
    ]);
    (x, seed)
}

fn run(module: &Module, x: &[f32]) -> Vec<f32> {
    let mut out = vec![f32::NAN; DEFAULT_MATH_OUTPUTS * x.len()];
    let blocks = x.len().div_ceil(256) as u32;
    launch!(module, test_kernels::default_math_functions[blocks, 256](x, &mut out)).unwrap();
    out
}

fn same_bits(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn the_default_tier_in_a_kernel_on_the_cpu_is_the_host_math() {
    let cpu = Device::cpu().load(support::test_kernels()).unwrap();
    let (x, seed) = inputs(1 << 20);
    let out = run(&cpu, &x);
    for (i, &v) in x.iter().enumerate() {
        for (j, want) in host(v).into_iter().enumerate() {
            let got = out[DEFAULT_MATH_OUTPUTS * i + j];
            assert!(
                same_bits(got, want),
                "{}({v:e}): kernel {got:e}, host {want:e} (seed {seed})",
                FUNCTIONS[j].0
            );
        }
    }
}

#[test]
fn the_default_tier_on_the_gpu_keeps_its_stated_bounds() {
    let Some(gpu) = support::gpu_or_skip("the_default_tier_on_the_gpu_keeps_its_stated_bounds")
    else {
        return;
    };
    let gpu = gpu.load(support::test_kernels()).unwrap();
    // About 4 million inputs: every 1024th f32.
    let (x, seed) = inputs(1 << 10);
    let out = run(&gpu, &x);
    for (j, &(name, reference, bound, cpu_bits)) in FUNCTIONS.iter().enumerate() {
        let mut worst = (0.0f64, 0.0f32);
        for (i, &v) in x.iter().enumerate() {
            let got = out[DEFAULT_MATH_OUTPUTS * i + j];
            let error = floats_from_rounded(got, reference(v as f64));
            if error > worst.0 {
                worst = (error, v);
            }
            if cpu_bits {
                let cpu = host(v)[j];
                assert!(
                    same_bits(got, cpu),
                    "{name}({v:e}): GPU {got:e}, CPU {cpu:e}"
                );
            }
        }
        eprintln!(
            "math::{name} on the GPU: max {} ULP from the correctly rounded result (bound {bound}) at x = {:e}",
            worst.0, worst.1
        );
        assert!(
            worst.0 <= bound,
            "math::{name} on the GPU: {} ULP > {bound} at x = {:e} (seed {seed})",
            worst.0,
            worst.1
        );
    }
}
