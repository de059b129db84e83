//! ferrocuda-std's f64 math inside a kernel (test-kernels' `f64_math_functions`): on the CPU
//! executor and on a GPU (or the PTX emulator) the same bits as the host functions, which are
//! plain IEEE arithmetic (gpu-std/tests/math_f64.rs measures their accuracy), and on the GPU each
//! function within CUDA's double-precision bound against the mpmath reference set.

#[path = "../gpu-std/tests/f64_reference/mod.rs"]
mod f64_reference;
mod support;

use f64_reference::{points, Point};
use ferrocuda::{launch, Device, Module};
use test_kernels::math_f64::{f64_math_results as host, F64_MATH_OUTPUTS};

/// The reference set's name, its CUDA bound and the output it checks, for each output of
/// `f64_math_functions` that has reference points (`sqrt` is checked against std's, exact).
const CHECKED: [(&str, f64, usize); 10] = [
    ("exp", 1.0, 0),
    ("exp2", 1.0, 1),
    ("ln", 1.0, 2),
    ("log2", 1.0, 3),
    ("sin", 2.0, 5),
    ("cos", 2.0, 6),
    ("pow", 2.0, 7),
    ("erfc", 4.0, 8),
    ("normal_cdf", 5.0, 9),
    ("cos", 2.0, 10), // sin_cos(x).1
];

/// Every `stride`-th reference point of every function, with the function's name (each kernel
/// thread computes all outputs for its point, so one function's edge cases run through the
/// others too).
fn all_points(stride: usize) -> Vec<(&'static str, Point)> {
    let names = [
        "exp",
        "exp2",
        "ln",
        "log2",
        "sin",
        "cos",
        "pow",
        "erfc",
        "normal_cdf",
    ];
    names
        .iter()
        .flat_map(|&name| {
            points(name)
                .into_iter()
                .step_by(stride)
                .map(move |p| (name, p))
        })
        .collect()
}

fn run(module: &Module, p: &[(&str, Point)]) -> Vec<f64> {
    let (x, y): (Vec<f64>, Vec<f64>) = p.iter().map(|(_, p)| (p.x, p.y)).unzip();
    let mut out = vec![f64::NAN; F64_MATH_OUTPUTS * x.len()];
    let blocks = x.len().div_ceil(128) as u32;
    launch!(module, test_kernels::math_f64::f64_math_functions[blocks, 128](&x, &y, &mut out))
        .unwrap();
    out
}

fn same_bits(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Runs the kernel on `module` and checks every output against the host's bits; on a GPU,
/// each function's points against their bounds too.
fn check(module: &Module, stride: usize, bounds: bool) {
    let p = all_points(stride);
    let out = run(module, &p);
    for (i, (_, point)) in p.iter().enumerate() {
        for (j, want) in host(point.x, point.y).into_iter().enumerate() {
            let got = out[F64_MATH_OUTPUTS * i + j];
            assert!(
                same_bits(got, want),
                "output {j} at x = {:e}, y = {:e}: kernel {got:e}, host {want:e}",
                point.x,
                point.y
            );
        }
    }
    if !bounds {
        return;
    }
    for (name, bound, j) in CHECKED {
        let mut worst = (0.0f64, 0.0f64);
        for (i, (set, point)) in p.iter().enumerate() {
            if *set == name {
                let error = point.ulp_error(out[F64_MATH_OUTPUTS * i + j]);
                if error > worst.0 {
                    worst = (error, point.x);
                }
            }
        }
        eprintln!(
            "math::{name}::<f64> on the GPU: max {:.3} ULP (bound {bound}) at x = {:e}",
            worst.0, worst.1
        );
        assert!(
            worst.0 <= bound,
            "{name}: {} ULP > {bound} at x = {:e}",
            worst.0,
            worst.1
        );
    }
}

#[test]
fn f64_math_in_a_kernel_on_the_cpu_is_the_host_math() {
    let cpu = Device::cpu().load(support::test_kernels()).unwrap();
    check(&cpu, 7, false);
}

#[test]
fn f64_math_on_the_gpu_has_the_cpu_s_bits_and_cuda_s_bounds() {
    let Some(gpu) =
        support::gpu_or_skip("f64_math_on_the_gpu_has_the_cpu_s_bits_and_cuda_s_bounds")
    else {
        return;
    };
    let stride = support::size_for(&gpu, 1, 2);
    let gpu = gpu.load(support::test_kernels()).unwrap();
    check(&gpu, stride, true);
}
