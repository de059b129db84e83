//! The kernel library as a dependency: `ferrocuda::ops` on the best device (a GPU if there is one,
//! else the CPU executor). `cargo run --release --example library`.

use ferrocuda::ops::{self, Filter, Matmul, MatmulShape, OptionParams};
use ferrocuda::Device;

fn main() -> ferrocuda::Result<()> {
    let choice = Device::best();
    println!("device: {} ({})", choice.device, choice.reason);
    let kernels = choice.device.load(&ferrocuda::KERNELS)?;

    // A 256×256 matrix product: C = A·I is A.
    let n = 256;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 97) as f32).collect();
    let identity: Vec<f32> = (0..n * n)
        .map(|i| if i / n == i % n { 1.0 } else { 0.0 })
        .collect();
    let mut c = vec![0.0f32; n * n];
    let shape = MatmulShape::new(n, n, n);
    ops::matmul(
        &kernels,
        &a,
        &identity,
        &mut c,
        shape,
        Matmul::RegisterBlocked,
    )?;
    println!("matmul:     A·I == A: {}", c == a);

    // Statistics of a million values, and the same values grouped by i % 10.
    let values: Vec<f32> = (0..1_000_000).map(|i| (i % 1000) as f32).collect();
    let stats = ops::statistics(&kernels, &values)?;
    println!(
        "statistics: mean {:.1}, variance {:.1}, min {}, max {}",
        stats.mean, stats.variance, stats.min, stats.max
    );
    let keys: Vec<u32> = (0..values.len() as u32).map(|i| i % 10).collect();
    let groups = ops::group_by(&kernels, &keys, &values, 10)?;
    println!("group-by:   counts {:?}", groups.count.to_vec()?);

    // A 5×5 Gaussian blur of a small grey gradient.
    let (width, height) = (64, 48);
    let image: Vec<f32> = (0..width * height).map(|i| (i % width) as f32).collect();
    let mut blurred = vec![0.0f32; image.len()];
    ops::convolve_2d(
        &kernels,
        &image,
        &mut blurred,
        width,
        height,
        1,
        &Filter::gaussian_5x5(),
    )?;
    println!(
        "blur:       pixel (10, 10) {} -> {}",
        image[10 * width + 10],
        blurred[10 * width + 10]
    );

    // Black-Scholes for one option, and the same option by Monte Carlo.
    let (mut call, mut put) = ([0.0f32], [0.0f32]);
    ops::black_scholes(
        &kernels,
        &[100.0],
        &[100.0],
        &[1.0],
        0.05,
        0.2,
        &mut call,
        &mut put,
    )?;
    let params = OptionParams {
        spot: 100.0,
        strike: 100.0,
        years: 1.0,
        rate: 0.05,
        volatility: 0.2,
    };
    let mc = ops::european_option_monte_carlo(&kernels, &params, 1 << 20, 7)?;
    println!(
        "option:     Black-Scholes call {:.4}, Monte Carlo {:.4} ± {:.4}",
        call[0], mc.call.value, mc.call.std_error
    );
    let pi = ops::monte_carlo_pi(&kernels, 1 << 22, 7)?;
    println!("π:          {:.5} ± {:.5}", pi.value, pi.std_error);
    Ok(())
}
