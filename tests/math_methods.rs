//! Method syntax in kernels for both float widths (test-kernels' `routed_math_methods`):
//! `x.exp()`, `x.powf(y)`, … on `f32` and `f64` give, on the CPU executor, exactly the bits of
//! ferrocuda-std's functions (`math::exp(x)`), not std's inherent methods, which Rust would
//! otherwise prefer on the host; on a GPU (or the PTX emulator) the same functions run.

mod support;

use ferrocuda::{launch, Device, Module};
use test_kernels::math_methods::{routed_reference, ROUTED_OUTPUTS};

/// Names of the outputs, for messages.
const NAMES: [&str; ROUTED_OUTPUTS] = [
    "exp", "exp2", "ln", "log2", "sqrt", "mul_add", "sin", "cos", "powf", "sin_cos", "(&x).exp",
];

/// Random inputs where std's and ferrocuda-std's exp, ln, sin, … differ in some last bits.
fn inputs() -> (Vec<f32>, Vec<f64>, u64) {
    let (mut rng, seed) = support::rng();
    let x64: Vec<f64> = (0..2048)
        .map(|_| rand::Rng::random_range(&mut rng, 0.01..40.0))
        .collect();
    (x64.iter().map(|&v| v as f32).collect(), x64, seed)
}

fn run(module: &Module, x32: &[f32], x64: &[f64]) -> (Vec<f32>, Vec<f64>) {
    let mut out32 = vec![f32::NAN; ROUTED_OUTPUTS * x32.len()];
    let mut out64 = vec![f64::NAN; ROUTED_OUTPUTS * x64.len()];
    let blocks = x32.len().div_ceil(256) as u32;
    launch!(
        module,
        test_kernels::math_methods::routed_math_methods[blocks, 256](x32, x64, &mut out32, &mut out64)
    )
    .unwrap();
    (out32, out64)
}

/// Runs the kernel on `module` and compares each output with the functions': f64 to the bit,
/// f32 within `f32_ulps(output)` floats.
fn compare(module: &Module, f32_ulps: fn(usize) -> i64) -> (Vec<f32>, Vec<f64>) {
    let (x32, x64, seed) = inputs();
    let (out32, out64) = run(module, &x32, &x64);
    for i in 0..x32.len() {
        let (want32, want64) = (
            routed_reference(x32[i], 0.75),
            routed_reference(x64[i], 0.75),
        );
        for j in 0..ROUTED_OUTPUTS {
            let (got32, got64) = (out32[ROUTED_OUTPUTS * i + j], out64[ROUTED_OUTPUTS * i + j]);
            assert_eq!(
                got64.to_bits(),
                want64[j].to_bits(),
                "{}({}) f64 (seed {seed})",
                NAMES[j],
                x64[i]
            );
            let ulps = (got32.to_bits() as i64 - want32[j].to_bits() as i64).abs();
            assert!(
                ulps <= f32_ulps(j),
                "{}({}) f32: kernel {got32:e}, function {:e} (seed {seed})",
                NAMES[j],
                x32[i],
                want32[j]
            );
        }
    }
    (x32, x64)
}

#[test]
fn methods_in_a_kernel_on_the_cpu_are_ferrocuda_std_s_functions_not_std_s() {
    let cpu = Device::cpu().load(support::test_kernels()).unwrap();
    let (x32, x64) = compare(&cpu, |_| 0);
    // The check can tell the two apart: std's methods differ from ours on some of these inputs.
    let std_differs = x64.iter().any(|&v| v.exp() != ferrocuda_std::math::exp(v))
        && x32.iter().any(|&v| v.exp() != ferrocuda_std::math::exp(v));
    assert!(
        std_differs,
        "std's exp and ours agree on every input: the test proves nothing"
    );
}

#[test]
fn methods_in_a_kernel_on_the_gpu_are_the_same_functions() {
    let Some(gpu) = support::gpu_or_skip("methods_in_a_kernel_on_the_gpu_are_the_same_functions")
    else {
        return;
    };
    let gpu = gpu.load(support::test_kernels()).unwrap();
    // f64 is plain IEEE arithmetic everywhere: the CPU's bits. f32 exp, exp2 and powf use
    // `ex2.approx` on the GPU: within 4 ULP of the CPU's; the others are the CPU's bits.
    compare(&gpu, |j| if matches!(j, 0 | 1 | 8 | 10) { 4 } else { 0 });
}
